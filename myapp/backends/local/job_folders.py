"""The folders a local job gets, a mixin of LocalBackend: the platform's private folders (0700), the
project's data folder with its claims and links, the attempt's outputs folder and the outputs folders a
notebook or model server reads, all made by descriptor beneath their parent (``myapp.fs.beneath``) and
owned by the project's uid; and the sandbox planned over them (``sandbox.py``), or, with isolation off,
the outputs volume's paths pointed at the host folder.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...checkpoint import MAX_MANIFEST, NAME, newest_complete, parse_manifest
from ...fs.beneath import Folder, Refused
from ...outputs import checkpoints
from ...outputs.declarations import MOUNT
from ...rendering.catalog import JOB_SDK as SDK_FILES
from ...rendering.catalog import SOURCE_ROOT
from ..base import JobRef, PermanentBackendError
from . import sandbox

# The platform's modules jobs import (stdlib only): the REST client and the checkpoint helper, read-only,
# the files the training templates' images copy.
JOB_SDK = tuple(SOURCE_ROOT / name for name in SDK_FILES)
META = ".myapp"  # the attempt's control folder, the platform's: spec, state, logs, metrics


class JobFolders:
    """Makes a job's folders and plans its sandbox over them."""

    workdir: Path
    python: str
    catalog_root: Path
    read_only_paths: list[Path]
    job_dir: Callable[[JobRef], Path]
    data_dir: Callable[[str], Path]
    outputs_dir: Callable[[str], Path]

    def _sandbox(self, isolation: sandbox.Isolation, ref: JobRef, run: dict[str, Any]) -> dict[str, Any] | None:
        """Makes the project's data folder, and returns the job's sandbox (None when isolation is
        off): the project's uid owns the attempt and data folders; the control folder .myapp stays
        the platform's, and hidden from the job."""
        cwd, data = self.job_dir(ref), self.data_dir(ref.namespace)
        _private_dir(data.parent)
        uid = sandbox.project_uid(self.workdir / "uids.json", ref.namespace) if isolation.mode == sandbox.UID else None
        # The data folder is the job's uid's: its claims' folders are made, chowned and linked by descriptor
        # beneath it (a link it planted is refused, never followed to /etc or another project's folder).
        with Folder.open(data, create=True) as folder:
            if isolation.sandboxed:
                folder.make_dirs("", 0o700, owner=uid, every=True)
            for volume in run.get("volumes", []):  # claims: folders in the data folder, kept
                folder.make_dirs(_beneath(Path(volume), data), 0o700, owner=uid, every=isolation.sandboxed)
            for link, target in run.get("links", []):
                folder.symlink(target, _beneath(Path(link), data))  # a name already there stays as it is
        if isolation.sandboxed:
            with Folder.open(cwd) as work:
                work.make_dirs("", 0o700, owner=uid, every=True)
        output = self._output_folder(ref, run, uid)
        kept = self._checkpoint_folder(ref, run, uid)
        if not isolation.sandboxed:
            if output is not None or run.get("outputs_read"):  # no sandbox to mount the volume: the host path
                _rehome_outputs(run, str(self.outputs_dir(ref.namespace)))
            if kept is not None:
                _rehome(run, checkpoints.MOUNT, str(self.checkpoints_dir(ref.namespace)))
            return None
        etc, hosts = sandbox.etc_files(cwd / META / "etc", uid,
                                       [r["hostname"] for r in run["replicas"] if r.get("hostname")])
        outputs = None if output is None else (self.outputs_dir(ref.namespace), run["outputs_dir"])
        read = self._read_outputs(ref, run, uid)
        return sandbox.plan(isolation, uid=uid, cwd=cwd, data_dir=data, outputs=outputs, read_outputs=read,
                            checkpoint=None if kept is None else (kept, run["checkpoint_dir"]),
                            read_only=[*sandbox.python_roots(self.python), self.catalog_root, *self.read_only_paths,
                                       *JOB_SDK,
                                       *(Path(p) for p in run.get("environments", []))],
                            hidden=[self.workdir.parent, self.workdir], etc=etc, hosts=hosts)  # parent: MYAPP_HOME

    def _read_outputs(self, ref: JobRef, run: dict[str, Any], uid: int | None) -> tuple[Path, list[str]] | None:
        """The project's outputs folders a notebook or model server reads (the project's folder made
        if no task wrote yet, owned like a task's, so that later outputs show up); None: none."""
        folders = run.get("outputs_read") or []
        if not folders:
            return None
        root = self.outputs_dir(ref.namespace)
        _private_dir(root.parent)
        made = not root.is_dir()
        with Folder.open(root, create=True) as outputs:
            if made and uid is not None:
                outputs.chown("", uid, uid)
            return root, [f for f in folders if outputs.is_dir(f)]  # a folder gone: nothing there to read

    def _output_folder(self, ref: JobRef, run: dict[str, Any], uid: int | None) -> Path | None:
        """Make the attempt's output folder when its pods mount one (myapp/outputs/declarations.py), owned by
        the job."""
        relative = run.get("outputs_dir")
        if not relative:
            return None
        root = self.outputs_dir(ref.namespace)
        _private_dir(root.parent)
        with Folder.open(root, create=True) as outputs:
            outputs.make_dirs(relative, 0o700, owner=uid, every=True)  # by descriptor: the folders are the job's
        return root / relative


    def checkpoints_dir(self, namespace: str) -> Path:
        """The project's checkpoints "volume": a folder per task of a run, kept across its attempts
        (myapp/outputs/checkpoints.py)."""
        return self.workdir / "checkpoints" / namespace

    def last_checkpoint(self, namespace: str, relative_dir: str) -> dict[str, Any] | None:
        """The newest complete checkpoint's manifest in a task's checkpoint folder (myapp.checkpoint), or None."""
        if not checkpoints.TASK_DIR.fullmatch(relative_dir):
            return None
        try:  # the job's folder: by descriptor, no link followed
            with Folder.open(self.checkpoints_dir(namespace)) as root:
                if not root.is_dir(relative_dir):
                    return None
                names = [e.name for e in root.entries(relative_dir) if e.path == f"{relative_dir}/{e.name}"]
                found = [m for name in names if (m := parse_manifest(
                    name, root.read(f"{relative_dir}/{name}", MAX_MANIFEST + 1) if NAME.fullmatch(name) else b""))]

                def size_of(name: str) -> int | None:
                    try:
                        return root.stat(f"{relative_dir}/{name}").st_size
                    except (OSError, Refused):
                        return None

                return newest_complete(found, size_of)
        except (FileNotFoundError, Refused):
            return None

    def _checkpoint_folder(self, ref: JobRef, run: dict[str, Any], uid: int | None) -> Path | None:
        """Make the task's checkpoint folder when its pods mount one (an existing one, with what earlier
        attempts saved, is kept as it is), owned by the job."""
        relative = run.get("checkpoint_dir")
        if not relative:
            return None
        root = self.checkpoints_dir(ref.namespace)
        _private_dir(root.parent)
        with Folder.open(root, create=True) as folder:
            folder.make_dirs(relative, 0o700, owner=uid, every=True)
        return root / relative


def _private_dir(path: Path) -> None:
    """The platform's folders: nobody else may list or enter them."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if path.stat().st_uid == os.geteuid():
        os.chmod(path, 0o700)


def _beneath(path: Path, data: Path) -> str:
    """A planned path in the project's data folder, relative to it (PermanentBackendError elsewhere)."""
    if data not in path.parents:
        raise PermanentBackendError(f"{path} is not in the project's data folder {data}")
    return path.relative_to(data).as_posix()


def _rehome_outputs(run: dict[str, Any], host_root: str) -> None:
    """Unsandboxed (the admin opted out of isolation): the outputs volume's paths in env and argv
    point at the host folder, since nothing mounts it at its place in the job."""
    _rehome(run, MOUNT, host_root)


def _rehome(run: dict[str, Any], mount: str, host_root: str) -> None:
    """A volume's paths (mounted at `mount` in a pod) in env and argv pointed at its host folder."""
    def host(text: str) -> str:
        return host_root + text[len(mount):] if text == mount else text.replace(mount + "/", host_root + "/")

    for replica in run["replicas"]:
        for container in replica["containers"]:
            container["argv"] = [host(a) for a in container["argv"]]
            container["env"] = {k: host(v) for k, v in container["env"].items()}
