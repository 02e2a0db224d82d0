"""The log caps and the record files: lines cut to the line cap, a replica within its byte cap with marks
where lines were dropped, seqs that survive the cut and the archive, files read from either end."""
from __future__ import annotations

import json
import random
import sys
import time
import tracemalloc
from pathlib import Path

import pytest

from myapp.backends.archive import FileLogArchive
from myapp.backends.base import JobRef, LogLine, ObjectRef
from myapp.backends.local.logfiles import LogCursor, ReplicaLog, record_files, replica_files
from myapp.backends.logcaps import LineSplitter, LogLimits, cut_line
from myapp.backends.logrecords import ReplicaFile
from myapp.fs.beneath import Refused

SMALL = LogLimits(max_bytes=1 << 20, max_line=1024)
REF = JobRef("local", "ns", "job-1", ObjectRef("v1", "Pod", "ns", "job-1"))
EVERY = (lambda line: True)  # noqa: E731


def test_limits_come_from_the_environment_and_are_checked():
    assert LogLimits.from_env({}) == LogLimits(64 << 20, 16 << 10)
    assert LogLimits.from_env({"MYAPP_LOG_MAX_BYTES_PER_REPLICA": "2097152", "MYAPP_LOG_MAX_LINE": "2048"}) == \
        LogLimits(2 << 20, 2048)
    with pytest.raises(ValueError, match="MYAPP_LOG_MAX_LINE"):
        LogLimits.from_env({"MYAPP_LOG_MAX_LINE": "10"})
    with pytest.raises(ValueError, match="must hold at least 32 lines"):
        LogLimits(max_bytes=4096, max_line=1024)
    with pytest.raises(ValueError, match="log limits"):
        LogLimits.from_env({"MYAPP_LOG_MAX_BYTES_PER_REPLICA": "lots"})


def test_a_long_line_keeps_its_start_says_what_it_lost_and_holds_no_more():
    splitter = LineSplitter(100)
    tracemalloc.start()
    try:
        out = splitter.feed(b"short\n" + b"x" * 1000)
        for _ in range(200):  # 12.8 MB more of the same line, in pipe-sized pieces
            out += splitter.feed(b"y" * 65536)
        out += splitter.feed(b"\nnext")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20  # the held line is capped: no 12.8 MB buffer
    assert out[0] == b"short"
    assert out[1] == b"x" * 100 + b" \xe2\x80\xa6[line cut: %d bytes dropped]" % (900 + 200 * 65536)
    assert splitter.end() == b"next" and splitter.end() is None
    # A cut never splits a character, and a cut line is within the cap: cutting it again changes nothing.
    cut = cut_line(("é" * 200).encode(), 101)
    assert cut.decode().startswith("é" * 50 + " …[line cut") and cut_line(cut, 101) == cut
    assert LineSplitter(100).feed(b"\xff\xfebad bytes\n") == ["\ufffd\ufffdbad bytes".encode()]


def _fill(log: ReplicaLog, lines: int, stream: str = "o", key: int = 1, text: bytes = b"line") -> None:
    for i in range(lines):
        log.feed(key, stream, b"%s %d\n" % (text, i), time.time())
        if i % 1000 == 0:
            log.flush()


def test_a_replica_over_its_cap_keeps_its_start_and_end_with_marks_and_stable_seqs(tmp_path):
    log = ReplicaLog(tmp_path / "w.log", SMALL)
    _fill(log, 40_000)  # ~0.8 MB: most of the head
    log.feed(1, "o", b"a" * 5_000_000, time.time())  # one huge line, among many more than fit
    log.feed(1, "o", b"\n", time.time())
    _fill(log, 60_000, "e", 2, b"err")
    log.feed(1, "o", b"last words\n", time.time())
    log.close()
    assert (tmp_path / "w.log").stat().st_size <= SMALL.max_bytes
    lines = list(replica_files(tmp_path, ["w"]).lines(EVERY, {}))
    seqs = [line.seq for line in lines]
    assert seqs == sorted(set(seqs)) and seqs[0] == 1 and seqs[-1] == 100_002  # every line printed has a seq
    marks = [line for line in lines if line.line.startswith("[log cut")]
    assert len(marks) == 2 and "reached its cap of 1048576 bytes" in marks[0].line
    dropped = int(marks[1].line.split()[2])
    assert len(lines) + dropped - 2 == 100_002  # kept + dropped = printed (each mark stands for a dropped line)
    assert lines[-1].line == "last words" and lines[-2].line == "err 59999"  # the end is kept
    assert lines[0].line == "line 0"
    assert all(len(line.line.encode()) <= SMALL.max_line + 64 for line in lines)


def test_a_cut_line_is_marked_in_the_file(tmp_path):
    log = ReplicaLog(tmp_path / "w.log", SMALL)
    log.feed(1, "o", b"z" * 3000 + b"\nok\n", 1.0)
    log.close()
    first, second = replica_files(tmp_path, ["w"]).lines(EVERY, {})
    assert first.line == "z" * 1024 + " …[line cut: 1976 bytes dropped]" and (second.seq, second.line) == (2, "ok")


def test_archiving_a_capped_log_cuts_nothing_more_and_keeps_seqs(tmp_path):
    log = ReplicaLog(tmp_path / "w.log", SMALL)
    _fill(log, 120_000)
    log.close()
    live = replica_files(tmp_path, ["w"])
    archive = FileLogArchive(tmp_path / "archive", SMALL)
    archive.write(REF, live.lines(EVERY, {}))
    assert list(archive.open(REF).lines(EVERY, {})) == list(live.lines(EVERY, {}))
    assert archive.open(REF).page(3, EVERY, {}).cursor == {"w": 120_000}


def test_a_capped_local_log_is_archived_as_a_whole_file_copy(tmp_path):
    """A local job's files are within the caps (the supervisor wrote them so): the archive copies each whole,
    byte for byte up to its last complete record, instead of a line at a time; a replica that wrote nothing has
    no file, and a link where a file was is refused, never followed."""
    log = ReplicaLog(tmp_path / "w.log", SMALL)
    _fill(log, 120_000)
    log.close()
    with open(tmp_path / "w.log", "ab") as fh:
        fh.write(b"120001 1.0 o half a rec")  # a record still being written when the job was stopped
    archive = FileLogArchive(tmp_path / "archive", SMALL)
    archive.write(REF, record_files(tmp_path, ["w", "silent"]))
    copied = sorted((archive.path(REF)).iterdir())
    assert [p.name for p in copied] == ["r-w.log"]
    assert copied[0].read_bytes() == (tmp_path / "w.log").read_bytes().rpartition(b"\n")[0] + b"\n"
    assert archive.open(REF).page(3, EVERY, {}).cursor == {"w": 120_000}
    (tmp_path / "link.log").symlink_to(tmp_path / "w.log")
    with pytest.raises(Refused):
        archive.write(REF, record_files(tmp_path, ["link"]))
    assert [line.line for line in archive.open(REF).page(1, EVERY, {}).lines] == ["line 119999"]  # the copy stays


def test_a_local_log_over_the_archives_cap_is_capped_again(tmp_path):
    """Files written under a larger cap than the archive's now: their lines go through the archive's caps."""
    log = ReplicaLog(tmp_path / "w.log", LogLimits(max_bytes=4 << 20, max_line=1024))
    _fill(log, 120_000)  # ~2.4 MB: over SMALL's 1 MiB
    log.close()
    archive = FileLogArchive(tmp_path / "archive", SMALL)
    archive.write(REF, record_files(tmp_path, ["w"]))
    assert archive.path(REF).joinpath("r-w.log").stat().st_size <= SMALL.max_bytes
    lines = list(archive.open(REF).lines(EVERY, {}))
    assert lines[0].line == "line 0" and lines[-1].seq == 120_000
    assert any(line.line.startswith("[log cut") for line in lines)


def test_the_archive_caps_what_a_backend_let_through(tmp_path):
    """A Kubernetes pod's log is as long as the kubelet kept it: the archive applies the caps."""
    archive = FileLogArchive(tmp_path, SMALL)
    pod = (LogLine("worker-0/init" if i % 2 else "master-0", i // 2 + 1, f"line {i} " + "p" * 40, float(i))
           for i in range(100_000))
    archive.write(REF, pod)
    files = sorted((tmp_path / "ns" / "job-1").iterdir())
    assert [f.name for f in files] == ["r-master-0.log", "r-worker-0%2Finit.log"]
    assert all(f.stat().st_size <= SMALL.max_bytes for f in files)
    page = archive.open(REF).page(2, EVERY, {})
    assert [(ln.replica, ln.seq) for ln in page.lines] == [("master-0", 50_000), ("worker-0/init", 50_000)]
    assert page.replicas == ["master-0", "worker-0/init"]
    archive.write(REF, iter(()), keep_lines=True)  # the pods are gone: the archive with lines stays
    assert archive.open(REF).page(1, EVERY, {}).lines
    archive.write(REF, iter(()))
    assert archive.exists(REF) and archive.read(REF) == []


def test_a_replica_file_is_read_from_its_end_and_from_a_seq(tmp_path):
    path = tmp_path / "w.log"
    path.write_bytes(b"".join(b"%d %d.000000 o line %d\n" % (seq, seq, seq) for seq in (*range(1, 1001), 5000, 5001))
                     + b"5002 5002.0 o still being writ")
    f = ReplicaFile("w", path)
    assert f.last_seq() == 5001
    assert [ln.seq for ln in f.backward(998)] == [5001, 5000, 1000, 999]
    assert [ln.seq for ln in f.forward(999)] == [1000, 5000, 5001]
    assert [next(f.forward(after)).seq for after in (0, 1, 500, 1000, 4999)] == [1, 2, 501, 5000, 5000]
    assert list(f.forward(5001)) == [] and f.start_of(5001) == f.end
    cursor = LogCursor("w", path, after=10, max_lines=400)
    assert [len(cursor.read()) for _ in range(4)] == [400, 400, 192, 0] and cursor.seq == 5001


def test_files_of_the_older_writer_are_numbered_by_line(tmp_path):
    path = tmp_path / "w.log"
    path.write_bytes(b"".join(b"%d.5 o old %d\n" % (i, i) for i in range(1, 101)))
    f = ReplicaFile("w", path)
    assert f.counted and f.last_seq() == 100
    assert [(ln.seq, ln.line, ln.timestamp) for ln in f.backward(98)] == [(100, "old 100", 100.5),
                                                                         (99, "old 99", 99.5)]
    assert [ln.seq for ln in f.forward(97)] == [98, 99, 100]


def test_an_archive_of_the_older_format_is_read_from_its_end_within_the_cap(tmp_path):
    legacy = tmp_path / "ns" / "job-1.jsonl"
    legacy.parent.mkdir()
    rows = [{"replica": f"r{i % 2}", "seq": i // 2 + 1, "line": f"old {i}", "timestamp": float(i)}
            for i in range(50_000)]
    rows.insert(40_000, {"replica": "r0", "seq": 0, "line": "h" * 3_000_000, "timestamp": 39_999.5})
    legacy.write_text("".join(json.dumps(row) + "\n" for row in rows))
    archive = FileLogArchive(tmp_path, SMALL)
    assert archive.exists(REF)
    page = archive.open(REF).page(3, EVERY, {})
    assert [ln.line for ln in page.lines] == ["old 49997", "old 49998", "old 49999"]
    window = list(archive.open(REF).lines(EVERY, {}))  # the last MiB only: not the huge line, not the start
    assert window[-1].line == "old 49999" and len(window) < 50_000 and window[0].line != "old 0"
    assert archive.open(REF).page(2, lambda ln: ln.replica == "r1", {"r1": 24_999}).lines == [
        LogLine("r1", 25_000, "old 49999", 49_999.0)]
    archive.write(REF, iter([LogLine("r0", 1, "new", 1.0)]))  # archived again: the new format replaces it
    assert not legacy.exists() and [ln.line for ln in archive.read(REF)] == ["new"]


def test_the_benchmarks_flood_is_byte_for_byte_what_the_supervisor_writes(tmp_path):
    """benchmarks/log_tail.py (and tests/test_log_bounds.py) write the flooded log directly, for speed."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from log_tail import flood, stamp

    log = ReplicaLog(tmp_path / "w.log", SMALL)
    for seq in range(1, 60_001):
        log.feed(1, "o", (b"h" * 100_000 if seq == 59_990 else b"line %d" % seq) + b"\n", stamp(seq))
    log.close()
    assert (tmp_path / "w.log").read_bytes() == b"".join(flood(SMALL, 60_000, 59_990, 100_000))


def test_a_search_passes_over_blocks_without_its_text_and_finds_what_a_line_by_line_read_finds(tmp_path):
    """Lines longer than a block, texts across block edges, resuming after a seq: the same lines either way."""
    rng = random.Random(7)
    words = [b"alpha", b"beta", b"gamma", b"delta"]
    records, seq = [], 0
    for _ in range(500):
        seq += rng.choice((1, 1, 1, 40))  # gaps, as a cut leaves
        size = rng.choice((10, 80, 300, 10, 80, 300, 50_000, 100_000))
        text = b"x" * rng.randrange(size) + rng.choice(words) * (rng.random() < 0.1) + b"y" * rng.randrange(size)
        records.append(b"%d %d.000000 o %s\n" % (seq, seq, text))
    path = tmp_path / "w.log"
    path.write_bytes(b"".join(records))
    f = ReplicaFile("w", path)
    every_back, every_forward = list(f.backward()), list(f.forward())
    for needle in (b"alpha", b"gamma", b"xalphay", b"nowhere"):
        for after in (0, seq // 3, seq - 50):
            wanted = [ln for ln in every_back if ln.seq > after and needle.decode() in ln.line]
            assert list(f.backward(after, needle)) == wanted
            assert list(f.forward(after, needle)) == wanted[::-1]
    assert every_forward == every_back[::-1] and len(every_back) == 500
