"""The traces the admin UI's simulator may replay, by name: never a path from a request.

`philly-sample` (package data) is the first 2,000 jobs of benchmarks/traces/philly-derived-jobs.csv;
`philly-full` is that whole trace where the server has it: `MYAPP_FULL_TRACE`, else the copy in a
source checkout next to the `myapp` package.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ...errors import FieldError, Kind

SAMPLE = "philly-sample"
FULL = "philly-full"
_HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class TraceFile:
    name: str
    path: Path
    description: str
    default_gpus: int  # GPUs at which the trace's offered load is near 1 (a useful first try)


def _full_path() -> Path:
    configured = os.environ.get("MYAPP_FULL_TRACE")
    if configured:
        return Path(configured)
    return _HERE.parents[2] / "benchmarks" / "traces" / "philly-derived-jobs.csv"


def available() -> list[TraceFile]:
    """The traces present on this server, the bundled sample first."""
    found = [TraceFile(SAMPLE, _HERE / "philly-sample.csv",
                       "first 2,000 jobs of the Philly-derived trace (about 20 days)", 128)]
    full = _full_path()
    if full.is_file():
        found.append(TraceFile(FULL, full, "the Philly-derived trace: 15,264 jobs over about 125 days", 400))
    return found


def find(name: str) -> TraceFile:
    for trace in available():
        if trace.name == name:
            return trace
    names = ", ".join(t.name for t in available())
    raise FieldError("trace", f"no trace {name!r} on this server; one of {names}", Kind.INVALID)
