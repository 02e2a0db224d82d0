#!/usr/bin/env python
"""The last 100 lines of a replica's log at its cap: time, memory and bytes read, against reading it whole.

Writes the log a job leaves that printed 5,000,000 short lines and one 50 MB line, as the supervisor writes it
at the default caps (64 MiB per replica, 16 KiB per line: its start, a mark where lines were dropped, its
last 4 MiB with the cut 50 MB line), directly in the record format (the supervisor's own writer would take
minutes; tests/backends/test_log_caps.py checks this file is byte for byte what it writes). Then reads it as
the API does (`logrecords.ReplicaFiles`, the source of a running local attempt and of an archived one):

- the last 100 lines (`GET /api/v1/task_run/{id}/logs?limit=100`, a stream's first read), 5 times;
- a search for a text found nowhere (reads the whole file back, holding 100 lines at most);
- the download (every line, streamed);
- the baseline, in the same run: the file read whole and its last 100 lines kept, as before.

    .venv/bin/python benchmarks/log_tail.py           # 64 MiB at the default caps; ~1 min, ~1 GB for the baseline
    .venv/bin/python benchmarks/log_tail.py --quick   # an 8 MiB cap; ~5 s

Exit status 1 means the benchmark broke (the tail is not the file's last 100 lines, or a count is off). A
missed target (the last 100 lines in <= 1 s with <= 50 MB more memory) is only reported.
"""
from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from myapp.backends import logrecords
from myapp.backends.base import LogLine
from myapp.backends.logcaps import (
    ARCHIVE_ROOM,
    Capper,
    LogLimits,
    cut_line,
    cut_mark,
    dropped_mark,
    record,
)

TARGET_SECONDS, TARGET_MB = 1.0, 50.0
T0 = 1_700_000_000.0


def printed(seq: int, huge_at: int, huge_bytes: int, max_line: int) -> bytes:
    """The text the supervisor keeps of line ``seq`` (the huge line cut to the line cap)."""
    if seq == huge_at:
        return cut_line(b"h" * (max_line + 100), max_line, huge_bytes - max_line - 100)
    return b"line %d" % seq


def stamp(seq: int) -> float:
    return T0 + seq * 1e-5  # 5 M lines in 50 s


def flood(limits: LogLimits, lines: int, huge_at: int, huge_bytes: int) -> Iterator[bytes]:
    """The replica's file after ``lines`` lines (line ``huge_at`` of ``huge_bytes``), as the supervisor's
    Capper leaves it: the head that fits, the cut mark, the count of what was dropped, the kept end."""
    sizes = Capper(limits, lambda data: None, room=ARCHIVE_ROOM)

    def rec(seq: int) -> bytes:
        return record(seq, stamp(seq), "o", printed(seq, huge_at, huge_bytes, limits.max_line))

    size, seq = 0, 0
    while seq < lines:  # the head: whole batches while they fit, then line by line
        numbers = range(seq + 1, min(seq + 20_000, lines) + 1)
        batch = ([rec(s) for s in numbers] if huge_at in numbers else  # else the same bytes, made faster
                 [b"%d %.6f o line %d\n" % (s, stamp(s), s) for s in numbers])
        total = sum(map(len, batch))
        if size + total > sizes.head_limit:
            for data in batch:
                if size + len(data) > sizes.head_limit:
                    break
                yield data
                size += len(data)
                seq += 1
            break
        yield b"".join(batch)
        size += total
        seq += len(batch)
    head_end = seq
    window: list[bytes] = []
    kept, first = 0, lines + 1
    while first - 1 > head_end and kept + len(rec(first - 1)) <= sizes.window:
        first -= 1
        window.append(rec(first))
        kept += len(window[-1])
    dropped = first - 1 - head_end
    if dropped:
        yield record(head_end + 1, stamp(head_end + 1), "m", cut_mark(limits, sizes.window))
    if dropped > 1:
        yield record(first - 1, stamp(first - 1), "m", dropped_mark(dropped, span(rec, head_end + 1, first, huge_at)))
    yield from reversed(window)


def span(rec: Callable[[int], bytes], start: int, stop: int, huge_at: int) -> int:
    """The bytes of records start..stop-1 without making them: a short line's record is its seq's digits
    twice plus a constant (the time has a fixed width)."""
    fixed = len(rec(start)) - 2 * len(str(start))
    total, low = 0, start
    while low < stop:
        high = min(stop, 10 ** len(str(low)))
        total += (high - low) * (2 * len(str(low)) + fixed)
        low = high
    if start <= huge_at < stop:
        total += len(rec(huge_at)) - (2 * len(str(huge_at)) + fixed)
    return total


def write_flood(path: Path, limits: LogLimits, lines: int = 5_000_000, huge_at: int | None = None,
                huge_bytes: int = 50_000_000) -> None:
    with open(path, "wb") as out:
        for data in flood(limits, lines, lines - 100 if huge_at is None else huge_at, huge_bytes):
            out.write(data)


@dataclass(frozen=True)
class Search:
    """What observation.LogFilter(search=...) is to the files (without importing the app): a text to hold."""

    search: str

    def __call__(self, line: LogLine) -> bool:
        return self.search in line.line


class Counted:
    """logrecords' open(), counting the bytes its files return."""

    def __init__(self) -> None:
        self.bytes = 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        fh = open(*args, **kwargs)  # noqa: SIM115 - the caller closes it
        read = fh.read

        def counted(*a: Any) -> bytes:
            data = read(*a)
            self.bytes += len(data)
            return data

        fh.read = counted
        return fh


def measured(fn: Callable[[], Any]) -> tuple[Any, float, float, float, int]:
    """(result, seconds, tracemalloc peak MB, peak RSS growth MB, bytes read): timed and RSS sampled in one
    run, Python's allocations traced and bytes counted in a second one (tracing slows it)."""
    gc.collect()
    process = psutil.Process()
    base = peak = process.memory_info().rss
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.wait(0.002):
            peak = max(peak, process.memory_info().rss)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    started = time.perf_counter()
    try:
        result = fn()
        seconds = time.perf_counter() - started
    finally:
        done.set()
        sampler.join()
    peak = max(peak, process.memory_info().rss)
    del result
    gc.collect()
    counter = Counted()
    logrecords.open = counter  # type: ignore[attr-defined]
    tracemalloc.start()
    try:
        result = fn()
        traced = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        del logrecords.open  # type: ignore[attr-defined]
    return result, seconds, traced / 1e6, (peak - base) / 1e6, counter.bytes


def whole_read(path: Path) -> list[LogLine]:
    """As before: the file read whole, every line a LogLine, the last 100 kept."""
    with open(path, "rb") as fh:
        data = fh.read()
    lines = [logrecords.parse("worker-0", raw, False) for raw in data.split(b"\n")[:-1]]
    return lines[-100:]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="an 8 MiB cap and 600,000 lines")
    args = p.parse_args()
    limits = LogLimits(8 << 20, 16 << 10) if args.quick else LogLimits()
    lines = 600_000 if args.quick else 5_000_000
    every: Callable[[LogLine], bool] = lambda line: True  # noqa: E731
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "worker-0.log"
        started = time.perf_counter()
        write_flood(path, limits, lines)
        size = path.stat().st_size
        source = logrecords.ReplicaFiles({"worker-0": path})
        print(f"replica log: {size:,} bytes at a cap of {limits.max_bytes:,} ({lines:,} lines printed, one of "
              f"50 MB), written in {time.perf_counter() - started:.1f} s")
        tails = [measured(lambda: source.page(100, every, {})) for _ in range(5)]
        page = tails[0][0]
        search = measured(lambda: source.page(100, Search("not in this log"), {}))
        download = measured(lambda: sum(1 for _ in source.lines(every, {})))
        baseline = measured(lambda: whole_read(path))
        with open(path, "rb") as fh:
            whole_count = sum(block.count(b"\n") for block in iter(lambda: fh.read(1 << 20), b""))
    best = min(tails, key=lambda t: t[1])
    worst_mb = max(max(t[2], t[3]) for t in tails)
    if [line.seq for line in page.lines] != list(range(lines - 99, lines + 1)) or size > limits.max_bytes:
        print(f"BROKEN: the tail is seqs {page.lines[0].seq}..{page.lines[-1].seq}, file {size:,} bytes")
        return 1
    if [(ln.seq, ln.line) for ln in baseline[0]] != [(ln.seq, ln.line) for ln in page.lines]:
        print("BROKEN: the tail differs from the whole read's last 100 lines")
        return 1
    if search[0].lines or download[0] != whole_count:
        print(f"BROKEN: the search found {len(search[0].lines)} lines, the download {download[0]:,} of {whole_count:,}")
        return 1
    for name, (_, seconds, traced, rss, read) in (("tail of 100 lines (best of 5)", best[:5]),
                                                 ("search, nothing found (whole file)", search),
                                                 ("download, every line streamed", download),
                                                 ("baseline: whole read, last 100 kept", baseline)):
        print(f"{name:38s} {seconds * 1000:9.1f} ms  +{traced:7.1f} MB traced  +{rss:7.1f} MB RSS  "
              f"{read:,} bytes read")
    print(f"download: {download[0]:,} lines")
    print(f"tail / baseline: time {best[1] / baseline[1]:.5f}x, memory "
          f"{max(best[2], 0.001) / max(baseline[2], 0.001):.5f}x")
    met = max(t[1] for t in tails) <= TARGET_SECONDS and worst_mb <= TARGET_MB
    print(f"target tail of 100 lines at the cap <= {TARGET_SECONDS:.0f} s and <= {TARGET_MB:.0f} MB more memory: "
          f"{'MET' if met else 'MISSED'} ({max(t[1] for t in tails) * 1000:.1f} ms, {worst_mb:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
