"""Checkpoints a job keeps across its attempts: saved atomically, the newest complete one loaded.

    from myapp.checkpoint import load_latest, save
    found = load_latest()                        # None on a first attempt (or with checkpointing off)
    if found:
        state = torch.load(found.path); start = found.step
    ...
    save(epoch, lambda f: torch.save(state, f), unit="epoch")   # after each epoch, by one replica

The folder is ``MYAPP_CHECKPOINT_DIR`` (the task's, kept across attempts: docs/checkpoints.md); without
it (checkpointing off, or a run outside the platform) ``save`` does nothing and ``load_latest`` finds
nothing. A checkpoint is ``ckpt-<step>.bin`` and its manifest ``ckpt-<step>.json`` (step, unit, size,
sha256, when): the data is written to a temporary file, fsynced and renamed, then the manifest the same
way, so a job killed while saving leaves a temporary file or data without a manifest, and
``load_latest`` never returns it: it returns the newest checkpoint whose manifest is whole and whose data
has the manifest's size and digest. The platform reads the manifests (``latest_manifest``) to say where
a stopped job resumes and to count what a preemption loses. Standard library only: jobs import it.

The platform stops a job with SIGTERM, then SIGKILL after the template's grace period. ``Stop`` turns the
SIGTERM into a flag the training loop reads between steps, so the job ends the step it is in, saves the last
consistent state and exits with ``STOPPED`` instead of dying mid-step and losing what it had not saved:

    stop = Stop()                                # in the main thread, before training
    for epoch in ...:
        for batch in ...:
            if stop.requested: break             # then save what is whole and sys.exit(STOPPED)

Ranks stop together: ``stop.agreed(any_rank)`` asks every rank at the same step through the framework's own
all-reduce of the flag (``any_rank``: pytorch-ddp's ``dist.all_reduce`` with MAX, horovod's ``hvd.allreduce``,
xgboost's ``collective.allreduce``), so one stopped rank stops all at one step instead of leaving the others
waiting in the next step's collective for a rank that left.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import signal
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

ENV = "MYAPP_CHECKPOINT_DIR"
FORMAT = "myapp-checkpoint/v1"
PREFIX = "ckpt-"
TEMP_PREFIX = ".tmp-"
NAME = re.compile(r"ckpt-([0-9]{1,12})\.json")
MAX_MANIFEST = 65536


STOPPED = 128 + signal.SIGTERM  # a job that saved on SIGTERM exits as one the signal ended (143)


class Stop:
    """SIGTERM as a flag: ``requested`` from the signal on; ``wait`` sleeps, cut short by it. Only the flag is
    set in the handler: the step the job is in goes on to its end."""

    def __init__(self) -> None:
        self.requested = False
        signal.signal(signal.SIGTERM, self._on_signal)

    def _on_signal(self, _signum: int, _frame: Any) -> None:
        self.requested = True

    def agreed(self, any_rank: Callable[[int], int] | None = None) -> bool:
        """Whether the job stops at this step: any rank's flag through ``any_rank`` (an all-reduce of this
        rank's 0 or 1 that answers non-zero when any rank gave 1; every rank must ask at the same steps),
        or this process's alone without it (a single process, or one that alone decides, as a TF chief)."""
        flag = int(self.requested)
        return bool(any_rank(flag)) if any_rank is not None else bool(flag)

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds``, less once stopped (polled: an Event set from a handler can deadlock):
        whether the job is stopped."""
        deadline = time.monotonic() + seconds
        while not self.requested and (left := deadline - time.monotonic()) > 0:
            time.sleep(min(left, 0.05))
        return self.requested


@dataclass(frozen=True)
class Checkpoint:
    step: int
    unit: str  # what a step counts ("epoch", "step"): said on the run ("resumes from epoch 6")
    path: Path  # the data
    saved_at: float  # seconds since the epoch, when its manifest was written
    meta: dict[str, Any]  # what the job put beside it (small JSON)


def folder(where: str | os.PathLike[str] | None = None) -> Path | None:
    """The checkpoint folder: ``where``, else ``MYAPP_CHECKPOINT_DIR``, else None (no checkpoints)."""
    chosen = where if where is not None else os.environ.get(ENV)
    return Path(chosen) if chosen else None


def save(step: int, write: Callable[[IO[bytes]], Any] | bytes, *, unit: str = "step",
         meta: dict[str, Any] | None = None, keep: int = 2,
         where: str | os.PathLike[str] | None = None) -> Checkpoint | None:
    """Save the checkpoint of ``step`` (``write(file)`` writes it, or the bytes given) atomically; keep the
    newest ``keep`` complete ones. None when there is no checkpoint folder."""
    root = folder(where)
    if root is None:
        return None
    if isinstance(step, bool) or not isinstance(step, int) or step < 0:
        raise ValueError(f"step must be a whole number >= 0, got {step!r}")
    root.mkdir(parents=True, exist_ok=True)
    data = root / f"{PREFIX}{step}.bin"
    digest, size = _write_atomically(root, data.name, write)
    saved_at = time.time()
    manifest = {"format": FORMAT, "step": step, "unit": unit, "file": data.name, "size": size,
                "sha256": digest, "saved_at": saved_at, "meta": meta or {}}
    _write_atomically(root, f"{PREFIX}{step}.json", json.dumps(manifest, sort_keys=True).encode())
    _prune(root, keep)
    return Checkpoint(step, unit, data, saved_at, dict(meta or {}))


def load_latest(where: str | os.PathLike[str] | None = None, *, verify: bool = True) -> Checkpoint | None:
    """The newest complete checkpoint (its data whole: size and, with ``verify``, its digest), or None.
    A torn or damaged one is skipped for the one before it."""
    root = folder(where)
    if root is None or not root.is_dir():
        return None
    for manifest in _manifests(root):
        data = root / manifest["file"]
        try:
            if data.stat().st_size != manifest["size"]:
                continue
            if verify and _sha256(data) != manifest["sha256"]:
                continue
        except OSError:
            continue
        return Checkpoint(manifest["step"], manifest["unit"], data, manifest["saved_at"], manifest["meta"])
    return None


def latest_manifest(where: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The newest whole manifest whose data has its size (no digest: cheap enough for the platform to read
    at every decision), or None."""
    root = Path(where)
    if not root.is_dir():
        return None

    def size_of(name: str) -> int | None:
        try:
            return (root / name).stat().st_size
        except OSError:
            return None

    return newest_complete(_manifests(root), size_of)


def newest_complete(manifests: Iterable[dict[str, Any]], size_of: Callable[[str], int | None]
                    ) -> dict[str, Any] | None:
    """Of whole manifests (``parse_manifest``'s), the newest whose data file has the manifest's size
    (``size_of``: a file's size, None when it cannot be read), or None: how every reader of a checkpoint
    folder (here, the local backend, the Kubernetes reader pod's listing) picks the checkpoint to count on."""
    return next((m for m in sorted(manifests, key=lambda m: m["step"], reverse=True)
                 if size_of(m["file"]) == m["size"]), None)


def parse_manifest(name: str, data: bytes) -> dict[str, Any] | None:
    """A manifest file's content if it is whole (the platform reads the files its own way), else None."""
    match = NAME.fullmatch(name)
    if not match or len(data) > MAX_MANIFEST:
        return None
    try:
        manifest = json.loads(data)
    except ValueError:
        return None
    return manifest if _whole(manifest, int(match.group(1))) else None


def _manifests(root: Path) -> list[dict[str, Any]]:
    """Whole manifests in the folder, newest step first."""
    found = []
    for entry in os.scandir(root):
        match = NAME.fullmatch(entry.name)
        if not match or not entry.is_file(follow_symlinks=False):
            continue
        try:
            with open(entry.path, "rb") as fh:
                manifest = json.loads(fh.read(MAX_MANIFEST + 1))
        except (OSError, ValueError):
            continue
        if _whole(manifest, int(match.group(1))):
            found.append(manifest)
    return sorted(found, key=lambda m: m["step"], reverse=True)


def _whole(manifest: Any, step: int) -> bool:
    return (isinstance(manifest, dict) and manifest.get("format") == FORMAT and manifest.get("step") == step
            and manifest.get("file") == f"{PREFIX}{step}.bin" and isinstance(manifest.get("size"), int)
            and isinstance(manifest.get("sha256"), str) and isinstance(manifest.get("saved_at"), (int, float))
            and isinstance(manifest.get("unit"), str) and isinstance(manifest.get("meta"), dict))


def _write_atomically(root: Path, name: str, write: Callable[[IO[bytes]], Any] | bytes) -> tuple[str, int]:
    """Write ``root/name`` through a temporary file: written, fsynced, renamed over, folder fsynced."""
    temp = root / f"{TEMP_PREFIX}{os.getpid()}-{name}"
    try:
        with open(temp, "wb") as fh:
            hashing = _Hashing(fh)
            if isinstance(write, bytes):
                hashing.write(write)
            else:
                write(hashing)  # type: ignore[arg-type]
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(temp, root / name)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
    _fsync_dir(root)
    return hashing.digest.hexdigest(), hashing.size


class _Hashing:
    """A write-only file that hashes what passes through (torch.save, pickle.dump, np.save accept it)."""

    def __init__(self, fh: IO[bytes]):
        self.fh, self.digest, self.size = fh, hashlib.sha256(), 0

    def write(self, data: bytes) -> int:
        view = memoryview(data).cast("B")
        self.digest.update(view)
        self.size += len(view)
        return self.fh.write(view)

    def flush(self) -> None:
        self.fh.flush()

    def seekable(self) -> bool:  # written in one pass, in order: what the digest needs
        return False

    def writable(self) -> bool:
        return True


def _prune(root: Path, keep: int) -> None:
    """Keep the newest ``keep`` complete checkpoints; drop older ones and this process's leftovers."""
    manifests = _manifests(root)
    kept = {m["step"] for m in manifests[:max(keep, 1)]}
    for entry in os.scandir(root):
        match = re.fullmatch(r"ckpt-([0-9]{1,12})\.(json|bin)", entry.name)
        if match and int(match.group(1)) not in kept and int(match.group(1)) < max(kept, default=0):
            with contextlib.suppress(OSError):
                os.unlink(entry.path)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
