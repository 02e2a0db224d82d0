"""Server-sent event streams for the UI: a run's states and a task run's logs, live.

Workers write state and logs; these streams only read (SQL, and logs through
`myapp.observation`) and push what changed. A stream ends after STREAM_SECONDS and the browser's EventSource
reconnects (with Last-Event-ID for logs), so a stream never holds a web thread for long.
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

from flask import Response, stream_with_context

from ..errors import DomainError
from ..extensions import db
from ..models import PipelineRun, TaskRun
from ..observation import LogFilter, LogTail, line_json
from .base import to_json_value

STREAM_SECONDS = 30.0
POLL_SECONDS = 0.5
RETRY_MS = 1500
TASK_RUN_FIELDS = ("id", "task_id", "attempt", "state", "reason", "exit_code", "backend",
                   "created_at", "submitted_at", "started_at", "finished_at")


def event(name: str, data: Any, event_id: str | None = None) -> str:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


def sse_response(events: Iterator[str]) -> Response:
    return Response(stream_with_context(events), mimetype="text/event-stream",
                    headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


def poll(step: Callable[[], tuple[list[str], bool]]) -> Iterator[str]:
    """The one polling loop of every stream: step() reads (then ends its read transaction, so the
    next poll sees the workers' commits) and returns (events, finished)."""
    yield f"retry: {RETRY_MS}\n\n"
    deadline = time.monotonic() + STREAM_SECONDS
    while True:
        events, finished = step()
        db.session.rollback()
        # With nothing new, a comment: detects a closed connection, keeps proxies from timing out.
        yield from events or [": idle\n\n"]
        if finished or time.monotonic() > deadline:
            return
        time.sleep(POLL_SECONDS)


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


def log_events(attempt_id: int, keep: LogFilter, after: dict[str, int], first_limit: int) -> Iterator[str]:
    """`lines` events with new log lines (filtered by keep); `end` when the attempt has finished.

    The event id is the tail's cursor, which advances over every line read, kept or not, so a
    filter never makes lines come back on reconnect.
    """
    tail = LogTail(after, keep)
    first = True

    def step() -> tuple[list[str], bool]:
        nonlocal first
        attempt = db.session.get(TaskRun, attempt_id, populate_existing=True)
        if attempt is None:
            return [event("end", {"reason": "deleted"})], True
        finished, state = attempt.is_finished, attempt.state.value
        try:
            kept = tail.read(attempt)
        except DomainError as exc:  # e.g. the cluster is unreachable: say so, keep polling
            return [event("problem", {"state": state, "message": exc.message})], False
        if first:
            kept = kept[-first_limit:]  # a reconnect or a huge log starts from its tail
            first = False
        events = []
        if kept:
            events.append(event("lines", {"state": state, "items": [line_json(ln) for ln in kept]},
                                event_id=format_cursor(tail.cursor)))
        if finished:
            events.append(event("end", {"state": state}, event_id=format_cursor(tail.cursor)))
        return events, finished

    return poll(step)
