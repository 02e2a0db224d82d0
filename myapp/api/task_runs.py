"""Task runs, read-only (the run controller writes them): an attempt's logs (paged, downloaded whole,
streamed), its CPU/memory/GPU samples, the metrics a job reports, and its outputs (listed, zipped, one
file downloaded or previewed, fetched by the worker from a cluster's claim when not here).
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from flask import Response, current_app, jsonify, request
from marshmallow import fields

from ..errors import DomainError, Kind
from ..extensions import db
from ..inputs.fields import StrictSchema
from ..models import Project, ProjectRole, TaskRun
from ..rendering.pod import replica_names
from ..shared import reconcile_requests
from .base import ResourceApi, bounded_int, query_args
from .errors import Forbidden
from .responses import (
    ERROR,
    LOG_EVENTS,
    MESSAGE,
    TASK_LOGS,
    TASK_METRICS,
    TASK_OUTPUTS,
    TASK_RUN_OUTPUT,
)
from .routing import json_body, route

MAX_LOG_LINES = 10_000
LOG_TEXT = {"type": "string", "description": "`<ISO time> [replica] text` per line"}


def _log_text(lines: Iterator[Any]) -> Iterator[bytes]:
    """The download's body, in pieces of about 64 KiB as the lines are read (never the whole log at once)."""
    piece: list[str] = []
    size = 0
    for line in lines:
        stamp = datetime.fromtimestamp(line.timestamp, UTC).isoformat(timespec="milliseconds")
        text = f"{stamp.replace('+00:00', 'Z')} [{line.replica}] {line.line}\n"
        piece.append(text)
        size += len(text)
        if size >= 1 << 16:
            yield "".join(piece).encode()
            piece, size = [], 0
    if piece:
        yield "".join(piece).encode()


REPORTED = {"type": "object", "properties": {"kept": {"type": "integer"}}, "required": ["kept"],
            "additionalProperties": False}


class ReportMetricsSchema(StrictSchema):
    # Checked by outputs_store.report (finite numbers, names, bounds): marshmallow only shapes the body.
    step = fields.Raw(required=True, metadata={"type": "integer", "minimum": 0})
    values = fields.Dict(keys=fields.String(), values=fields.Raw(metadata={"type": "number"}), required=True,
                         metadata={"description": "metric name -> finite number, 1 to 100 of them"})
# What an output file answers as: a download, a zip of them all, a text preview, an image.
OUTPUT_MEDIA_TYPES = ("application/octet-stream, application/zip, text/plain, "
                      "image/png, image/jpeg, image/gif, image/webp")


class TaskRunApi(ResourceApi):
    """Read-only: task runs are written by the run controller, never by hand."""

    resource_name = "task_run"
    class_permission_name = "TaskRun"
    model = TaskRun
    label = "task run"
    filters = ("project_id", "pipeline_run_id", "task_id", "state")
    orders = ("id", "created_at", "started_at")
    include_route_methods = {"get_list", "get", "logs", "log_stream", "log_download", "metrics", "outputs",
                             "output_file", "report_metrics"}
    output_fields = TASK_RUN_OUTPUT

    @staticmethod
    def _log_filter(args: dict[str, str]):
        from ..pipelines.observation import LogFilter

        return LogFilter(replica=args.get("replica"), search=args.get("search"))

    @route("/<int:pk>/logs", summary="Aggregated logs of every replica: live while running, archived after",
           query={"replica": "only this replica (e.g. worker-1)", "search": "only lines containing this text",
                  "limit": f"the last N lines (default 1000, at most {MAX_LOG_LINES})"}, response=TASK_LOGS)
    def logs(self, pk: int):
        from ..pipelines.observation import line_json, read_page

        attempt = self.load(pk)
        args = query_args({"replica", "search", "limit"})
        limit = bounded_int(args, "limit", 1000, 1, MAX_LOG_LINES)
        page = read_page(attempt, limit, self._log_filter(args))
        # Every replica of the job, also those without a line (the picker lists what the metrics chart).
        replicas = sorted(set(page.replicas) | set(replica_names(attempt.manifests)))
        return jsonify(replicas=replicas, items=[line_json(ln) for ln in page.lines])

    @route("/<int:pk>/log_download", summary="The whole log as text, one line per log line "
           "(`<ISO time> [replica] text`), streamed as it is read", query={
               "replica": "only this replica", "search": "only lines containing this text"},
           response=LOG_TEXT, media_type="text/plain")
    def log_download(self, pk: int):
        from ..pipelines.observation import stream_lines

        attempt = self.load(pk)
        lines = stream_lines(attempt, self._log_filter(query_args({"replica", "search"})))
        name = f"task-run-{attempt.id}-attempt{attempt.attempt}.log"
        return Response(_log_text(lines), mimetype="text/plain",
                        headers={"Content-Disposition": f'attachment; filename="{name}"'})

    @route("/<int:pk>/log_stream", summary="Server-sent events: `lines` as they are written, `end` when finished",
           query={"replica": "only this replica", "search": "only lines containing this text"},
           response=LOG_EVENTS, media_type="text/event-stream")
    def log_stream(self, pk: int):
        from .streams import log_events, parse_cursor, sse_response

        self.load(pk)
        args = query_args({"replica", "search"})
        after = parse_cursor(request.headers.get("Last-Event-ID"))
        return sse_response(log_events(pk, self._log_filter(args), after, MAX_LOG_LINES))

    @route("/<int:pk>/metrics", summary="CPU, memory and GPU samples: live while running, kept after",
           response=TASK_METRICS)
    def metrics(self, pk: int):
        from ..pipelines.observation import read_metrics

        return jsonify(items=read_metrics(self.load(pk)))

    @route("/<int:pk>/outputs", summary="What the attempt wrote to MYAPP_OUTPUT_DIR (listed when it ended; live "
           "while it runs) and the metrics it reported in metrics.jsonl", response=TASK_OUTPUTS)
    def outputs(self, pk: int):
        from ..outputs import store as outputs_store

        attempt = self.load(pk)
        namespace = db.session.get(Project, attempt.project_id).namespace
        files, metrics = outputs_store.current(attempt, namespace)
        return jsonify(output_dir=attempt.output_dir, files=files, metrics=metrics)

    @route("/<int:pk>/reported_metrics", methods=("POST",), permission="write", body=ReportMetricsSchema,
           summary="Report metrics of a running attempt at a step (a task, with its run's token): kept with "
                   "the attempt beside those of metrics.jsonl", response=REPORTED)
    def report_metrics(self, pk: int):
        from ..auth.claims import RUN_CLAIM
        from ..auth.security import run_claims
        from ..outputs import store as outputs_store

        attempt = self.load(pk, ProjectRole.DEVELOPER)
        claims = run_claims()
        if claims is not None and int(claims[RUN_CLAIM]) != attempt.pipeline_run_id:
            raise Forbidden(f"this token is run {claims[RUN_CLAIM]}'s: it reports metrics of that run's tasks only")
        body = ReportMetricsSchema().load(json_body())
        return jsonify(kept=outputs_store.report(outputs_store.lock(attempt.id), body["step"], body["values"]))

    @route("/<int:pk>/output", summary="One output file: a download, or with preview=1 its start as text "
           "(images are shown as they are); without path, every file in one zip",
           query={"path": "the file, relative to the output folder (none: all of them, zipped)",
                  "preview": "1: the first 64 KiB, as text"},
           response={"type": "string", "format": "binary"}, media_type=OUTPUT_MEDIA_TYPES,
           answers={"202": {"description": "A file left on a Kubernetes outputs claim (`on_claim`) is being "
                            "fetched by the worker (for a preview, only its first 64 KiB): ask again after "
                            "Retry-After seconds",
                            "headers": {"Retry-After": {"schema": {"type": "integer"}}},
                            "content": {"application/json": {"schema": MESSAGE}}},
                    "422": {"description": "The file is larger than the platform fetches from a cluster",
                            "content": {"application/json": {"schema": ERROR}}},
                    "503": {"description": "The last fetch from the cluster failed (the reason, answered once to "
                            "GET; ask again to retry)", "content": {"application/json": {"schema": ERROR}}}})
    def output_file(self, pk: int):
        from flask import send_file

        from ..outputs import fetch as outputs_fetch
        from ..outputs import store as outputs_store

        attempt = self.load(pk)
        args = query_args({"path", "preview"})
        path = args.get("path")
        namespace = db.session.get(Project, attempt.project_id).namespace
        if path is None:
            return send_file(outputs_store.archive(attempt, namespace), mimetype="application/zip",
                             as_attachment=True, download_name=f"task-run-{attempt.id}-outputs.zip")
        kind = outputs_store.preview_kind(path)
        name = path.rsplit("/", 1)[-1]
        if args.get("preview") == "1" and kind in ("text", "csv", "metrics"):
            try:
                with outputs_fetch.open_preview(attempt, namespace, path) as fh:
                    text = fh.read(outputs_store.PREVIEW_BYTES).decode("utf-8", errors="replace")
            except DomainError as exc:
                return self._fetch_from_claim(attempt, namespace, path, exc, preview=True)
            return current_app.response_class(text, mimetype="text/plain")
        try:
            stream = outputs_store.open_file(attempt, namespace, path)
        except DomainError as exc:
            return self._fetch_from_claim(attempt, namespace, path, exc)
        if kind == "image":  # shown inline by the run view; nothing a browser would run (no SVG)
            return send_file(stream, mimetype=outputs_store.IMAGE_TYPES[os.path.splitext(name)[1].lower()],
                             download_name=name)
        # Anything else downloads: a job's HTML must never render on the platform's origin.
        return send_file(stream, mimetype="application/octet-stream", as_attachment=True, download_name=name)

    @staticmethod
    def _fetch_from_claim(attempt: TaskRun, namespace: str, path: str, missing: DomainError, preview: bool = False):
        """A file not here that an attempt left on a cluster's claim: 202 while the worker fetches it (or, for
        a preview, its start); any other file: the error that said it is not here."""
        from ..outputs import fetch as outputs_fetch

        celery = current_app.extensions["celery"]
        fetching = missing.kind == Kind.NOT_FOUND and outputs_fetch.request_fetch(
            attempt, namespace, path, lambda: celery.send_task(
                "myapp.fetch_output", args=[attempt.id, path, preview], queue=reconcile_requests.BACKGROUND_QUEUE),
            preview=preview, keep_failure=request.method == "HEAD")
        if not fetching:
            raise missing
        answer = jsonify(message=fetching)
        answer.status_code = 202
        answer.headers["Retry-After"] = str(outputs_fetch.RETRY_AFTER_SECONDS)
        return answer
