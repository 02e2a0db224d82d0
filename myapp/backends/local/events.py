""""A job changed": marker files from the supervisors, read by the workers' beat tick.

A supervisor that moves its job to running or to a final state creates an empty file
``<workdir>/events/<run id>.<job name>.<state>``; ``LocalBackend.changed_runs`` takes them (reads
and deletes) so beat reconciles those runs at once instead of at their next timer. Creating an
empty file is atomic (no content to be seen half written), and the names are all the data.
Only the platform's own processes use this folder (jobs never see the workdir).
"""
from __future__ import annotations

import os
from pathlib import Path

FOLDER = "events"


def announce(folder: Path, run_id: int, job_name: str, state: str) -> None:
    """Drop the marker (again: the same name is simply there once)."""
    folder.mkdir(mode=0o700, exist_ok=True)
    os.close(os.open(folder / f"{run_id}.{job_name}.{state}", os.O_WRONLY | os.O_CREAT, 0o600))


def take(folder: Path) -> set[int]:
    """The run ids of the markers in ``folder``, which are deleted; names that carry no run id are
    deleted too. A missing or unreadable folder means no events (the timers still apply)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return set()
    runs = set()
    for name in names:
        head = name.split(".", 1)[0]
        if head.isascii() and head.isdigit():
            runs.add(int(head))
        try:
            (folder / name).unlink()
        except FileNotFoundError:
            pass  # another worker's tick took it
    return runs
