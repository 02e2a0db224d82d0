"""The local router of one inference service: splits requests between model-server versions by
weight, mirrors a share to a shadow version, says which version answered (``X-Model-Version``) and
keeps per-version figures (requests/s, latency percentiles, errors) and a sample of request logs.

Everything it serves asks for ``X-Router-Token`` = ``$ROUTER_TOKEN`` (the platform's web app and
worker hold it; a job on the same host does not). ``PUT /_router/config`` replaces the routes::

    {"generation": 3, "routes": [{"version": "v1", "url": "http://127.0.0.1:p", "weight": 70}, ...],
     "mirror": {"version": "v2", "url": "...", "percent": 100} | null}

``GET /_router/stats?window=300`` per-second series per version, ``GET /_router/logs?q=`` the sampled
log lines that contain q. Any other path goes to the chosen version as it is. Standard library only.
"""
from __future__ import annotations

import argparse
import collections
import hmac
import http.client
import json
import os
import queue
import random
import socket
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "te", "upgrade", "proxy-authorization",
               "proxy-connection", "host", "content-length", "x-router-token"}
SERIES_SECONDS = 900  # how far back the per-second figures go
LOG_SAMPLES = 2000


class Routes:
    """Smooth weighted round robin (nginx's): exact shares over any run of 100 requests."""

    def __init__(self, config: dict):
        self.generation = int(config.get("generation", 0))
        self.routes = [dict(r) for r in config.get("routes", []) if int(r.get("weight", 0)) > 0]
        self.mirror = config.get("mirror") or None
        self.current = [0] * len(self.routes)
        self.total = sum(int(r["weight"]) for r in self.routes)
        self.mirror_credit = 0
        self.lock = threading.Lock()

    def pick(self) -> dict | None:
        with self.lock:
            if not self.routes:
                return None
            best = 0
            for i, route in enumerate(self.routes):
                self.current[i] += int(route["weight"])
                if self.current[i] > self.current[best]:
                    best = i
            self.current[best] -= self.total
            return self.routes[best]

    def mirror_now(self) -> dict | None:
        if not self.mirror:
            return None
        with self.lock:  # the same smoothing: exactly percent of every 100 requests
            self.mirror_credit += int(self.mirror.get("percent", 100))
            if self.mirror_credit >= 100:
                self.mirror_credit -= 100
                return self.mirror
        return None


class Stats:
    """Per second and version: count, errors, latencies (ms); kept for SERIES_SECONDS."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.seconds: collections.OrderedDict[int, dict[str, dict]] = collections.OrderedDict()
        self.logs: collections.deque[dict] = collections.deque(maxlen=LOG_SAMPLES)
        self.sample_every = max(1, int(os.environ.get("ROUTER_LOG_SAMPLE", "10")))
        self.random = random.Random()

    def record(self, version: str, ms: float, status: int, shadow: bool, request: bytes, answer: bytes) -> None:
        now = time.time()
        second = int(now)
        key = f"{version} (shadow)" if shadow else version
        with self.lock:
            bucket = self.seconds.setdefault(second, {}).setdefault(key, {"n": 0, "errors": 0, "ms": []})
            bucket["n"] += 1
            bucket["errors"] += status >= 500 or status == 0
            bucket["ms"].append(ms)
            while self.seconds and next(iter(self.seconds)) < second - SERIES_SECONDS:
                self.seconds.popitem(last=False)
            # Sampled at random, not every n-th: a weighted round robin would make every n-th the same version.
            if self.random.random() * self.sample_every < 1 or status >= 400 or status == 0:
                self.logs.append({"time": now, "version": key, "status": status, "ms": round(ms, 3),
                                  "request": request[:512].decode("utf-8", "replace"),
                                  "response": answer[:512].decode("utf-8", "replace")})

    def series(self, window: int) -> dict:
        floor = int(time.time()) - window
        with self.lock:
            items = [(s, {k: {"n": v["n"], "errors": v["errors"], "ms": list(v["ms"])} for k, v in b.items()})
                     for s, b in self.seconds.items() if s >= floor]
        out: dict[str, list] = {}
        totals: dict[str, list] = {}
        for second, bucket in items:
            for version, v in bucket.items():
                out.setdefault(version, []).append({"t": second, "n": v["n"], "errors": v["errors"],
                                                    "p50": _pct(v["ms"], 50), "p95": _pct(v["ms"], 95),
                                                    "p99": _pct(v["ms"], 99)})
                totals.setdefault(version, []).extend(v["ms"])
        summary = {}
        for version, points in out.items():
            n = sum(p["n"] for p in points)
            summary[version] = {"requests": n, "errors": sum(p["errors"] for p in points),
                                "rps": round(n / max(window, 1), 3), "p50": _pct(totals[version], 50),
                                "p95": _pct(totals[version], 95), "p99": _pct(totals[version], 99)}
        return {"window": window, "versions": summary, "series": out}

    def search(self, text: str, limit: int) -> list[dict]:
        with self.lock:
            logs = list(self.logs)
        hits = [entry for entry in reversed(logs) if not text or text in json.dumps(entry)]
        return hits[:limit]


def _pct(values: list[float], p: int) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(len(ordered) * p / 100))], 3)


class Upstreams:
    """Kept-alive connections per thread and upstream."""

    def __init__(self) -> None:
        self.local = threading.local()

    def send(self, url: str, method: str, path: str, body: bytes, headers: dict) -> tuple[int, list, bytes]:
        pool = self.local.__dict__.setdefault("pool", {})
        for attempt in (0, 1):  # a kept-alive connection the server closed: once more on a new one
            conn = pool.get(url)
            if conn is None:
                parts = urllib.parse.urlsplit(url)
                conn = pool[url] = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
            try:
                conn.request(method, path, body=body, headers=headers)
                response = conn.getresponse()
                data = response.read()
                return response.status, response.getheaders(), data
            except (OSError, http.client.HTTPException):
                conn.close()
                pool.pop(url, None)
                if attempt:
                    raise
        raise AssertionError("unreachable")


class Router:
    def __init__(self, token: str, config: dict):
        self.token = token
        self.routes = Routes(config)
        self.stats = Stats()
        self.upstreams = Upstreams()
        self.mirrors: queue.Queue = queue.Queue(maxsize=1000)
        threading.Thread(target=self._mirror_loop, daemon=True).start()

    def _mirror_loop(self) -> None:
        upstreams = Upstreams()
        while True:
            route, method, path, body, headers = self.mirrors.get()
            start = time.perf_counter()
            try:
                status, _, data = upstreams.send(route["url"], method, path, body, headers)
            except (OSError, http.client.HTTPException):
                status, data = 0, b""
            self.stats.record(route["version"], (time.perf_counter() - start) * 1000, status, True, body, data)


def make_handler(router: Router) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:  # the figures and samples are the log
            pass

        def setup(self) -> None:
            super().setup()
            # Headers and body go out in two writes: without this, Nagle and delayed ACKs add 40 ms to each answer.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def _reply(self, status: int, body: bytes, headers: list | None = None, version: str = "") -> None:
            self.send_response(status)
            for name, value in headers or [("Content-Type", "application/json")]:
                if name.lower() not in HOP_HEADERS and name.lower() != "x-model-version":  # the router says it
                    self.send_header(name, value)
            if version:
                self.send_header("X-Model-Version", version)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _json(self, status: int, data: object) -> None:
            self._reply(status, json.dumps(data).encode())

        def _body(self) -> bytes:
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""

        def _handle(self) -> None:
            body = self._body()
            given = self.headers.get("X-Router-Token", "")
            if not router.token or not hmac.compare_digest(given.encode(), router.token.encode()):
                self._json(401, {"message": "missing or wrong X-Router-Token"})
                return
            parts = urllib.parse.urlsplit(self.path)
            if parts.path.startswith("/_router/"):
                self._control(parts, body)
                return
            route = router.routes.pick()
            if route is None:
                self._json(503, {"message": "no version takes traffic"})
                return
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_HEADERS}
            mirror = router.routes.mirror_now()
            if mirror is not None:
                try:
                    router.mirrors.put_nowait((mirror, self.command, self.path, body, headers))
                except queue.Full:
                    pass  # a shadow never slows the answer down
            start = time.perf_counter()
            try:
                status, answer_headers, data = router.upstreams.send(route["url"], self.command, self.path, body,
                                                                     headers)
            except (OSError, http.client.HTTPException) as exc:
                router.stats.record(route["version"], (time.perf_counter() - start) * 1000, 0, False, body, b"")
                self._reply(502, json.dumps({"message": f"version {route['version']} did not answer: {exc}"})
                            .encode(), version=route["version"])
                return
            router.stats.record(route["version"], (time.perf_counter() - start) * 1000, status, False, body, data)
            self._reply(status, data, answer_headers, route["version"])

        def _control(self, parts: urllib.parse.SplitResult, body: bytes) -> None:
            query = dict(urllib.parse.parse_qsl(parts.query))
            if parts.path == "/_router/config" and self.command == "PUT":
                router.routes = Routes(json.loads(body))
                self._json(200, {"generation": router.routes.generation})
            elif parts.path == "/_router/config":
                self._json(200, {"generation": router.routes.generation, "routes": router.routes.routes,
                                 "mirror": router.routes.mirror})
            elif parts.path == "/_router/stats":
                self._json(200, router.stats.series(max(1, min(SERIES_SECONDS, int(query.get("window", 300))))))
            elif parts.path == "/_router/logs":
                limit = min(500, int(query.get("limit", 100)))
                self._json(200, {"items": router.stats.search(query.get("q", ""), limit)})
            else:
                self._json(404, {"message": "not found"})

        do_GET = do_POST = do_PUT = do_DELETE = _handle

    return Handler


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args(argv)
    router = Router(os.environ.get("ROUTER_TOKEN", "").strip(), json.loads(os.environ.get("ROUTER_CONFIG") or "{}"))
    server = ThreadingHTTPServer((args.host, args.port), make_handler(router))
    server.daemon_threads = True
    print(f"router on :{args.port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
