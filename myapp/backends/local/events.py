""""A job changed": marker files from the supervisors, read by the beat process as they appear.

A supervisor that moves its job to running or to a final state creates an empty file
``<workdir>/events/<run id>.<job name>.<state>``; ``LocalBackend.changed_runs`` takes them (reads
and deletes) so beat reconciles those runs at once instead of at their next timer: ``Watcher`` wakes
beat's loop when a marker is created (tasks.watch_local_jobs), and the tick takes what is left. Creating an
empty file is atomic (no content to be seen half written), and the names are all the data.
Only the platform's own processes use this folder (jobs never see the workdir).
"""
from __future__ import annotations

import ctypes
import os
import select
import time
from pathlib import Path

FOLDER = "events"
IN_MOVED_TO, IN_CREATE = 0x80, 0x100  # inotify(7)


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


class Watcher:
    """Waits for new markers in ``folder``: Linux inotify (a marker's creation wakes it at once), else a
    short sleep. The beat process's loop (tasks.watch_local_jobs) takes the markers as they come, so a
    local job's start and end reach the run controller as events, not at beat's next tick."""

    POLL = 0.05  # seconds between looks where inotify is not available

    def __init__(self, folder: Path):
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.fd = -1
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
            if fd >= 0 and libc.inotify_add_watch(fd, os.fsencode(folder), IN_CREATE | IN_MOVED_TO) >= 0:
                self.fd = fd
            elif fd >= 0:
                os.close(fd)
        except (OSError, AttributeError):  # no inotify here: short sleeps instead
            self.fd = -1

    def wait(self, timeout: float) -> None:
        """Return when a marker may have arrived, or after timeout seconds."""
        if self.fd < 0:
            time.sleep(min(timeout, self.POLL))
            return
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if ready:
            try:
                while os.read(self.fd, 4096):  # drain: the markers themselves are what take() reads
                    pass
            except BlockingIOError:
                pass

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
