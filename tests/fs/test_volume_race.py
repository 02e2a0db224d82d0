"""A job of project A swaps its data folder's ``volumes`` with a link to project B's (renameat2
RENAME_EXCHANGE, as fast as it can) while A's notebook work folder is deleted over and over for RACE_SECONDS
through LocalBackend.cleanup: B's folder of the same name survives every time, each delete either removes
A's folder or refuses cleanly (PermanentBackendError), and nothing else goes wrong."""
from __future__ import annotations

import collections
import os
import time

import pytest

from tests.fs import attackers

pytestmark = pytest.mark.slow  # RACE_SECONDS; not backend-specific (the first pass runs it)

CLAIM = "notebook-work"  # both projects named their notebook alike: the same claim name


def fill(volumes_fd: int) -> None:
    """A's work folder with files and a sub-folder, made through a descriptor of A's real volumes folder
    (wherever the attacker has moved its name)."""
    try:
        os.mkdir(CLAIM, dir_fd=volumes_fd)
    except FileExistsError:
        pass
    claim = os.open(CLAIM, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=volumes_fd)
    try:
        os.makedirs(f"/proc/self/fd/{claim}/sub", exist_ok=True)
        for name in ("a.ipynb", "sub/b.txt"):
            with open(f"/proc/self/fd/{claim}/{name}", "w") as fh:
                fh.write("A's")
    finally:
        os.close(claim)


def test_deleting_a_work_folder_races_a_swapped_volumes_folder(tmp_path, resolver):
    from myapp.backends.archive import FileLogArchive
    from myapp.backends.base import JobRef, ObjectRef, PermanentBackendError
    from myapp.backends.local import LocalBackend

    backend = LocalBackend(tmp_path / "jobs", gpus=[])
    a, b = backend.data_dir("proj-a"), backend.data_dir("proj-b")
    (b / "volumes" / CLAIM / "sub").mkdir(parents=True)
    (b / "volumes" / CLAIM / "sub" / "keep.txt").write_text("B's")
    (a / "volumes").mkdir(parents=True)
    os.symlink(b / "volumes", a / "volumes.link")
    volume = ObjectRef("v1", "PersistentVolumeClaim", "proj-a", CLAIM)
    ref, archive = JobRef("local", "proj-a", CLAIM, volume, (volume,)), FileLogArchive(tmp_path / "archive")
    volumes_fd = os.open(a / "volumes", os.O_RDONLY | os.O_DIRECTORY)
    outcomes: collections.Counter = collections.Counter()
    errors = []
    attacker = attackers.start(attackers.SWAP_VOLUMES, a, attackers.RACE_SECONDS)
    deadline = time.monotonic() + attackers.RACE_SECONDS
    try:
        while time.monotonic() < deadline:
            fill(volumes_fd)
            try:
                backend.cleanup(ref, archive)
                outcomes["removed" if not os.path.lexists(f"/proc/self/fd/{volumes_fd}/{CLAIM}") else "left"] += 1
            except PermanentBackendError:
                outcomes["refused"] += 1
            except Exception as exc:  # anything else is what a server error would be
                errors.append(repr(exc))
            if not (b / "volumes" / CLAIM / "sub" / "keep.txt").is_file():
                break
    finally:
        swapped = attackers.swaps(attacker)
        os.close(volumes_fd)
    assert swapped > 1000, f"the attacker swapped only {swapped} times"
    kept = b / "volumes" / CLAIM / "sub" / "keep.txt"
    assert kept.is_file() and kept.read_text() == "B's", \
        f"B's work folder was deleted by A's: {dict(outcomes)} {errors[:2]}"
    assert not errors, f"{len(errors)} unexpected errors ({dict(outcomes)}): {errors[:3]}"
    assert outcomes["removed"] > 0 and outcomes["refused"] > 0, dict(outcomes)
