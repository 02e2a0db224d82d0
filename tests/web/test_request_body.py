"""A body over the limit is refused whole however it arrives (myapp/web/request_body.py): with Content-Length as
werkzeug does, and chunked, where werkzeug alone reads the first max_content_length bytes as the body.
Under gunicorn itself (it decodes the chunks and marks the stream terminated) and the test client."""
from __future__ import annotations

import http.client
import io
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support import free_port, wait_until

APP = textwrap.dedent('''
    from flask import Flask, request
    from myapp.web.request_body import BoundedRequest

    app = Flask(__name__)
    app.request_class = BoundedRequest
    app.config["MAX_CONTENT_LENGTH"] = 100

    @app.post("/echo")
    def echo():
        return {"read": len(request.get_data())}

    @app.post("/form")
    def form():
        return {"fields": len(request.form)}
''')


@pytest.fixture(scope="module")
def flask_app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bodyapp")
    (folder / "bodyapp.py").write_text(APP)
    sys.path.insert(0, str(folder))
    try:
        import bodyapp  # type: ignore[import-not-found]

        yield bodyapp.app, folder
    finally:
        sys.path.remove(str(folder))


def chunked(size: int) -> dict:
    return {"input_stream": io.BytesIO(b"a" * size), "headers": {"Transfer-Encoding": "chunked"},
            "environ_overrides": {"wsgi.input_terminated": True}}


def test_a_terminated_body_is_read_whole_up_to_the_limit_and_refused_beyond(flask_app):
    client = flask_app[0].test_client()
    for size in (0, 1, 99, 100):
        answer = client.post("/echo", **chunked(size))
        assert answer.status_code == 200 and answer.get_json() == {"read": size}, size
    for size in (101, 102, 5000):
        assert client.post("/echo", **chunked(size)).status_code == 413, size
    assert client.post("/echo", data=b"a" * 100).get_json() == {"read": 100}
    assert client.post("/echo", data=b"a" * 101).status_code == 413
    form = {"input_stream": io.BytesIO(b"a=" + b"b" * 200), "content_type": "application/x-www-form-urlencoded",
            "environ_overrides": {"wsgi.input_terminated": True}}
    assert client.post("/form", **form).status_code == 413  # a form is parsed from the same stream


def test_under_gunicorn_a_chunked_body_over_the_limit_is_413(flask_app):
    port = free_port()
    server = subprocess.Popen([str(Path(sys.executable).parent / "gunicorn"), "-b", f"127.0.0.1:{port}", "-k",
                               "gthread", "--threads", "2", "--pythonpath", str(flask_app[1]), "bodyapp:app"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        def post(size: int) -> tuple[int, bytes]:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            data = b"a" * size
            conn.request("POST", "/echo", body=(data[i:i + 7] for i in range(0, size, 7)), encode_chunked=True,
                         headers={"Transfer-Encoding": "chunked"})
            response = conn.getresponse()
            return response.status, response.read()

        wait_until(lambda: server.poll() is not None or _answers(port), what="gunicorn", timeout=30)
        assert post(100) == (200, b'{"read":100}\n')
        for size in (101, 5000, 100_000):
            assert post(size)[0] == 413, size
    finally:
        server.terminate()
        server.wait(timeout=10)


def _answers(port: int) -> bool:
    try:
        http.client.HTTPConnection("127.0.0.1", port, timeout=1).connect()
    except OSError:
        return False
    return True
