"""The local router of one inference service: splits requests between model-server versions by
weight, mirrors a share to a shadow version, says which version answered (``X-Model-Version``) and
keeps per-version figures (requests/s, latency percentiles, errors) and a sample of request logs.

Everything it serves asks for ``X-Router-Token`` = ``$ROUTER_TOKEN``, the service's token (the platform's
web app and worker hold it; a job on the same host does not), and it sends the same header to the model
servers, which demand it too. ``PUT /_router/config`` replaces the routes::

    {"generation": 3, "routes": [{"version": "v1", "url": "http://127.0.0.1:p", "weight": 70}, ...],
     "mirror": {"version": "v2", "url": "...", "percent": 100} | null}

``GET /_router/stats?window=300`` per-second series per version, ``GET /_router/logs?q=`` the sampled
log lines that contain q. Any other path goes to the chosen version as it is. Standard library only.
"""
from __future__ import annotations

import argparse
import asyncio
import collections
import hmac
import http
import json
import os
import random
import threading
import time
import urllib.parse

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


MAX_HEAD = 64 * 1024  # request line and headers
MAX_BODY = 64 * 1024 * 1024
IDLE_PER_UPSTREAM = 64


class BadMessage(ValueError):
    """A request (or a model server's answer) that is not HTTP/1.x as this router speaks it."""

    def __init__(self, status: int, reason: str):
        super().__init__(reason)
        self.status = status


def parse_head(head: bytes) -> tuple[list[bytes], list[tuple[str, str]], dict[str, str]]:
    """The first line's words, the headers in order, and by lower-case name."""
    lines = head[:-4].split(b"\r\n")
    ordered = []
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if not colon or not name.strip():
            raise BadMessage(400, "malformed header line")
        ordered.append((name.strip().decode("latin-1"), value.strip().decode("latin-1")))
    return lines[0].split(b" ", 2), ordered, {k.lower(): v for k, v in ordered}


async def read_body(reader: asyncio.StreamReader, by_name: dict[str, str], until_eof: bool) -> bytes:
    if "chunked" in by_name.get("transfer-encoding", "").lower():
        chunks = []
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0], 16)
            if size == 0:
                while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers
                    pass
                return b"".join(chunks)
            chunks.append(await reader.readexactly(size))
            await reader.readexactly(2)
    length = by_name.get("content-length")
    if length is None:
        return await reader.read() if until_eof else b""
    if not length.isdigit() or int(length) > MAX_BODY:
        raise BadMessage(413, f"Content-Length must be a whole number up to {MAX_BODY}")
    return await reader.readexactly(int(length)) if length != "0" else b""


class Upstream:
    """Kept-alive connections to one model server, shared by every request (one event loop, no thread
    per connection): a request takes an idle one or opens one, and gives it back after the answer."""

    def __init__(self, url: str):
        parts = urllib.parse.urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.host_header = f"{self.host}:{self.port}".encode()
        self.idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def send(self, method: bytes, target: bytes, body: bytes,
                   headers: list[tuple[str, str]]) -> tuple[int, list[tuple[str, str]], bytes]:
        head = [method, b" ", target, b" HTTP/1.1\r\nHost: ", self.host_header,
                b"\r\nContent-Length: ", str(len(body)).encode(), b"\r\n"]
        for name, value in headers:
            head += [name.encode("latin-1"), b": ", value.encode("latin-1"), b"\r\n"]
        message = b"".join(head) + b"\r\n" + body
        while True:
            reused = bool(self.idle)
            reader, writer = self.idle.pop() if reused else await asyncio.open_connection(self.host, self.port)
            try:
                async with asyncio.timeout(60):
                    writer.write(message)
                    first, answer_headers, by_name = parse_head(await reader.readuntil(b"\r\n\r\n"))
                    status = int(first[1])
                    close = by_name.get("connection", "").lower() == "close" or first[0] != b"HTTP/1.1"
                    data = await read_body(reader, by_name, until_eof=True)
            except TimeoutError:  # (an OSError too) not an answer worth waiting for twice
                writer.close()
                raise
            except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError, IndexError):
                writer.close()
                if reused:  # a kept-alive connection the server closed meanwhile: again on a new one
                    continue
                raise
            except BaseException:  # a timeout, a cancel: the connection is in an unknown state
                writer.close()
                raise
            if close or ("content-length" not in by_name and "chunked" not in by_name.get("transfer-encoding", "")):
                writer.close()
            elif len(self.idle) < IDLE_PER_UPSTREAM:
                self.idle.append((reader, writer))
            else:
                writer.close()
            return status, answer_headers, data

    def close(self) -> None:
        for _, writer in self.idle:
            writer.close()
        self.idle.clear()


Answer = tuple[int, list[tuple[str, str]], bytes, str]  # status, headers, body, the version that answered


def reply(status: int, body: bytes, headers: list[tuple[str, str]] | None = None, version: str = "",
          keep_alive: bool = True) -> bytes:
    try:
        phrase = http.HTTPStatus(status).phrase
    except ValueError:
        phrase = ""
    out = [f"HTTP/1.1 {status} {phrase}\r\n".encode()]
    for name, value in headers or [("Content-Type", "application/json")]:
        if name.lower() not in HOP_HEADERS and name.lower() != "x-model-version":  # the router says it
            out += [name.encode("latin-1"), b": ", value.encode("latin-1"), b"\r\n"]
    if version:
        out += [b"X-Model-Version: ", version.encode(), b"\r\n"]
    if not keep_alive:
        out.append(b"Connection: close\r\n")
    out += [b"Content-Length: ", str(len(body)).encode(), b"\r\n\r\n", body]
    return b"".join(out)


def json_answer(status: int, data: object) -> Answer:
    return status, [("Content-Type", "application/json")], json.dumps(data).encode(), ""


class Router:
    def __init__(self, token: str, config: dict):
        self.token = token.encode()
        self.routes = Routes(config)
        self.stats = Stats()
        self.upstreams: dict[str, Upstream] = {}
        self.mirrors: asyncio.Queue = asyncio.Queue(maxsize=1000)
        self.tasks: set[asyncio.Task] = set()

    def upstream(self, url: str) -> Upstream:
        found = self.upstreams.get(url)
        if found is None:
            found = self.upstreams[url] = Upstream(url)
        return found

    def configure(self, routes: Routes) -> None:
        self.routes = routes
        wanted = {r["url"] for r in routes.routes} | ({routes.mirror["url"]} if routes.mirror else set())
        for url in set(self.upstreams) - wanted:  # versions that left: their idle connections go
            self.upstreams.pop(url).close()

    async def mirror_loop(self) -> None:
        while True:
            route, method, target, body, headers = await self.mirrors.get()
            start = time.perf_counter()
            try:
                status, _, data = await self.upstream(route["url"]).send(method, target, body, headers)
            except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError, TimeoutError):
                status, data = 0, b""
            self.stats.record(route["version"], (time.perf_counter() - start) * 1000, status, True, body, data)

    async def handle(self, method: bytes, target: bytes, headers: list[tuple[str, str]],
                     by_name: dict[str, str], body: bytes) -> Answer:
        if not self.token or not hmac.compare_digest(by_name.get("x-router-token", "").encode(), self.token):
            return json_answer(401, {"message": "missing or wrong X-Router-Token"})
        if target.startswith(b"/_router/"):
            return self.control(method, urllib.parse.urlsplit(target.decode("latin-1")), body)
        route = self.routes.pick()
        if route is None:
            return json_answer(503, {"message": "no version takes traffic"})
        passed = [(k, v) for k, v in headers if k.lower() not in HOP_HEADERS]
        passed.append(("X-Router-Token", self.token.decode("latin-1")))  # the model servers ask for it too
        mirror = self.routes.mirror_now()
        if mirror is not None:
            try:
                self.mirrors.put_nowait((mirror, method, target, body, passed))
            except asyncio.QueueFull:
                pass  # a shadow never slows the answer down
        start = time.perf_counter()
        try:
            status, answer_headers, data = await self.upstream(route["url"]).send(method, target, body, passed)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError, TimeoutError) as exc:
            self.stats.record(route["version"], (time.perf_counter() - start) * 1000, 0, False, body, b"")
            message = {"message": f"version {route['version']} did not answer: {exc or type(exc).__name__}"}
            return 502, [("Content-Type", "application/json")], json.dumps(message).encode(), route["version"]
        self.stats.record(route["version"], (time.perf_counter() - start) * 1000, status, False, body, data)
        return status, answer_headers, data, route["version"]

    def control(self, method: bytes, parts: urllib.parse.SplitResult, body: bytes) -> Answer:
        query = dict(urllib.parse.parse_qsl(parts.query))
        if parts.path == "/_router/config" and method == b"PUT":
            self.configure(Routes(json.loads(body)))
            return json_answer(200, {"generation": self.routes.generation})
        if parts.path == "/_router/config":
            return json_answer(200, {"generation": self.routes.generation, "routes": self.routes.routes,
                                     "mirror": self.routes.mirror})
        if parts.path == "/_router/stats":
            return json_answer(200, self.stats.series(max(1, min(SERIES_SECONDS, int(query.get("window", 300))))))
        if parts.path == "/_router/logs":
            limit = min(500, int(query.get("limit", 100)))
            return json_answer(200, {"items": self.stats.search(query.get("q", ""), limit)})
        return json_answer(404, {"message": "not found"})

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One client connection: requests in turn (HTTP/1.1 keep-alive) until it closes."""
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                except asyncio.LimitOverrunError:
                    writer.write(reply(431, b'{"message": "request headers too large"}', keep_alive=False))
                    return
                try:
                    first, headers, by_name = parse_head(head)
                    if len(first) != 3 or not first[2].startswith(b"HTTP/1."):
                        raise BadMessage(400, "malformed request line")
                    body = await read_body(reader, by_name, until_eof=False)
                except BadMessage as exc:
                    writer.write(reply(exc.status, json.dumps({"message": str(exc)}).encode(), keep_alive=False))
                    return
                except ValueError:
                    writer.write(reply(400, b'{"message": "malformed chunked body"}', keep_alive=False))
                    return
                method, target, version = first
                keep = by_name.get("connection", "").lower() != "close" if version == b"HTTP/1.1" \
                    else by_name.get("connection", "").lower() == "keep-alive"
                try:
                    status, answer_headers, data, served_by = await self.handle(method, target, headers, by_name,
                                                                                body)
                except (ValueError, TypeError, KeyError, AttributeError) as exc:  # a control call's bad JSON
                    status, answer_headers, data, served_by = json_answer(400, {"message": str(exc)})
                writer.write(reply(status, data, answer_headers, served_by, keep))
                await writer.drain()
                if not keep:
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            writer.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args(argv)
    asyncio.run(run(args.host, args.port))


async def run(host: str, port: int) -> None:
    router = Router(os.environ.get("ROUTER_TOKEN", "").strip(), json.loads(os.environ.get("ROUTER_CONFIG") or "{}"))
    mirrors = asyncio.create_task(router.mirror_loop())
    server = await asyncio.start_server(router.serve, host, port, limit=MAX_HEAD, backlog=512)
    print(f"router on :{port}", flush=True)
    async with server:
        await server.serve_forever()
    mirrors.cancel()


if __name__ == "__main__":
    main()
