"""Logs of finished attempts, kept after their pods or processes are gone: JSON lines on disk."""
from __future__ import annotations

import json
from pathlib import Path

from .base import JobRef, LogLine


class FileLogArchive:
    def __init__(self, root: Path):
        self.root = Path(root)

    def path(self, ref: JobRef) -> Path:
        return self.root / ref.namespace / f"{ref.job_name}.jsonl"

    def write(self, ref: JobRef, lines: list[LogLine]) -> None:
        target = self.path(ref)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(".tmp")
        with tmp.open("w", encoding="utf-8") as fh:
            for line in lines:
                fh.write(json.dumps({"replica": line.replica, "seq": line.seq, "line": line.line,
                                     "timestamp": line.timestamp}) + "\n")
        tmp.replace(target)  # atomic: readers never see half a file

    def exists(self, ref: JobRef) -> bool:
        """Has cleanup archived this attempt? (An archive may hold no line: the job printed none.)"""
        return self.path(ref).exists()

    def read(self, ref: JobRef) -> list[LogLine]:
        target = self.path(ref)
        if not target.exists():
            return []
        with target.open(encoding="utf-8") as fh:
            return [LogLine(**json.loads(row)) for row in fh if row.strip()]
