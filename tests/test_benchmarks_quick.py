"""Every benchmark's quick mode, so none rots: each must run, count what it reports and print its
verdict. A missed speed target passes (a loaded machine is not a bug); a broken benchmark fails.

    .venv/bin/python -m pytest -q -p no:cacheprovider -n 2 -m benchmark tests/test_benchmarks_quick.py

(`make test` runs three at a time: their figures are those of a shared machine, which a quick mode may be.)
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.benchmark
ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = sorted(p.name for p in (ROOT / "benchmarks").glob("*.py"))
VERDICT = re.compile(r"^target .*: (MET|MISSED|BROKEN)\b", re.MULTILINE)


@pytest.mark.parametrize("script", BENCHMARKS)
def test_quick_mode_runs_and_gives_a_verdict(script):
    # Each benchmark makes its own database, home and broker DB; none inherits the test pass's.
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    started = time.monotonic()
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), "--quick"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    out = done.stdout + done.stderr
    print(f"{script} --quick: {time.monotonic() - started:.0f} s\n{out}")  # the figures, shown with -s or on failure
    assert done.returncode == 0, out[-3000:]
    verdicts = VERDICT.findall(done.stdout)
    assert verdicts and "BROKEN" not in verdicts, done.stdout[-3000:]
    assert re.search(r"ratio|/", done.stdout), "no comparison with the same-run baseline"


def test_log_tally_fails_on_lost_duplicated_or_out_of_order_lines():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from log_aggregation import Tally

    def tally(lines: list[tuple[str, int]]) -> list[str]:
        t = Tally("t", replicas=2, per_replica=3)
        for replica, counter in lines:
            t.add(replica, f"{counter} {time.time():.6f} xxx", time.time())
        return t.problems()

    whole = [(r, i) for i in range(3) for r in ("a", "b")]
    assert tally(whole) == []
    assert tally(whole[:-1]) == ["b: 1 lost, 0 duplicated"]
    assert tally([*whole, ("a", 2)]) == ["a: 0 lost, 1 duplicated", "a: out of order"]
    assert tally([("a", 1), ("a", 0), ("a", 2), *[("b", i) for i in range(3)]]) == ["a: out of order"]
    assert tally([("a", i) for i in range(3)]) == ["lines from 1 replicas, expected 2"]
