"""The stable URL /serving/<project>/<service>/... in front of a recording upstream: only the model's paths
are forwarded (the router's control paths are not, however spelled), each with the service's token, and a
body is forwarded whole or refused (a chunked one over the limit is 413 and reaches nobody)."""
from __future__ import annotations

import contextlib
import io
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from myapp.api.serving_proxy import upstream_path
from myapp.serving.router_client import router_token
from tests.support import unique
from tests.world import add_member, created, data_file


class Recorder(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen: list[tuple[str, str, dict[str, str], bytes]]

    def log_message(self, *args: object) -> None:
        pass

    def _answer(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.seen.append((self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body))
        data = b'{"routes": [{"url": "http://127.0.0.1:1"}]}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("X-Model-Version", "v1")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = _answer


@contextlib.contextmanager
def recording_upstream() -> Iterator[tuple[str, list]]:
    seen: list = []
    handler = type("Handler", (Recorder,), {"seen": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture()
def served(app, make_user):
    """A service whose router is the recording upstream, and a viewer of its project."""
    from myapp.extensions import db
    from myapp.models import InferenceService

    owner, viewer = make_user(), make_user()
    project = created(owner.post("/api/v1/project/", json={"name": unique("proxy")}))
    add_member(owner, project["id"], viewer.username, "viewer")
    version = created(owner.post("/api/v1/model_version/", json={
        "project_id": project["id"], "name": "m", "uri": data_file(app, project["id"])}))
    service = created(owner.post("/api/v1/inference_service/", json={
        "project_id": project["id"], "name": "svc", "model_version_id": version["id"]}))
    with recording_upstream() as (url, seen), app.app_context():
        db.session.get(InferenceService, service["id"]).url = url
        db.session.commit()
        yield {"viewer": viewer, "base": f"/serving/{project['name']}/svc", "seen": seen,
               "token": router_token(app.config["SECRET_KEY"], service["id"])}


def test_only_the_models_paths_are_forwarded_with_the_services_token(served):
    viewer, base, seen = served["viewer"], served["base"], served["seen"]
    answer = viewer.post(f"{base}/predict?x=1", json={"instances": [[1]]})
    assert answer.status_code == 200 and answer.headers["X-Model-Version"] == "v1"
    assert viewer.get(f"{base}/v1/models/m:predict").status_code == 200
    assert viewer.get(f"{base}/").status_code == 200
    assert [(m, p) for m, p, _, _ in seen] == [("POST", "/predict?x=1"), ("GET", "/v1/models/m:predict"), ("GET", "/")]
    assert {h["x-router-token"] for _, _, h, _ in seen} == {served["token"]}
    assert seen[0][3] == b'{"instances": [[1]]}'


CONTROL_SPELLINGS = [
    "_router/config", "_router/stats?window=60", "_router/logs", "_ROUTER/config", "%5frouter/config",
    "%2e%2e/_router/config", "%2E%2E/_router/config", "./_router/config", "%2e/_router/config",
    "x/../_router/config", "x/%2e%2e/_router/config", "x/%2e%2e/%2e%2e/_router/config", "/_router/config",
    "x//../_router/config", "..%2f_router/config", "%2e%2e%2f_router%2fconfig", "x/..%5c_router/config",
    "predict/..", "predict/.",
]


def test_the_routers_control_paths_are_not_reachable_however_spelled(served):
    """A viewer must not read the routes (they name the model servers' addresses) nor reach any other
    control path through the stable URL: 404, and nothing reaches the router."""
    for path in CONTROL_SPELLINGS:
        for method in ("GET", "POST"):
            answer = served["viewer"].request(method, f"{served['base']}/{path}", json={})
            if answer.status_code == 308:  # "//" merged by the routing: where it leads is refused the same
                answer = served["viewer"].request(method, answer.headers["Location"], json={})
            assert answer.status_code == 404, (method, path, answer.status_code, answer.get_data()[:200])
            assert "127.0.0.1" not in answer.get_data(as_text=True)
    assert served["seen"] == []


def test_upstream_paths_are_the_checked_segments_quoted_again():
    assert upstream_path("") == "/"
    assert upstream_path("predict") == "/predict"
    assert upstream_path("predict/") == "/predict/"
    assert upstream_path("v1/models/m:predict") == "/v1/models/m:predict"
    assert upstream_path("a b/%2e%2e") == "/a%20b/%252e%252e"  # a literal "%2e%2e" segment stays one
    assert upstream_path("a?b#c") == "/a%3Fb%23c"
    for refused in ("..", ".", "a/../b", "a//b", "a\\b", "a\x00b", "_router", "_router/config", "_Router/x"):
        assert upstream_path(refused) is None, refused


def test_a_chunked_body_over_the_limit_is_413_and_reaches_nobody(served, app):
    """Without Content-Length (chunked: gunicorn hands the decoded stream on, terminated), as with it."""
    limit = app.config["MAX_CONTENT_LENGTH"]
    viewer, path, seen = served["viewer"], f"{served['base']}/predict", served["seen"]

    def chunked(body: bytes):
        return viewer.post(path, input_stream=io.BytesIO(body), headers={
            "Content-Type": "application/json", "Transfer-Encoding": "chunked"},
            environ_overrides={"wsgi.input_terminated": True})

    answer = chunked(b" " * limit + b"{}")
    assert answer.status_code == 413 and "message" in answer.get_json()
    assert viewer.post(path, data=b" " * limit + b"{}", content_type="application/json").status_code == 413
    assert seen == []
    assert chunked(b" " * (limit - 2) + b"{}").status_code == 200  # exactly the limit: forwarded whole
    assert len(seen) == 1 and len(seen[0][3]) == limit
