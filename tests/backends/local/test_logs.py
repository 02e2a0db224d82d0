"""Logs of local jobs: per-replica files merged with tags, follow mode, resume without duplicates."""
from __future__ import annotations

import threading
import time

import pytest

from myapp.backends.base import JobState
from tests.backends.local.support import finished, lines_of, python_script, render_template
from tests.support import wait_until

pytestmark = pytest.mark.slow  # every test runs real jobs

# Every replica prints 40 lines (stdout and stderr), 10 ms apart; the master waits for the others.
CHATTY = """
import glob, os, sys, time
me = os.environ['HOSTNAME']
for i in range(40):
    stream = sys.stderr if i % 4 == 3 else sys.stdout
    print(f'{me} line {i}', file=stream, flush=True)
    time.sleep(0.01)
open('finished-' + me, 'w').close()
while len(glob.glob('finished-*')) < 3:
    time.sleep(0.01)
"""


def _chatty_job(backend):
    manifests = render_template("pytorch-ddp", {"workers": 2})
    python_script(manifests, CHATTY)
    return backend.submit(manifests)


def test_merged_logs_are_tagged_with_per_replica_seq(backend):
    ref = _chatty_job(backend)
    assert finished(backend, ref).state is JobState.SUCCEEDED
    lines = list(backend.logs(ref))
    assert len(lines) == 120
    by_replica = {}
    for line in lines:
        by_replica.setdefault(line.replica, []).append(line)
    assert sorted(by_replica) == ["master-0", "worker-0", "worker-1"]
    for replica, own in by_replica.items():
        assert [x.seq for x in own] == list(range(1, 41))
        assert [x.line.rsplit(" ", 1)[1] for x in own] == [str(i) for i in range(40)]  # stdout+stderr in order
        assert all(x.line.startswith(f"{ref.job_name}-{replica}") for x in own)
    stamps = [x.timestamp for x in lines]
    assert stamps == sorted(stamps)  # merged by time


def test_follow_streams_while_running_and_ends_with_the_job(backend):
    ref = _chatty_job(backend)
    seen, ended = [], threading.Event()

    def follow():
        for line in backend.logs(ref, follow=True):
            seen.append((line, time.time()))
        ended.set()

    thread = threading.Thread(target=follow, daemon=True)
    thread.start()
    wait_until(lambda: len(seen) >= 10, what="lines while the job runs")
    assert backend.status(ref).state is JobState.RUNNING
    assert ended.wait(30), "follow did not end with the job"
    assert backend.status(ref).state is JobState.SUCCEEDED
    assert len(seen) == 120
    assert max(delivered - line.timestamp for line, delivered in seen) < 2.0


def test_resume_after_seq_has_no_duplicates_and_no_gaps(backend):
    ref = _chatty_job(backend)
    got, after = [], {}
    first = backend.logs(ref, follow=True)
    for line in first:  # read a part while running, then drop the stream
        got.append(line)
        after[line.replica] = line.seq
        if len(got) == 25:
            break
    first.close()
    got += list(backend.logs(ref, follow=True, after=after))
    keys = [(x.replica, x.seq) for x in got]
    assert len(keys) == len(set(keys)) == 120
    again = list(backend.logs(ref, after={"master-0": 40, "worker-0": 39}))
    assert [(x.replica, x.seq) for x in again if x.replica != "worker-1"] == [("worker-0", 40)]
    assert len([x for x in again if x.replica == "worker-1"]) == 40


def test_partial_and_long_lines_and_restarts_append(backend):
    script = ("import sys; sys.stdout.write('x' * 70000 + '\\n'); sys.stdout.write('no newline at end'); "
              "sys.stdout.flush(); open('n', 'a').write('.'); sys.exit(1 if len(open('n').read()) < 2 else 0)")
    ref = backend.submit(render_template("python", {"script": script, "backoff_limit": 1}))
    assert finished(backend, ref).state is JobState.SUCCEEDED
    lines = list(backend.logs(ref))
    cut = "x" * 16384 + f" …[line cut: {70000 - 16384} bytes dropped]"  # MYAPP_LOG_MAX_LINE's default
    assert [x.line for x in lines] == [cut, "no newline at end"] * 2
    assert [x.seq for x in lines] == [1, 2, 3, 4]


# 20,000 short lines, one 5 MB line, 20,000 more and a last word (one stream: their order is the file's).
FLOOD = """
import sys
for i in range(20000):
    print(f'line {i}')
sys.stdout.write('h' * 5_000_000 + '\\n')
for i in range(20000):
    print(f'more {i}')
print('last words', flush=True)
"""


def test_the_supervisor_keeps_a_replica_log_within_its_caps(backends, monkeypatch):
    """The caps reach the supervisor from the platform's environment; the file stays under the cap, says
    where it was cut, keeps its end, and every line keeps the seq it was printed with."""
    monkeypatch.setenv("MYAPP_LOG_MAX_BYTES_PER_REPLICA", str(256 * 1024))
    monkeypatch.setenv("MYAPP_LOG_MAX_LINE", "2048")
    backend = backends()
    ref = backend.submit(render_template("python", {"script": FLOOD}))
    assert finished(backend, ref).state is JobState.SUCCEEDED
    (path,) = (backend.job_dir(ref) / ".myapp" / "logs").iterdir()
    assert path.stat().st_size <= 256 * 1024
    lines = list(backend.logs(ref))
    assert lines[0].line == "line 0" and lines[-1].line == "last words" and lines[-1].seq == 40002
    marks = [x.line for x in lines if x.line.startswith("[log cut")]
    assert len(marks) == 2 and "reached its cap of 262144 bytes" in marks[0] and "lines" in marks[1]
    page = backend.log_source(ref).page(3, lambda line: True, {})
    assert [(x.seq, x.line) for x in page.lines] == [(40000, "more 19998"), (40001, "more 19999"),
                                                     (40002, "last words")]


def test_logs_of_the_whole_job_after_a_new_backend_instance(backends):
    first = backends()
    ref = first.submit(render_template("python", {"script": "print('hello'); import time; time.sleep(0.2)"}))
    assert finished(first, ref).state is JobState.SUCCEEDED
    assert lines_of(backends(), ref) == ["hello"]
