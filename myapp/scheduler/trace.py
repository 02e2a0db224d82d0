"""Job traces in the CSV format of benchmarks/traces/philly-derived-jobs.csv:

    job_id,group,submit_s,num_gpus,duration_s[,checkpoints]

One job a row; `checkpoints` (true/false, default false) says a preempted job resumes instead of
starting over. A malformed line, or a job larger than the cluster, is an error naming its line.
"""
from __future__ import annotations

import csv
import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..errors import DomainError, FieldError
from .model import Job

COLUMNS = ("job_id", "group", "submit_s", "num_gpus", "duration_s")
_BOOLEANS = {"": False, "0": False, "false": False, "no": False, "1": True, "true": True, "yes": True}


@dataclass(frozen=True)
class TraceJob:
    job: Job
    duration: float  # seconds once all its GPUs are held; only the simulator knows it
    line: int


def _number(text: str, column: str, where: str, *, integer: bool = False) -> float:
    try:
        value = float(text)
    except ValueError:
        raise FieldError(where, f"{column} {text!r} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise FieldError(where, f"{column} {text!r} must be a finite number >= 0")
    if integer and value != int(value):
        raise FieldError(where, f"{column} {text!r} is not a whole number")
    return value


def parse(lines: Iterable[str], name: str = "trace", cluster_gpus: int | None = None) -> list[TraceJob]:
    """The jobs of a trace, in file order; errors are FieldErrors whose field is `name:line`."""
    reader = csv.reader(lines)
    header = next(reader, None)
    if header is None:
        raise FieldError(f"{name}:1", "empty trace: expected the header " + ",".join(COLUMNS))
    header = [h.strip() for h in header]
    if tuple(header[:5]) != COLUMNS or header[5:] not in ([], ["checkpoints"]):
        raise FieldError(f"{name}:1", f"header {','.join(header)!r}, expected {','.join(COLUMNS)}[,checkpoints]")
    jobs: list[TraceJob] = []
    seen: set[str] = set()
    for row in reader:
        line = reader.line_num
        where = f"{name}:{line}"
        if not row:
            continue
        if len(row) != len(header):
            raise FieldError(where, f"{len(row)} fields, expected {len(header)} ({','.join(header)})")
        job_id, group = row[0].strip(), row[1].strip()
        if not job_id or not group:
            raise FieldError(where, "job_id and group must not be empty")
        if job_id in seen:
            raise FieldError(where, f"job_id {job_id!r} repeated")
        seen.add(job_id)
        submit = _number(row[2], "submit_s", where)
        gpus = int(_number(row[3], "num_gpus", where, integer=True))
        duration = _number(row[4], "duration_s", where)
        if gpus < 1:
            raise FieldError(where, "num_gpus must be >= 1")
        if cluster_gpus is not None and gpus > cluster_gpus:
            raise FieldError(where, f"job {job_id} needs {gpus} GPUs, more than the cluster's {cluster_gpus}")
        checkpoints = False
        if len(row) > 5:
            flag = row[5].strip().lower()
            if flag not in _BOOLEANS:
                raise FieldError(where, f"checkpoints {row[5]!r} is not true or false")
            checkpoints = _BOOLEANS[flag]
        jobs.append(TraceJob(Job(job_id, group, gpus, submit, checkpoints=checkpoints), duration, line))
    if not jobs:
        raise FieldError(f"{name}:2", "the trace has no jobs")
    return jobs


def load(path: str | Path, cluster_gpus: int | None = None) -> list[TraceJob]:
    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8") as f:
            return parse(f, path.name, cluster_gpus)
    except OSError as exc:
        raise DomainError(f"{path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise FieldError(path.name, f"not UTF-8 text: {exc.reason}") from None
