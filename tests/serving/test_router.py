"""The local router (job-templates/deploy-service/router.py) in front of real model servers: weights,
mirror, the version header, figures, sampled logs, and its token; and the HTTP it speaks itself
(kept-alive connections a server dropped, chunked answers, malformed requests)."""
from __future__ import annotations

import collections
import contextlib
import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.serving.support import SERVICE_TOKEN, Client, digits_models, model_server, router
from tests.support import wait_until

TOKEN = SERVICE_TOKEN


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    v1, v2, images, labels = digits_models(tmp_path_factory.mktemp("models"))
    with model_server(v1, "v1") as first, model_server(v2, "v2") as second:
        yield {"v1": first, "v2": second, "images": images, "labels": labels}


def config(servers, weights: dict[str, int], mirror: dict | None = None, generation: int = 1) -> dict:
    return {"generation": generation, "mirror": mirror,
            "routes": [{"version": v, "url": servers[v], "weight": w} for v, w in weights.items()]}


def test_1000_requests_at_30_percent_land_30_percent_on_the_canary(servers):
    with router(TOKEN, config(servers, {"v1": 70, "v2": 30})) as url:
        client = Client(url, {"X-Router-Token": TOKEN})
        seen: collections.Counter[str] = collections.Counter()
        for i in range(1000):
            status, headers, body = client.call("POST", "/predict", {"instances": [servers["images"][i % 20]]})
            assert status == 200, body
            seen[headers["x-model-version"]] += 1
        assert abs(seen["v2"] / 1000 - 0.30) <= 0.05, seen
        assert seen["v1"] + seen["v2"] == 1000
        stats = client.call("GET", "/_router/stats?window=60")[2]
        assert stats["versions"]["v2"]["requests"] == seen["v2"]
        assert stats["versions"]["v1"]["p95"] is not None and stats["versions"]["v1"]["errors"] == 0


def test_answers_are_the_models_and_malformed_requests_name_the_field(servers):
    with router(TOKEN, config(servers, {"v1": 100})) as url:
        client = Client(url, {"X-Router-Token": TOKEN})
        status, headers, body = client.call("POST", "/predict", {"instances": servers["images"]})
        assert status == 200 and headers["x-model-version"] == "v1"
        right = sum(p == y for p, y in zip(body["predictions"], servers["labels"], strict=True))
        assert right >= 16, body
        status, headers, body = client.call("POST", "/predict", {"instances": [[1.0, 2.0]]})
        assert status == 400 and headers["x-model-version"] == "v1"
        assert body["errors"] == [{"field": "instances[0]", "reason": "must have 64 values, not 2"}]
        status, _, body = client.call("POST", "/predict", {"rows": []})
        assert status == 400 and body["errors"][0]["field"] == "instances"
        logs = client.call("GET", "/_router/logs?q=must+have+64")[2]["items"]
        assert logs and logs[0]["status"] == 400 and logs[0]["version"] == "v1"


def test_the_shadow_gets_a_copy_and_the_caller_only_the_primary(servers):
    with router(TOKEN, config(servers, {"v1": 100}, {"version": "v2", "url": servers["v2"], "percent": 50})) as url:
        client = Client(url, {"X-Router-Token": TOKEN})
        for i in range(40):
            assert client.call("POST", "/predict", {"instances": [servers["images"][i % 20]]})[1]["x-model-version"] \
                == "v1"

        def shadowed() -> int:
            return client.call("GET", "/_router/stats?window=60")[2]["versions"].get("v2 (shadow)", {}).get("requests")
        wait_until(lambda: shadowed() == 20, what=lambda: f"20 mirrored requests, not {shadowed()}")


def test_new_routes_apply_at_once_and_every_call_needs_the_token(servers):
    with router(TOKEN, config(servers, {"v1": 100})) as url:
        client = Client(url, {"X-Router-Token": TOKEN})
        assert client.call("PUT", "/_router/config", config(servers, {"v2": 100}, generation=7))[2] == {"generation": 7}
        assert client.call("POST", "/predict", {"instances": [servers["images"][0]]})[1]["x-model-version"] == "v2"
        for headers in ({}, {"X-Router-Token": "wrong"}):
            stranger = Client(url, headers)
            assert stranger.call("POST", "/predict", {"instances": [servers["images"][0]]})[0] == 401
            assert stranger.call("PUT", "/_router/config", config(servers, {"v1": 100}))[0] == 401
        assert client.call("GET", "/_router/config")[2]["generation"] == 7


@contextlib.contextmanager
def forgetful_upstream() -> Iterator[tuple[str, list[int]]]:
    """An HTTP/1.1 server that closes every connection after its answer without saying so (as a model
    server restarting, or an idle timeout, does to a kept-alive connection): the router's next request
    on it fails and must go again on a new one. Answers in chunks, the other framing the router reads."""
    connections: list[int] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            connections.append(self.client_address[1])
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            answer = json.dumps({"echo": json.loads(body), "path": self.path}).encode()
            for part in (answer[:5], answer[5:]):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.write(b"0\r\n\r\n")
            self.close_connection = True

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", connections
    finally:
        server.shutdown()
        server.server_close()


def test_a_kept_alive_connection_the_server_dropped_is_replaced_and_chunks_are_read():
    with forgetful_upstream() as (upstream, connections), \
            router(TOKEN, {"generation": 1, "routes": [{"version": "v1", "url": upstream, "weight": 100}]}) as url:
        client = Client(url, {"X-Router-Token": TOKEN})
        for i in range(5):
            status, headers, body = client.call("POST", f"/predict?n={i}", {"instances": [[i]]})
            assert (status, headers["x-model-version"], body) == (200, "v1", {"echo": {"instances": [[i]]},
                                                                              "path": f"/predict?n={i}"})
        assert len(set(connections)) == 5  # a new connection each time, none of the requests lost


def test_malformed_requests_are_refused_and_the_connection_closed():
    with router(TOKEN, {"generation": 1, "routes": []}) as url:
        port = int(url.rsplit(":", 1)[1])
        for raw, status in ((b"NONSENSE\r\n\r\n", 400), (b"POST / HTTP/1.1\r\nNo colon here\r\n\r\n", 400),
                            (b"POST / HTTP/1.1\r\nContent-Length: many\r\n\r\n", 413),
                            (b"GET / HTTP/1.1\r\nX: " + b"y" * 70_000 + b"\r\n\r\n", 431)):
            with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
                sock.sendall(raw)
                answer = b""
                while chunk := sock.recv(65536):  # the router closes after its answer
                    answer += chunk
            assert answer.startswith(f"HTTP/1.1 {status} ".encode()), answer[:100]
            assert b"Connection: close" in answer
        # HTTP/1.0 without keep-alive: answered, then closed.
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(b"GET /x HTTP/1.0\r\nX-Router-Token: " + TOKEN.encode() + b"\r\n\r\n")
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 503 ") and answer.endswith(b'{"message": "no version takes traffic"}')
