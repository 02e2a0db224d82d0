"""Attackers for the race tests: real processes that do to a job's own folder what a job can, as fast as they
can, while the platform reads or deletes there (tests/outputs/test_outputs_race.py, tests/fs/test_volume_race.py).

Each runs ``python -c`` with a fixed script for RACE_SECONDS (env ``MYAPP_RACE_SECONDS``, default 10) and
prints how many swaps it made, so a test can tell the attack really ran."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

RACE_SECONDS = float(os.environ.get("MYAPP_RACE_SECONDS", "10"))

# renameat2(RENAME_EXCHANGE): swap two names atomically (a folder and a link to elsewhere).
EXCHANGE = r"""
import ctypes, os, platform
_libc = ctypes.CDLL(None, use_errno=True)
_NUMBER = {"x86_64": 316, "aarch64": 276}[platform.machine()]
def exchange(a, b):
    if _libc.syscall(_NUMBER, -100, a.encode(), -100, b.encode(), 2) != 0:  # AT_FDCWD, RENAME_EXCHANGE
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), a)
"""

# In the attempt's folder: ``d`` becomes, in turn, a fresh link to ``decoy`` (inside the folder), a fresh link to
# the target folder outside, and the real ``decoy`` folder itself (exchanged with the name ``decoy``).
SWAP_LINKS = EXCHANGE + r"""
import sys, time
os.chdir(sys.argv[1])
target, deadline, swaps = sys.argv[2], time.monotonic() + float(sys.argv[3]), 0
while time.monotonic() < deadline:
    for to in ("decoy", target):
        os.symlink(to, "d.new")
        os.rename("d.new", "d")
    exchange("decoy", "d")  # d: the real folder; decoy: the link to the target
    time.sleep(0.0002)  # long enough for some requests to find the real folder there, and be served it
    exchange("decoy", "d")
    swaps += 4
print(swaps)
"""

# In project A's data folder: ``volumes`` and ``volumes.link`` (a link to project B's volumes) exchanged.
SWAP_VOLUMES = EXCHANGE + r"""
import sys, time
os.chdir(sys.argv[1])
deadline, swaps = time.monotonic() + float(sys.argv[2]), 0
while time.monotonic() < deadline:
    exchange("volumes", "volumes.link")
    swaps += 1
print(swaps)
"""


def start(script: str, *args: str | Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", script, *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def swaps(proc: subprocess.Popen) -> int:
    """How many swaps the attacker made; AssertionError if it failed."""
    out, err = proc.communicate(timeout=RACE_SECONDS + 60)
    assert proc.returncode == 0, f"the attacker failed: {err}"
    return int(out.strip())
