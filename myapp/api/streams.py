"""Server-sent event streams for the UI: a run's states and a task run's logs, live.

Workers write state and logs; these streams only read (SQL, and logs through
`myapp.pipelines.observation`) and push what changed. A stream ends after STREAM_SECONDS and the browser's EventSource
reconnects (with Last-Event-ID for logs).

Streams cannot starve the web server (gunicorn gthread: each open stream holds one thread):
- one poller thread per process (`Poller`) runs every open stream's read in turn, on one database
  connection, so 200 open streams cost one thread's work, not 200 threads polling SQL at once; a
  stream's own thread only waits for what the poller hands it (and reads once when it opens);
- caps (`Slots`): MYAPP_STREAMS_PER_USER streams per user, counted across the web processes (in Redis,
  or without it a SQLite file in the instance folder: myapp/shared/limits.py), and per process what
  its threads allow (MYAPP_WEB_THREADS less a reserve for other requests, or MYAPP_STREAMS_PER_PROCESS);
  beyond, 429 with Retry-After (the UI retries later).
"""
from __future__ import annotations

import json
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from flask import Flask, Response, current_app, stream_with_context

from ..errors import DomainError
from ..extensions import db
from ..models import PipelineRun, TaskRun
from ..pipelines.observation import LogFilter, LogTail, line_json
from ..shared.limits import SlotStore, slot_store
from .errors import ApiError
from .rows import to_json_value
from .scope import current_user

STREAM_SECONDS = 30.0
POLL_SECONDS = 0.5
RETRY_MS = 1500
RETRY_AFTER_SECONDS = 10  # a refused stream: when to try again
# A slot in the shared file outlives its stream's STREAM_SECONDS by this much at most: then it counts no
# more, should its process have died holding it.
SLOT_SECONDS = STREAM_SECONDS + 30.0
DEFAULT_STREAMS_PER_PROCESS = 100  # without MYAPP_WEB_THREADS (e.g. a development server)
TASK_RUN_FIELDS = ("id", "task_id", "attempt", "state", "reason", "exit_code", "backend",
                   "created_at", "submitted_at", "started_at", "finished_at", "queue_position", "preemptions",
                   "cause")
Step = Callable[[], tuple[list[str], bool]]
log = logging.getLogger(__name__)


def event(name: str, data: Any, event_id: str | None = None) -> str:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


class TooManyStreams(ApiError):
    status = 429

    def response(self) -> Response:
        response = super().response()
        response.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response


# ---- caps -----------------------------------------------------------------------------------------------
def process_cap(config: Any) -> int:
    """Streams one web process may hold: its threads less a reserve (an eighth, at least 8) that stays
    free for every other request (/health, the API)."""
    if config.get("MYAPP_STREAMS_PER_PROCESS"):
        return int(config["MYAPP_STREAMS_PER_PROCESS"])
    threads = int(config.get("MYAPP_WEB_THREADS") or 0)
    return max(1, threads - max(8, threads // 8)) if threads else DEFAULT_STREAMS_PER_PROCESS


def _per_user_refusal(per_user: int) -> TooManyStreams:
    return TooManyStreams(f"Too many open streams: at most {per_user} per user; close a page or "
                          f"try again in {RETRY_AFTER_SECONDS} s")


class Slots:
    """Open streams of this process, per user and in all; the per-user count in `shared` (every web
    process: myapp/shared/limits.py) when given, else in this process."""

    def __init__(self, shared: SlotStore | None = None) -> None:
        self.lock = threading.Lock()
        self.per_user: dict[int, int] = {}
        self.total = 0
        self.shared = shared

    def take(self, user_id: int, per_user: int, cap: int) -> Callable[[], None]:
        """A slot, or 429; returns its release (idempotent)."""
        with self.lock:
            if self.shared is None and self.per_user.get(user_id, 0) >= per_user:
                raise _per_user_refusal(per_user)
            if self.total >= cap:
                raise TooManyStreams(f"The server has {cap} streams open, its limit: try again in "
                                     f"{RETRY_AFTER_SECONDS} s")
            self.per_user[user_id] = self.per_user.get(user_id, 0) + 1
            self.total += 1
        released = False

        def release() -> None:
            nonlocal released
            with self.lock:
                if released:
                    return
                released = True
                self.total -= 1
                self.per_user[user_id] -= 1
                if not self.per_user[user_id]:
                    del self.per_user[user_id]
            if shared_slot is not None:
                self.shared.release_slot(shared_slot)  # type: ignore[union-attr]

        shared_slot = None
        if self.shared is not None:
            try:
                shared_slot = self.shared.take_slot(user_id, per_user, SLOT_SECONDS)
            except BaseException:
                release()
                raise
            if shared_slot is None:
                release()
                raise _per_user_refusal(per_user)
        return release


# ---- the poller ------------------------------------------------------------------------------------------
class Feed:
    """One open stream as the poller sees it: its read, and where the results go."""

    def __init__(self, step: Step) -> None:
        self.step = step
        self.results: queue.SimpleQueue[tuple[list[str], bool]] = queue.SimpleQueue()
        self.done = False


class Poller:
    """One thread per process: every POLL_SECONDS it runs each open stream's step (in its own app
    context and session, ending the read transaction after each), and hands the events over."""

    def __init__(self, app: Flask) -> None:
        self.app = app
        self.lock = threading.Lock()
        self.feeds: set[Feed] = set()
        self.wake = threading.Event()
        self.thread: threading.Thread | None = None

    def add(self, feed: Feed) -> None:
        with self.lock:
            self.feeds.add(feed)
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self.run, name="myapp-stream-poller", daemon=True)
                self.thread.start()
        self.wake.set()

    def remove(self, feed: Feed) -> None:
        with self.lock:
            self.feeds.discard(feed)

    def run(self) -> None:
        with self.app.app_context():
            while True:
                self.wake.wait()
                started = time.monotonic()
                with self.lock:
                    feeds = [f for f in self.feeds if not f.done]
                    if not feeds:
                        self.wake.clear()
                        continue
                for feed in feeds:
                    self.poll(feed)
                time.sleep(max(0.0, POLL_SECONDS - (time.monotonic() - started)))

    @staticmethod
    def poll(feed: Feed) -> None:
        try:
            events, finished = feed.step()
        except Exception as exc:  # one broken stream must not stop the others: it ends, saying why
            log.exception("stream read failed")
            events, finished = [event("problem", {"message": f"the stream failed: {exc}"})], True
        finally:
            db.session.rollback()  # the next poll sees the workers' commits
        feed.done = finished
        feed.results.put((events, finished))


def poller() -> Poller:
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    found = app.extensions.get("myapp-stream-poller")
    if found is None:
        found = app.extensions.setdefault("myapp-stream-poller", Poller(app))
    return found


def sse_response(events: Iterator[str]) -> Response:
    """The stream's answer, once the caller has a slot (429 if not)."""
    config = current_app.config
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    slots = app.extensions.get("myapp-stream-slots")
    if slots is None:
        slots = app.extensions.setdefault("myapp-stream-slots", Slots(slot_store(app)))
    release = slots.take(
        current_user().id, int(config["MYAPP_STREAMS_PER_USER"]), process_cap(config))
    try:
        response = Response(stream_with_context(_released_at_end(events, release)), mimetype="text/event-stream",
                            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    except BaseException:
        release()
        raise
    response.call_on_close(release)  # the client left (or the stream never started)
    return response


def _released_at_end(events: Iterator[str], release: Callable[[], None]) -> Iterator[str]:
    """The slot is free as soon as the last event is out: the server writes the end of the answer
    before it closes the response, and a client reconnecting at once must find its slot free."""
    try:
        yield from events
    finally:
        release()


def poll(step: Step) -> Iterator[str]:
    """The one loop of every stream: the first read here (the stream's answer starts at once), then
    what the poller reads for it; step() returns (events, finished)."""
    yield f"retry: {RETRY_MS}\n\n"
    deadline = time.monotonic() + STREAM_SECONDS
    events, finished = step()
    db.session.rollback()
    yield from events or [": idle\n\n"]
    if finished:
        return
    feed, hub = Feed(step), poller()
    hub.add(feed)
    try:
        while time.monotonic() < deadline:
            try:
                events, finished = feed.results.get(timeout=POLL_SECONDS * 4)
            except queue.Empty:  # the poller is busy: a comment keeps the connection (and proxies) alive
                events, finished = [], False
            # With nothing new, a comment: detects a closed connection, keeps proxies from timing out.
            yield from events or [": idle\n\n"]
            if finished:
                return
    finally:
        feed.done = True
        hub.remove(feed)


def run_events(run_id: int, present: Callable[[Any], dict[str, Any]]) -> Iterator[str]:
    """`run` events with the run and its task runs whenever any of them changes; `end` once finished."""
    last = ""

    def step() -> tuple[list[str], bool]:
        nonlocal last
        run = db.session.get(PipelineRun, run_id, populate_existing=True)
        if run is None:
            return [event("end", {"reason": "deleted"})], True
        attempts = db.session.scalars(
            db.select(TaskRun).filter_by(pipeline_run_id=run_id).order_by(TaskRun.task_id, TaskRun.attempt)
        ).all()
        # reconciled_at changes on every controller pass; it is a lock, not news for the UI.
        snapshot = {"run": {k: v for k, v in present(run).items() if k != "reconciled_at"}, "task_runs": [
            {f: to_json_value(getattr(a, f)) for f in TASK_RUN_FIELDS} for a in attempts]}
        events = []
        text = json.dumps(snapshot, sort_keys=True)
        if text != last:
            last = text
            events.append(event("run", snapshot))
        if run.is_finished:
            events.append(event("end", {"reason": "finished"}))
        return events, run.is_finished

    return poll(step)


def parse_cursor(text: str | None) -> dict[str, int]:
    """Last-Event-ID of a log stream: 'replica:seq,replica:seq' (the last line seen per replica)."""
    after: dict[str, int] = {}
    for part in (text or "").split(","):
        replica, _, seq = part.rpartition(":")
        if replica and seq.isdigit():
            after[replica] = int(seq)
    return after


def format_cursor(after: dict[str, int]) -> str:
    return ",".join(f"{replica}:{seq}" for replica, seq in sorted(after.items()))


def log_events(attempt_id: int, keep: LogFilter, after: dict[str, int], limit: int) -> Iterator[str]:
    """`lines` events with new log lines (filtered by keep); `end` when the attempt has finished.

    Each poll sends at most the last ``limit`` new lines (a reconnect or a huge log starts from its tail,
    read from the end of the files). The event id is the tail's cursor, which advances over every line
    written, sent or not, so a filter never makes lines come back on reconnect.
    """
    tail = LogTail(after, keep, limit)

    def step() -> tuple[list[str], bool]:
        attempt = db.session.get(TaskRun, attempt_id, populate_existing=True)
        if attempt is None:
            return [event("end", {"reason": "deleted"})], True
        finished, state = attempt.is_finished, attempt.state.value
        try:
            kept = tail.read(attempt)
        except DomainError as exc:  # e.g. the cluster is unreachable: say so, keep polling
            return [event("problem", {"state": state, "message": exc.message})], False
        events = []
        if kept:
            events.append(event("lines", {"state": state, "items": [line_json(ln) for ln in kept]},
                                event_id=format_cursor(tail.cursor)))
        if finished:
            events.append(event("end", {"state": state}, event_id=format_cursor(tail.cursor)))
        return events, finished

    return poll(step)
