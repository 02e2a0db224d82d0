"""HTTP front of the double: routes Kubernetes REST paths to the store, streams watches and
logs with chunked encoding, and applies injected faults. One thread per connection."""
from __future__ import annotations

import json
import re
import select
import socket
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from . import disruptions, registry
from .pods import container_finished, format_timestamp, waiting_reason
from .store import ApiError, field_matcher, label_matcher, validation_causes

if TYPE_CHECKING:
    from .double import ApiServerDouble

_PATH = re.compile(
    r"^/(?:api/(?P<core>v1)|apis/(?P<group>[^/]+)/(?P<version>[^/]+))"
    r"(?:/namespaces/(?P<ns>[^/]+))?/(?P<plural>[^/]+)(?:/(?P<name>[^/]+))?(?:/(?P<sub>[^/]+))?/?$")
MERGE_TYPES = ("application/merge-patch+json", "application/strategic-merge-patch+json")


class StreamCut(Exception):
    """Raised inside a streaming handler to cut the connection without a final chunk."""


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: DoubleHTTPServer

    def log_message(self, *args: Any) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PATCH(self) -> None:
        self._dispatch("PATCH")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    # --- plumbing ------------------------------------------------------------------------

    def _dispatch(self, method: str) -> None:
        double = self.server.double
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        double._record(method, url.path, query, raw, {k.lower(): v for k, v in self.headers.items()})
        fault = double.faults.match(method, url.path)
        try:
            if fault is not None and fault.status is not None:
                headers = {"Retry-After": f"{fault.retry_after:g}"} if fault.retry_after is not None else {}
                reason = {429: "TooManyRequests", 500: "InternalError", 503: "ServiceUnavailable",
                          504: "Timeout"}.get(fault.status, "InternalError")
                raise ApiError(fault.status, reason, f"injected fault: {fault.status}", headers=headers)
            if fault is not None and fault.hang is not None:
                if fault.process:
                    Route(self, method, url.path, query, raw, None).run(dry=True)
                double._stopping.wait(fault.hang)
                self._cut()
                return
            Route(self, method, url.path, query, raw, fault.drop_after if fault else None).run()
        except ApiError as error:
            self.send_json(error.code, error.status(), error.headers)
        except StreamCut:
            self._cut()
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            self.close_connection = True

    def _cut(self) -> None:
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def client_gone(self) -> bool:
        """Did the client close its end? (Like the API server's request context being cancelled.)"""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def send_json(self, code: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def send_text(self, text: str) -> None:
        data = text.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def start_stream(self, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()

    def chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def end_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


class DoubleHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, double: ApiServerDouble) -> None:
        self.double = double
        super().__init__(("127.0.0.1", 0), Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:  # clients vanish mid-stream: fine
        pass


class Route:
    """One request: resolve the resource, then create / read / list / watch / patch / delete."""

    def __init__(self, handler: Handler, method: str, path: str, query: dict[str, str], raw: bytes,
                 drop_after: int | None):
        self.h, self.method, self.query, self.raw, self.drop_after = handler, method, query, raw, drop_after
        self.double = handler.server.double
        self.store = self.double.store
        match = _PATH.match(path)
        if not match:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        self.group = "" if match["core"] else match["group"]
        self.version = match["core"] or match["version"]
        self.ns, self.name, self.sub = match["ns"] or "", match["name"], match["sub"]
        rtype = registry.lookup(self.group, self.version, match["plural"])
        if rtype is None:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        self.rtype = rtype
        self.api_version = rtype.api_version(self.version)

    def body(self) -> Any:
        try:
            return json.loads(self.raw or b"{}")
        except ValueError as exc:
            raise ApiError(400, "BadRequest", f"invalid JSON body: {exc}") from exc

    def dry_run(self) -> bool:
        value = self.query.get("dryRun")
        if value not in (None, "All"):
            raise ApiError(400, "BadRequest", f"unsupported dryRun value {value!r}")
        return value == "All"

    def out(self, obj: dict[str, Any]) -> dict[str, Any]:
        obj["apiVersion"], obj["kind"] = self.api_version, self.rtype.kind
        return obj

    def run(self, dry: bool = False) -> None:
        """``dry``: perform the effect only (the answer is discarded: a hung request)."""
        method, name, sub = self.method, self.name, self.sub
        if sub == "log" and self.rtype.plural == "pods" and self.group == "" and method == "GET":
            return None if dry else self.logs()
        if sub == "eviction" and self.rtype.plural == "pods" and self.group == "" and method == "POST":
            code, answer = disruptions.evict(self.double, self.ns, name or "", self.body())
            return None if dry else self.h.send_json(code, answer)
        if sub not in (None, "status"):
            raise ApiError(404, "NotFound", f"unknown subresource {sub!r}")
        if self.rtype.read_only and method != "GET":
            raise ApiError(405, "MethodNotAllowed", f"{self.rtype.qualified} is read-only")
        if name is None:
            if method == "GET" and self.query.get("watch") in ("true", "1"):
                return None if dry else self.watch()
            handlers = {"GET": self.list, "POST": self.create, "DELETE": self.delete_collection}
        else:
            handlers = {"GET": self.get, "PATCH": self.patch, "DELETE": self.delete, "PUT": self.replace}
        if method not in handlers:
            raise ApiError(405, "MethodNotAllowed", f"{method} not allowed here")
        code, body = handlers[method]()
        if not dry:
            self.h.send_json(code, body)

    # --- verbs ---------------------------------------------------------------------------

    def get(self) -> tuple[int, dict[str, Any]]:
        return 200, self.out(self.store.get(self.rtype, self.ns, self.name))

    def list(self) -> tuple[int, dict[str, Any]]:
        items = [self.out(o) for o in self.store.list(self.rtype, self.ns or None, self.query.get("labelSelector"),
                                                      self.query.get("fieldSelector"))]
        return 200, {"apiVersion": self.api_version, "kind": f"{self.rtype.kind}List",
                     "metadata": {"resourceVersion": str(self.store.rv)}, "items": items}

    def _check_identity(self, obj: Any) -> None:
        if not isinstance(obj, dict):
            raise ApiError(400, "BadRequest", "the body must be a JSON object")
        if obj.get("apiVersion") != self.api_version or obj.get("kind") != self.rtype.kind:
            raise ApiError(400, "BadRequest", f"the body is {obj.get('apiVersion')} {obj.get('kind')}, "
                                              f"the URL is {self.api_version} {self.rtype.kind}")
        namespace = (obj.get("metadata") or {}).get("namespace")
        if self.rtype.namespaced and namespace not in (None, self.ns):
            raise ApiError(400, "BadRequest", "the namespace of the provided object does not match "
                                              "the namespace sent on the request")

    def _validate(self, obj: dict[str, Any]) -> None:
        causes = validation_causes(self.rtype, self.api_version, obj)
        if causes:
            name = (obj.get("metadata") or {}).get("name", "")
            group = f".{self.rtype.group}" if self.rtype.group else ""
            detail = "; ".join(f"{c['field']}: {c['message']}" for c in causes)
            raise ApiError(422, "Invalid", f'{self.rtype.kind}{group} "{name}" is invalid: {detail}',
                           {"name": name, "group": self.rtype.group, "kind": self.rtype.kind, "causes": causes})

    def create(self) -> tuple[int, dict[str, Any]]:
        obj = self.body()
        self._check_identity(obj)
        self._validate(obj)
        created = self.store.create(self.rtype, self.ns, obj, dry_run=self.dry_run())
        return 201, self.out(created)

    def replace(self) -> tuple[int, dict[str, Any]]:
        obj = self.body()
        self._check_identity(obj)
        self._validate(obj)
        return 200, self.out(self.store.replace(self.rtype, self.ns, self.name, obj, subresource=self.sub or "",
                                                dry_run=self.dry_run()))

    def patch(self) -> tuple[int, dict[str, Any]]:
        content_type = (self.h.headers.get("Content-Type") or "").split(";")[0].strip()
        if content_type not in MERGE_TYPES or (self.rtype.custom and "strategic" in content_type):
            raise ApiError(415, "UnsupportedMediaType", f"the body of the request was in an unknown format "
                                                        f"- accepted media types include: {', '.join(MERGE_TYPES)}")
        body = self.body()
        if not isinstance(body, dict):
            raise ApiError(400, "BadRequest", "a merge patch must be a JSON object")
        dry = self.dry_run()
        if self.sub != "status":
            preview = self.store.patch(self.rtype, self.ns, self.name, body, dry_run=True)
            preview.get("metadata", {}).pop("resourceVersion", None)
            self._validate({k: v for k, v in preview.items() if k != "status" or not self.rtype.status_subresource})
        return 200, self.out(self.store.patch(self.rtype, self.ns, self.name, body,
                                              subresource=self.sub or "", dry_run=dry))

    def _policy(self) -> str:
        options = self.body() if self.raw else {}
        return self.query.get("propagationPolicy") or options.get("propagationPolicy") or "Background"

    def _delete_one(self, name: str, policy: str, dry: bool) -> dict[str, Any]:
        obj = self.store.delete(self.rtype, self.ns, name, dry_run=dry)
        if not dry:
            self.double._deleted(self.rtype, self.ns, name, policy)
            if policy != "Orphan":
                self.double._collect_garbage(obj["metadata"]["uid"])
        return obj

    def delete(self) -> tuple[int, dict[str, Any]]:
        obj = self._delete_one(self.name, self._policy(), self.dry_run())
        return 200, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                     "details": {"name": self.name, "group": self.rtype.group, "kind": self.rtype.plural,
                                 "uid": obj["metadata"]["uid"]}}

    def delete_collection(self) -> tuple[int, dict[str, Any]]:
        policy, dry = self._policy(), self.dry_run()
        items = self.store.list(self.rtype, self.ns or None, self.query.get("labelSelector"),
                                self.query.get("fieldSelector"))
        deleted = [self.out(self._delete_one(o["metadata"]["name"], policy, dry)) for o in items]
        return 200, {"apiVersion": self.api_version, "kind": f"{self.rtype.kind}List",
                     "metadata": {"resourceVersion": str(self.store.rv)}, "items": deleted}

    # --- streams -------------------------------------------------------------------------

    def _send_line(self, data: bytes, sent: int) -> int:
        """Send one line; a ``drop_after`` fault cuts the connection right after its N-th line."""
        if self.drop_after is not None and sent >= self.drop_after:
            raise StreamCut()
        self.h.chunk(data)
        if self.drop_after is not None and sent + 1 >= self.drop_after:
            raise StreamCut()
        return sent + 1

    def watch(self) -> None:
        store, double = self.store, self.double
        labels_ok = label_matcher(self.query.get("labelSelector"))
        fields_ok = field_matcher(self.query.get("fieldSelector"))
        timeout = float(self.query.get("timeoutSeconds") or 3600)
        deadline = time.monotonic() + timeout
        token = double._open_stream("watch", None)

        def wanted(key: tuple[str, str, str, str], obj: dict[str, Any]) -> bool:
            return ((key[0], key[1]) == (self.rtype.group, self.rtype.plural) and self.ns in ("", key[2])
                    and labels_ok(obj["metadata"].get("labels")) and fields_ok(obj))

        bookmarks = self.query.get("allowWatchBookmarks") in ("true", "1")
        with store.lock:
            since = self.query.get("resourceVersion")
            if since in (None, "", "0"):
                cursor = store.rv
                backlog = [("ADDED", obj) for key, obj in sorted(store.objects.items()) if wanted(key, obj)]
            else:
                cursor = int(since)
                backlog = []
            expired = since not in (None, "", "0") and cursor < store.compacted_rv
        self.h.start_stream("application/json")
        sent = 0
        try:
            if expired:  # as the API server: 200, then one ERROR event with a 410 Status, then the end
                status = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                          "reason": "Expired", "code": 410,
                          "message": f"too old resource version: {cursor} ({store.compacted_rv})"}
                self._send_line(json.dumps({"type": "ERROR", "object": status}).encode() + b"\n", sent)
                self.h.end_stream()
                return
            while True:
                for event_type, obj in backlog:
                    line = json.dumps({"type": event_type, "object": self.out(dict(obj))}).encode() + b"\n"
                    sent = self._send_line(line, sent)
                with store.lock:
                    while True:
                        if token.cut or double._stopping.is_set() or self.h.client_gone():
                            raise StreamCut()
                        fresh = [e for e in store.events if e.rv > cursor]
                        if fresh:
                            cursor = fresh[-1].rv
                            backlog = [(e.type, e.obj) for e in fresh if wanted(e.key, e.obj)]
                            if backlog:
                                break
                        remaining = deadline - time.monotonic()
                        if remaining <= 0:
                            if bookmarks:  # as the API server before a timed-out watch closes
                                mark = {"kind": self.rtype.kind, "apiVersion": self.api_version,
                                        "metadata": {"resourceVersion": str(cursor)}}
                                self._send_line(json.dumps({"type": "BOOKMARK", "object": mark}).encode() + b"\n",
                                                sent)
                            self.h.end_stream()
                            return
                        store.changed.wait(min(remaining, 0.1))
        finally:
            double._close_stream(token)

    def logs(self) -> None:
        double, store = self.double, self.store
        pod = store.get(self.rtype, self.ns, self.name)
        names = [c["name"] for c in pod["spec"].get("containers") or []]
        container = self.query.get("container")
        if container is None:
            if len(names) != 1:
                raise ApiError(400, "BadRequest", f"a container name must be specified for pod {self.name}, "
                                                  f"choose one of: [{' '.join(names)}]")
            container = names[0]
        # Init containers have logs too (an image build's Kaniko runs in one), as on a real API server.
        if container not in names + [c["name"] for c in pod["spec"].get("initContainers") or []]:
            raise ApiError(400, "BadRequest", f"container {container} is not valid for pod {self.name}")
        reason = waiting_reason(pod, container)
        if reason:
            raise ApiError(400, "BadRequest",
                           f'container "{container}" in pod "{self.name}" is waiting to start: {reason}')
        follow = self.query.get("follow") in ("true", "1")
        stamps = self.query.get("timestamps") in ("true", "1")
        since = self.query.get("sinceSeconds")
        cutoff = time.time_ns() - int(since) * 1_000_000_000 if since else None
        key = (self.ns, self.name, container)

        def render(entries: list[tuple[int, str]]) -> list[bytes]:
            return [((format_timestamp(ts) + " ") if stamps else "").encode() + text.encode() + b"\n"
                    for ts, text in entries if cutoff is None or ts >= cutoff]

        with store.lock:
            entries = list(double.log_lines.get(key, []))
        tail = self.query.get("tailLines")
        start = max(0, len(entries) - int(tail)) if tail is not None else 0
        if not follow:
            self.h.send_text(b"".join(render(entries[start:])).decode())
            return
        token = double._open_stream("log", (self.ns, self.name))
        position = start
        self.h.start_stream("text/plain")
        sent = 0
        try:
            while True:
                with store.lock:
                    while True:
                        if token.cut or double._stopping.is_set() or self.h.client_gone():
                            raise StreamCut()
                        fresh = double.log_lines.get(key, [])[position:]
                        if fresh:
                            position += len(fresh)
                            break
                        current = store.objects.get(store.key(self.rtype, self.ns, self.name))
                        if container_finished(current, container):
                            self.h.end_stream()
                            return
                        store.changed.wait(0.1)
                for line in render(fresh):
                    sent = self._send_line(line, sent)
        finally:
            double._close_stream(token)
