"""Logs of finished attempts, kept after their pods or processes are gone.

An attempt's archive is a folder ``<namespace>/<job name>/`` with one file per replica in the record format
of ``logcaps`` (each replica within the log caps, whatever the backend let through), written from a stream of
lines and renamed into place whole. Its last lines are read from the end of each file (``logrecords``), so
reading them costs what they hold, not what the archive holds.

Archives written before (``<job name>.jsonl``: every replica's lines as JSON, oldest first) are still read,
newest first from their end too, and only within their last ``max_bytes`` per archive: older lines of such
an archive are not shown.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import shutil
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import BinaryIO
from urllib.parse import quote, unquote

from .base import JobRef, LogLine
from .logcaps import Capper, LogLimits, clean, cut_line
from .logrecords import Keep, LogPage, RecordFiles, ReplicaFiles, complete_end, lines_backward, lines_forward

SUFFIX = ".log"
_LEGACY_HEAD = re.compile(rb'^\{"replica": ("(?:[^"\\]|\\.)*"), "seq": (\d+)')
_LEGACY_TIME = re.compile(rb'"timestamp": ([0-9.eE+-]+)\}$')


class FileLogArchive:
    def __init__(self, root: Path, limits: LogLimits | None = None):
        self.root = Path(root)
        self.limits = limits or LogLimits.from_env()

    def path(self, ref: JobRef) -> Path:
        return self.root / ref.namespace / ref.job_name

    def legacy_path(self, ref: JobRef) -> Path:
        return self.root / ref.namespace / f"{ref.job_name}.jsonl"

    def write(self, ref: JobRef, lines: Iterable[LogLine], *, keep_lines: bool = False) -> None:
        """Archive ``lines`` (read as they come: the log is never held whole), replacing what was archived;
        with ``keep_lines`` an archive that has lines is not replaced by one without (the pods are gone)."""
        target = self.path(ref)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.parent / f".{ref.job_name}.{secrets.token_hex(4)}.tmp"
        tmp.mkdir()
        try:
            # A local job's files are within the caps already: copied whole, unless written under other caps.
            copied = lines.copy_to(tmp, _file_name, self.limits.max_bytes) if isinstance(lines, RecordFiles) else None
            wrote = copied if copied is not None else _write_replicas(tmp, lines, self.limits)
            if not wrote and keep_lines and self._has_lines(ref):
                shutil.rmtree(tmp)
                return
            self._replace(target, tmp)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        legacy = self.legacy_path(ref)
        if legacy.exists():
            legacy.unlink()

    @staticmethod
    def _replace(target: Path, tmp: Path) -> None:
        """Readers see the old archive or the new one whole, never half of one."""
        old = target.parent / f".{target.name}.{secrets.token_hex(4)}.old"
        try:
            target.rename(old)
        except FileNotFoundError:
            old = None  # type: ignore[assignment]
        tmp.rename(target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)

    def exists(self, ref: JobRef) -> bool:
        """Has cleanup archived this attempt? (An archive may hold no line: the job printed none.)"""
        return self.path(ref).is_dir() or self.legacy_path(ref).exists()

    def _has_lines(self, ref: JobRef) -> bool:
        return bool(self.open(ref).page(1, lambda line: True, {}).lines)

    def open(self, ref: JobRef) -> ReplicaFiles | LegacyArchive:
        """The archive as a LogSource (an empty one when there is none)."""
        folder = self.path(ref)
        if folder.is_dir() or not self.legacy_path(ref).exists():
            return ReplicaFiles(_replica_files(folder))
        return LegacyArchive(self.legacy_path(ref), self.limits.max_bytes)

    def read(self, ref: JobRef) -> list[LogLine]:
        """Every archived line, oldest first (whole: for tests and small logs; readers use ``open``)."""
        return list(self.open(ref).lines(lambda line: True, {}))


def _file_name(replica: str) -> str:
    return "r-" + quote(replica, safe="") + SUFFIX  # a replica name ("worker-0/init") is never a path


def _replica_files(folder: Path) -> dict[str, Path]:
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return {}
    return {unquote(name[2:-len(SUFFIX)]): folder / name for name in names
            if name.startswith("r-") and name.endswith(SUFFIX)}


def _write_replicas(folder: Path, lines: Iterable[LogLine], limits: LogLimits) -> bool:
    """One capped file per replica; True if any line was written."""
    files: dict[str, BinaryIO] = {}
    cappers: dict[str, Capper] = {}
    try:
        for line in lines:
            capper = cappers.get(line.replica)
            if capper is None:
                out = files[line.replica] = open(folder / _file_name(line.replica), "wb")  # noqa: SIM115
                capper = cappers[line.replica] = Capper(limits, out.write)
            text = cut_line(clean(line.line.encode("utf-8", "replace")), limits.max_line)
            capper.add(line.seq, line.timestamp, "-", text)
        for capper in cappers.values():
            capper.close()
        for fh in files.values():
            fh.flush()
            os.fsync(fh.fileno())
    finally:
        for fh in files.values():
            fh.close()
    return bool(files)


class LegacyArchive:
    """A LogSource over an archive written before per-replica files: JSON lines of every replica, oldest
    first. Read from the end, within its last ``window`` bytes."""

    def __init__(self, path: Path, window: int):
        self.path, self.window = path, window

    def _newest_first(self, fh: BinaryIO, after: Mapping[str, int]) -> Iterator[LogLine]:
        end = complete_end(fh)
        for raw, cut in lines_backward(fh, end, max(0, end - self.window)):
            line = _legacy_line(raw, cut)
            if line is not None and line.seq > after.get(line.replica, 0):
                yield line

    def page(self, limit: int, keep: Keep, after: Mapping[str, int]) -> LogPage:
        """Lines of every replica are mixed: this reads back until ``limit`` lines are kept (or the window
        ends), and the cursor holds the replicas it met."""
        cursor, picked = dict(after), []
        replicas: set[str] = set()
        with open(self.path, "rb") as fh:
            for line in self._newest_first(fh, after):
                replicas.add(line.replica)
                cursor[line.replica] = max(cursor.get(line.replica, 0), line.seq)
                if keep(line):
                    picked.append(line)
                    if len(picked) >= limit:
                        break
        picked.reverse()
        return LogPage(picked, cursor, sorted(replicas))

    def lines(self, keep: Keep, after: Mapping[str, int]) -> Iterator[LogLine]:
        fh = open(self.path, "rb")  # noqa: SIM115 - closed by the generator
        return self._forward(fh, keep, after)

    def _forward(self, fh: BinaryIO, keep: Keep, after: Mapping[str, int]) -> Iterator[LogLine]:
        with fh:
            end = complete_end(fh)
            start = max(0, end - self.window)
            for index, (raw, cut) in enumerate(lines_forward(fh, start, end)):
                line = None if start and not index else _legacy_line(raw, cut)  # the line across the window
                if line is not None and line.seq > after.get(line.replica, 0) and keep(line):
                    yield line


def _legacy_line(raw: bytes, cut: bool) -> LogLine | None:
    if not raw.strip():
        return None
    if not cut:
        try:
            return LogLine(**json.loads(raw))
        except (ValueError, TypeError):
            return None
    head, stamp = _LEGACY_HEAD.match(raw), _LEGACY_TIME.search(raw)
    if head is None:
        return None
    return LogLine(json.loads(head.group(1)), int(head.group(2)), "…[line cut]",
                   float(stamp.group(1)) if stamp else 0.0)
