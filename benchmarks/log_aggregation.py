"""Log aggregation of the local backend under load: 16 replicas x 1,000 lines/s, followed live.

    .venv/bin/python benchmarks/log_aggregation.py                # 10 s of writing, ~30 s in total
    .venv/bin/python benchmarks/log_aggregation.py --replicas 16 --rate 1000 --seconds 10
    .venv/bin/python benchmarks/log_aggregation.py --quick        # 4 replicas x 250 lines/s for 3 s

A batch Job with parallelism=--replicas runs a writer in every replica: --rate lines/s for
--seconds, each line carrying its own counter and the time it was written. The benchmark reads
them back through LocalBackend.logs(follow=True) while they are written and counts, per replica,
the lines delivered: every counter exactly once (lost = 0, duplicated = 0) and in order (LogLine.seq
and the writer's counter strictly increasing). It reports p50/p95/p99/max latency from write time to
delivery (target p95 <= 1 s).
Baseline in the same run, same load: the same writers appending straight to their own files, read by
a plain tail loop (poll the files, split complete lines) with the backend's poll interval, counted the
same way.
Exit status 1 means the benchmark broke: a line lost, duplicated or out of order, or the job failed.
A missed latency target is only reported.
"""
from __future__ import annotations

import argparse
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from myapp.backends.base import JobState  # noqa: E402
from myapp.backends.local import LocalBackend  # noqa: E402
from myapp.rendering import RenderContext, render  # noqa: E402
from myapp.rendering.catalog import get_template  # noqa: E402

TARGET_P95 = 1.0
QUICK = {"replicas": 4, "rate": 250, "seconds": 3}
# Writes `rate` lines per second in 10 ms ticks; one write() + flush per line.
WRITER = """
import os, sys, time
rate, seconds = {rate}, {seconds}
total, tick = rate * seconds, 0.01
out = open(os.environ['BENCH_LOG_FILE'], 'a') if 'BENCH_LOG_FILE' in os.environ else sys.stdout
pad = 'x' * 60
start = time.time()
i = 0
while i < total:
    due = min(total, int((time.time() - start) * rate) + 1)
    while i < due:
        out.write(f'{{i}} {{time.time():.6f}} {{pad}}\\n')
        out.flush()
        i += 1
    time.sleep(tick)
"""


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Tally:
    """What a reader delivered, per replica: each writer's counters 0..n-1 once each, in order."""

    def __init__(self, name: str, replicas: int, per_replica: int):
        self.name, self.replicas, self.per_replica = name, replicas, per_replica
        self.counters: dict[str, list[int]] = {}
        self.latencies: list[float] = []
        self.foreign: list[str] = []  # lines no writer wrote
        self.seq_disorder = 0

    def add(self, replica: str, raw: str, now: float) -> None:
        try:
            counter, stamp, _ = raw.split(" ", 2)
            counter_no, written = int(counter), float(stamp)
        except ValueError:
            self.foreign.append(raw)
            return
        self.counters.setdefault(replica, []).append(counter_no)
        self.latencies.append(now - written)

    def problems(self) -> list[str]:
        out = []
        if len(self.counters) != self.replicas:
            out.append(f"lines from {len(self.counters)} replicas, expected {self.replicas}")
        for replica, got in sorted(self.counters.items()):
            missing = self.per_replica - len(set(got) & set(range(self.per_replica)))
            duplicated = len(got) - len(set(got))
            if missing or duplicated:
                out.append(f"{replica}: {missing} lost, {duplicated} duplicated")
            if any(b <= a for a, b in itertools.pairwise(got)):
                out.append(f"{replica}: out of order")
        if self.seq_disorder:
            out.append(f"{self.seq_disorder} lines with a LogLine.seq not above the one before")
        if self.foreign:
            out.append(f"{len(self.foreign)} lines no writer wrote, first: {self.foreign[0][:80]!r}")
        return out

    def report(self, elapsed: float) -> list[str]:
        delivered = sum(len(got) for got in self.counters.values())
        expected = self.replicas * self.per_replica
        unique = sum(len(set(got)) for got in self.counters.values())
        problems = self.problems()
        print(f"{self.name}: expected {expected}, delivered {delivered} ({unique} distinct), "
              f"lost {expected - unique}, in order and complete per replica: {'yes' if not problems else 'NO'}, "
              f"read for {elapsed:.1f} s ({delivered / elapsed:.0f} lines/s)")
        for problem in problems:
            print(f"  PROBLEM {problem}")
        if self.latencies:
            lat = self.latencies
            print(f"  latency write->delivery  p50 {percentile(lat, 0.5) * 1000:7.1f} ms   "
                  f"p95 {percentile(lat, 0.95) * 1000:7.1f} ms   p99 {percentile(lat, 0.99) * 1000:7.1f} ms"
                  f"   max {max(lat) * 1000:7.1f} ms   mean {statistics.mean(lat) * 1000:.1f} ms")
        return problems

    def p95(self) -> float:
        return percentile(self.latencies, 0.95) if self.latencies else float("inf")


def run_backend(workdir: Path, replicas: int, rate: int, seconds: int) -> tuple[Tally, list[str]]:
    backend = LocalBackend(workdir, gpus=[])
    ctx = RenderContext(project="bench", namespace="bench", pipeline="logs", run_id=int(time.time()), task="logs",
                        service_account="bench-runner")
    manifests = render(get_template("python"), {"script": WRITER.format(rate=rate, seconds=seconds)}, ctx)
    manifests[-1]["spec"]["parallelism"] = replicas  # one Job, `replicas` pods
    ref = backend.submit(manifests)
    tally = Tally(f"LocalBackend.logs(follow=True), {replicas} replicas", replicas, rate * seconds)
    last_seq: dict[str, int] = {}
    start = time.time()
    for line in backend.logs(ref, follow=True):
        tally.add(line.replica, line.line, time.time())
        if line.seq <= last_seq.get(line.replica, 0):
            tally.seq_disorder += 1
        last_seq[line.replica] = line.seq
    problems = tally.report(time.time() - start)
    status = backend.status(ref)
    if status.state is not JobState.SUCCEEDED:
        problems.append(f"job ended {status.state.value}: {status.reason}")
        print(f"  PROBLEM {problems[-1]}")
    return tally, problems


def run_baseline(folder: Path, replicas: int, rate: int, seconds: int, poll: float) -> tuple[Tally, list[str]]:
    folder.mkdir(parents=True)
    files = [folder / f"replica-{i}.log" for i in range(replicas)]
    code = WRITER.format(rate=rate, seconds=seconds)
    writers = [subprocess.Popen([sys.executable, "-c", code], env={**os.environ, "BENCH_LOG_FILE": str(path)})
               for path in files]
    tally = Tally(f"baseline: tail of {replicas} files written directly", replicas, rate * seconds)
    offsets, partial = [0] * replicas, [b""] * replicas
    start = time.time()
    while True:
        finished = all(w.poll() is not None for w in writers)
        got = False
        for index, path in enumerate(files):
            try:
                with open(path, "rb") as fh:
                    fh.seek(offsets[index])
                    data = fh.read()
            except FileNotFoundError:
                continue
            offsets[index] += len(data)
            lines = (partial[index] + data).split(b"\n")
            partial[index] = lines.pop()
            now = time.time()
            for raw in lines:
                tally.add(f"replica-{index}", raw.decode(), now)
                got = True
        if finished and not got:
            break
        if not got:
            time.sleep(poll)
    problems = tally.report(time.time() - start)
    failed = [w.returncode for w in writers if w.returncode]
    if failed:
        problems.append(f"writers exited with {failed}")
        print(f"  PROBLEM {problems[-1]}")
    return tally, problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--replicas", type=int, default=16)
    parser.add_argument("--rate", type=int, default=1000, help="lines per second per replica")
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--quick", action="store_true",
                        help="{replicas} replicas x {rate} lines/s for {seconds} s".format(**QUICK))
    args = parser.parse_args()
    if args.quick:
        vars(args).update(QUICK)
    print(f"{args.replicas} replicas x {args.rate} lines/s for {args.seconds} s; {os.cpu_count()} cpus")
    with tempfile.TemporaryDirectory(prefix="bench-logs-") as tmp:
        tally, problems = run_backend(Path(tmp) / "work", args.replicas, args.rate, args.seconds)
        base, base_problems = run_baseline(Path(tmp) / "baseline", args.replicas, args.rate, args.seconds, poll=0.05)
    print(f"\nratio p95 backend / baseline: {tally.p95() / base.p95():.2f}x")
    broken = problems + base_problems
    met = tally.p95() <= TARGET_P95
    verdict = "BROKEN" if broken else "MET" if met else "MISSED"
    print(f"target p95 <= {TARGET_P95:.1f} s with no line lost, duplicated or out of order: {verdict} "
          f"(p95 {tally.p95() * 1000:.0f} ms)")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
