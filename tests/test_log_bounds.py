"""A job that floods its log cannot make reading it expensive: the attack.

The job printed 5,000,000 short lines and one 50 MB line. Its replica log, as the supervisor leaves it at the
default caps (64 MiB, 16 KiB lines; written directly, byte for byte what the supervisor writes:
tests/backends/test_log_caps.py), is read through the task-run API while the attempt runs (the backend's live
files) and once it is archived. The last 100 lines cost what they hold (bytes read and memory) and come
within 1 s (benchmarks/log_tail.py times them finely); a search and the download stream the file; a stream
resumes by seq across the cut.
"""
from __future__ import annotations

import shutil
import sys
import time
import tracemalloc
from pathlib import Path

import psutil
import pytest

from myapp.backends.logcaps import LogLimits
from tests.pipelines.test_observation import make_attempt, task_id  # noqa: F401 - task_id is a fixture

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from log_tail import Counted, write_flood

PRINTED, HUGE_AT = 5_000_000, 4_999_900
BLOCKS = 4 * 64 * 1024  # a page reads the last blocks of each file: where it ends, its last seq, its lines
MB = 1 << 20


@pytest.fixture(scope="module")
def flooded(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("flood") / "worker-0.log"
    write_flood(path, LogLimits(), PRINTED, HUGE_AT)
    return path


class LiveFiles:
    """A backend whose running attempt has the flooded file as its live log (as LocalBackend.log_source)."""

    name = "live-files"

    def __init__(self, path: Path):
        self.path = path

    def log_source(self, ref):
        from myapp.backends.logrecords import ReplicaFiles

        return ReplicaFiles({"worker-0": self.path})

    def logs(self, ref, follow=False, after=None):
        raise AssertionError("the live log is read through log_source, never whole")


@pytest.fixture(params=["live", "archived"])
def attempt_id(request, app, task_id, flooded, monkeypatch):  # noqa: F811
    """A running attempt reading the flooded file live, or a finished one whose archive holds it."""
    from myapp.backends import JobRef
    from myapp.backends.archive import _file_name
    from myapp.backends.registry import log_archive
    from myapp.pipelines import observation

    monkeypatch.setattr(observation, "backend_for", lambda task: LiveFiles(flooded))
    if request.param == "live":
        return make_attempt(app, task_id)
    attempt = make_attempt(app, task_id, state="succeeded")
    with app.app_context():
        from myapp.extensions import db
        from myapp.models import TaskRun

        ref = JobRef.from_dict(db.session.get(TaskRun, attempt).backend_ref)
        folder = log_archive().path(ref)
    folder.mkdir(parents=True)
    shutil.copyfile(flooded, folder / _file_name("worker-0"))
    return attempt


@pytest.fixture()
def counted(monkeypatch) -> Counted:
    from myapp.backends import logrecords

    counter = Counted()
    monkeypatch.setattr(logrecords, "open", counter, raising=False)
    return counter


def costs(call):
    """(result, peak of Python's allocations, RSS growth) of one call."""
    process = psutil.Process()
    before = process.memory_info().rss
    tracemalloc.start()
    try:
        result = call()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return result, peak, process.memory_info().rss - before


def test_the_flooded_log_is_within_its_cap_and_says_so(flooded):
    from myapp.backends.logrecords import ReplicaFile, ReplicaFiles
    from myapp.pipelines.observation import LogFilter

    assert flooded.stat().st_size <= LogLimits().max_bytes
    cut, counted = ReplicaFiles({"w": flooded}).lines(LogFilter(search="[log cut: "), {})
    assert "reached its cap of 67108864 bytes" in cut.line
    assert counted.line.startswith(f"[log cut: {counted.seq - cut.seq + 1} lines (")  # every seq in between
    huge = next(ReplicaFile("w", flooded).forward(HUGE_AT - 1))
    assert huge.seq == HUGE_AT and huge.line == "h" * 16384 + f" …[line cut: {50_000_000 - 16384} bytes dropped]"


def test_the_last_100_lines_at_the_cap_cost_what_they_hold(app, user, attempt_id, counted):
    resp, peak, rss = costs(lambda: user.get(f"/api/v1/task_run/{attempt_id}/logs", query_string={"limit": 100}))
    body = resp.get_json()
    assert resp.status_code == 200, body
    assert [item["seq"] for item in body["items"]] == list(range(PRINTED - 99, PRINTED + 1))
    assert body["replicas"] == ["worker-0"]
    held = sum(len(item["line"]) for item in body["items"])  # the cut 50 MB line is one of them: 16 KiB
    assert counted.bytes <= BLOCKS + held, f"{counted.bytes:,} bytes read of a {64 * MB:,}-byte file"
    assert peak <= 4 * MB + 20 * held, f"{peak:,} bytes allocated at the peak"
    assert rss <= 50 * MB
    started = time.perf_counter()  # timed apart from tracemalloc, which slows every allocation
    again = user.get(f"/api/v1/task_run/{attempt_id}/logs", query_string={"limit": 100})
    elapsed = time.perf_counter() - started
    assert again.get_json()["items"] == body["items"] and elapsed <= 1.0, f"{elapsed:.2f} s for the last 100 lines"


@pytest.mark.parametrize("attempt_id", ["archived"], indirect=True)  # live files are read by the same class
def test_search_and_download_stream_the_file(app, user, attempt_id, counted, flooded):
    from myapp.backends.logrecords import ReplicaFiles
    from myapp.pipelines.observation import LogFilter

    url = f"/api/v1/task_run/{attempt_id}"
    found, peak, _ = costs(lambda: user.get(f"{url}/logs", query_string={"search": "line 1234567", "limit": 5}))
    assert [item["seq"] for item in found.get_json()["items"]] == [1234567]
    assert counted.bytes >= 60 * MB and peak <= 8 * MB  # the file read back to its start, 5 lines held at most

    def download():
        got = user.get(f"{url}/log_download", query_string={"search": "line 4999"}, buffered=False)
        assert got.status_code == 200 and got.mimetype == "text/plain"
        assert got.headers["Content-Disposition"].startswith("attachment; filename=")
        lines, biggest = 0, 0
        for piece in got.response:  # the body as the server sends it
            lines += piece.count(b"\n")
            biggest = max(biggest, len(piece))
        got.close()
        return lines, biggest

    (lines, biggest), peak, _ = costs(download)
    wanted = LogFilter(search="line 4999")
    assert lines == sum(1 for _ in ReplicaFiles({"worker-0": flooded}).lines(wanted, {})) > 1000
    assert biggest <= 128 * 1024 and peak <= 8 * MB


def test_a_stream_resumes_by_seq_across_the_cut(app, attempt_id):
    from myapp.api import streams
    from myapp.pipelines.observation import LogFilter, LogTail

    with app.app_context():
        from myapp.extensions import db
        from myapp.models import TaskRun

        attempt = db.session.get(TaskRun, attempt_id)
        # The cut mark has the seq of the first dropped line, the count of what was dropped the last one's.
        cut, counted = LogTail({}, LogFilter(search="[log cut"), limit=10).read(attempt)
        assert PRINTED - 200_000 < counted.seq < PRINTED - 100 and cut.seq < counted.seq
        # From a dropped seq: the kept end's last lines, and the cursor at the end.
        tail = LogTail({"worker-0": cut.seq + 1000}, LogFilter(), limit=3)
        assert [ln.seq for ln in tail.read(attempt)] == [PRINTED - 2, PRINTED - 1, PRINTED]
        assert tail.cursor == {"worker-0": PRINTED} and tail.read(attempt) == []
        # From the head's last line: the marks, then every kept line of the end, none twice, none lost.
        after_head = LogTail({"worker-0": cut.seq - 1}, LogFilter(), limit=200_000).read(attempt)
        assert [ln.seq for ln in after_head[:3]] == [cut.seq, counted.seq, counted.seq + 1]
        assert [ln.seq for ln in after_head[2:]] == list(range(counted.seq + 1, PRINTED + 1))

    with app.test_request_context(), app.app_context():  # Last-Event-ID at a dropped seq
        events = streams.log_events(attempt_id, LogFilter(), {"worker-0": cut.seq + 5}, 100)
        next(events)  # the retry hint
        lines = next(events)
    assert "\nevent: lines\n" in lines and lines.startswith(f"id: worker-0:{PRINTED}\n")
    assert lines.count('"seq"') == 100
