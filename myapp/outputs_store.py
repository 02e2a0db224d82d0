"""Where the platform reads what attempts wrote: the local backend's outputs folder.

``root()/<namespace>/<run>/<task>/<attempt>/`` is what the local backend binds into the job as its
``MYAPP_OUTPUT_DIR`` (myapp/outputs.py). When an attempt finishes, the worker lists what is there
and reads ``metrics.jsonl`` into the task run (``record``); the API lists, previews and downloads
files from the same folder (``open_file``), always inside the attempt's own folder.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import IO, Any

from flask import current_app

from .errors import DomainError, FieldError, Kind
from .models import TaskRun
from .outputs import METRICS_FILE, PATH

MAX_FILES = 1000  # listed per attempt; beyond, the list says it was cut
MAX_METRIC_LINES = 20_000
MAX_METRIC_NAME = 128
PREVIEW_BYTES = 64 * 1024
MAX_ARCHIVE_BYTES = 512 * 1024 * 1024  # what one "download all" zips at most
TEXT_SUFFIXES = frozenset({".txt", ".log", ".json", ".jsonl", ".yaml", ".yml", ".md", ".py", ".csv", ".tsv"})
IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
               ".webp": "image/webp"}


def root() -> Path:
    """The local backend's outputs folder (inside its jobs folder, MYAPP_HOME/jobs/outputs)."""
    return Path(current_app.config["INSTANCE_PATH"]) / "jobs" / "outputs"


def attempt_folder(attempt: TaskRun, namespace: str) -> Path | None:
    if not attempt.output_dir:
        return None
    return root() / namespace / attempt.output_dir


def preview_kind(path: str) -> str:
    """How the run view shows a file: metrics, csv, text, image or none (download only)."""
    suffix = os.path.splitext(path)[1].lower()
    if os.path.basename(path) == METRICS_FILE:
        return "metrics"
    if suffix in (".csv", ".tsv"):
        return "csv"
    if suffix in TEXT_SUFFIXES:
        return "text"
    if suffix in IMAGE_TYPES:
        return "image"
    return "none"


def list_files(folder: Path) -> list[dict[str, Any]]:
    """Files under folder (relative paths, sizes, preview kinds), symlinks not followed."""
    out: list[dict[str, Any]] = []
    for base, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            full = Path(base) / name
            if full.is_symlink() or not full.is_file():
                continue
            relative = full.relative_to(folder).as_posix()
            out.append({"path": relative, "size": full.stat().st_size, "preview": preview_kind(relative)})
            if len(out) >= MAX_FILES:
                return out
    return out


def parse_metrics(lines: list[str]) -> list[dict[str, Any]]:
    """metrics.jsonl lines -> [{"step", "name", "value"}]; lines that are not such a record are skipped
    (a job's file is its own: half a line at a crash must not lose the rest)."""
    out: list[dict[str, Any]] = []
    for index, line in enumerate(lines[:MAX_METRIC_LINES]):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        name, value, step = record.get("name"), record.get("value"), record.get("step", index)
        if not isinstance(name, str) or not name or len(name) > MAX_METRIC_NAME:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            continue
        if isinstance(step, bool) or not isinstance(step, int) or abs(step) > 2**53:
            continue
        out.append({"step": step, "name": name, "value": float(value)})
    return out


def record(attempt: TaskRun, namespace: str) -> None:
    """What a finished attempt left in its folder, kept with the task run (none on a remote cluster)."""
    folder = attempt_folder(attempt, namespace)
    if folder is None or not folder.is_dir():
        return
    attempt.outputs = list_files(folder)
    metrics = folder / METRICS_FILE
    if metrics.is_file() and not metrics.is_symlink():
        with open(metrics, encoding="utf-8", errors="replace") as fh:
            attempt.reported_metrics = parse_metrics(fh.read(16 * 1024 * 1024).splitlines())


def open_file(attempt: TaskRun, namespace: str, path: str) -> Path:
    """The file at path in the attempt's folder; FieldError for a path that leaves it, 404 when absent."""
    if not PATH.fullmatch(path):
        raise FieldError("path", f"{path!r} is not a relative path inside the output folder")
    folder = attempt_folder(attempt, namespace)
    if folder is None:
        raise DomainError(f"task run {attempt.id} has no outputs", kind=Kind.NOT_FOUND)
    full = folder / path
    real_folder = os.path.realpath(folder)
    if os.path.commonpath([os.path.realpath(full), real_folder]) != real_folder or full.is_symlink() \
            or not full.is_file():
        raise DomainError(f"task run {attempt.id} has no output file {path!r}", kind=Kind.NOT_FOUND)
    return full


def delete_run(namespace: str, run_id: int) -> None:
    """A deleted run's outputs folder, on this machine (a cluster's volume keeps its copy)."""
    folder = root() / namespace / str(int(run_id))
    shutil.rmtree(folder, ignore_errors=True)


def archive(attempt: TaskRun, namespace: str) -> IO[bytes]:
    """Every file the attempt wrote, as one zip (empty when it wrote nothing); DomainError beyond
    MAX_ARCHIVE_BYTES (the files download one by one then)."""
    folder = attempt_folder(attempt, namespace)
    files = list_files(folder) if folder is not None and folder.is_dir() else []
    total = sum(f["size"] for f in files)
    if total > MAX_ARCHIVE_BYTES:
        raise DomainError(f"task run {attempt.id} wrote {total} bytes, more than one archive holds "
                          f"({MAX_ARCHIVE_BYTES}): download its files one by one", kind=Kind.UNPROCESSABLE)
    out: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=16 * 1024 * 1024)  # noqa: SIM115 (returned open)
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for item in files:
            assert folder is not None
            zf.write(folder / item["path"], item["path"])
    out.seek(0)
    return out
