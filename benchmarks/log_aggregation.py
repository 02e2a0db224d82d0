"""Log aggregation of the local backend under load: 16 replicas x 1,000 lines/s, followed live.

    .venv/bin/python benchmarks/log_aggregation.py                # 10 s of writing, ~30 s in total
    .venv/bin/python benchmarks/log_aggregation.py --replicas 16 --rate 1000 --seconds 10

A batch Job with parallelism=--replicas runs a writer in every replica: --rate lines/s for
--seconds, each line carrying its own counter and the time it was written. The benchmark reads
them back through LocalBackend.logs(follow=True) while they are written and reports:
  delivered vs expected (lost = 0), order per replica (LogLine.seq and the writer's counter
  strictly increasing), and p50/p95/p99/max latency from write time to delivery (target p95 <= 1 s).
Baseline in the same run, same load: the same writers appending straight to 16 files, read by a
plain tail loop (poll the files, split complete lines) with the backend's poll interval.
"""
from __future__ import annotations

import argparse
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
from myapp.catalog import get_template  # noqa: E402
from myapp.rendering import RenderContext, render  # noqa: E402

TARGET_P95 = 1.0
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


def report(name: str, expected: int, latencies: list[float], ordered: bool, elapsed: float) -> None:
    delivered = len(latencies)
    print(f"{name}: expected {expected}, delivered {delivered}, lost {expected - delivered}, "
          f"in order per replica: {'yes' if ordered else 'NO'}, read for {elapsed:.1f} s")
    if latencies:
        print(f"  latency write->delivery  p50 {percentile(latencies, 0.5) * 1000:7.1f} ms   "
              f"p95 {percentile(latencies, 0.95) * 1000:7.1f} ms   p99 {percentile(latencies, 0.99) * 1000:7.1f} ms"
              f"   max {max(latencies) * 1000:7.1f} ms   mean {statistics.mean(latencies) * 1000:.1f} ms")


def run_backend(workdir: Path, replicas: int, rate: int, seconds: int) -> tuple[bool, float]:
    backend = LocalBackend(workdir, gpus=[])
    ctx = RenderContext(project="bench", namespace="bench", pipeline="logs", run_id=int(time.time()), task="logs",
                        service_account="bench-runner")
    manifests = render(get_template("python"), {"script": WRITER.format(rate=rate, seconds=seconds)}, ctx)
    manifests[-1]["spec"]["parallelism"] = replicas  # one Job, `replicas` pods
    ref = backend.submit(manifests)
    latencies, last_seq, last_counter, ordered = [], {}, {}, True
    start = time.time()
    for line in backend.logs(ref, follow=True):
        now = time.time()
        counter, stamp, _ = line.line.split(" ", 2)
        latencies.append(now - float(stamp))
        if line.seq <= last_seq.get(line.replica, 0) or int(counter) <= last_counter.get(line.replica, -1):
            ordered = False
        last_seq[line.replica], last_counter[line.replica] = line.seq, int(counter)
    elapsed = time.time() - start
    status = backend.status(ref)
    if status.state is not JobState.SUCCEEDED:
        print(f"  job ended {status.state.value}: {status.reason}")
    report(f"LocalBackend.logs(follow=True), {replicas} replicas", replicas * rate * seconds, latencies,
           ordered and len(last_seq) == replicas, elapsed)
    return ordered, percentile(latencies, 0.95) if latencies else float("inf")


def run_baseline(folder: Path, replicas: int, rate: int, seconds: int, poll: float) -> None:
    folder.mkdir(parents=True)
    files = [folder / f"replica-{i}.log" for i in range(replicas)]
    code = WRITER.format(rate=rate, seconds=seconds)
    writers = [subprocess.Popen([sys.executable, "-c", code], env={**os.environ, "BENCH_LOG_FILE": str(path)})
               for path in files]
    offsets, partial = [0] * replicas, [b""] * replicas
    last, latencies, ordered = [-1] * replicas, [], True
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
                counter, stamp, _ = raw.split(b" ", 2)
                latencies.append(now - float(stamp))
                ordered &= int(counter) > last[index]
                last[index] = int(counter)
                got = True
        if finished and not got:
            break
        if not got:
            time.sleep(poll)
    report(f"baseline: tail of {replicas} files written directly", replicas * rate * seconds, latencies, ordered,
           time.time() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--replicas", type=int, default=16)
    parser.add_argument("--rate", type=int, default=1000, help="lines per second per replica")
    parser.add_argument("--seconds", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-logs-") as tmp:
        ordered, p95 = run_backend(Path(tmp) / "work", args.replicas, args.rate, args.seconds)
        run_baseline(Path(tmp) / "baseline", args.replicas, args.rate, args.seconds, poll=0.05)
    print(f"\ntarget p95 <= {TARGET_P95:.1f} s: {'OK' if p95 <= TARGET_P95 and ordered else 'MISSED'}")


if __name__ == "__main__":
    main()
