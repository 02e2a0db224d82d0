"""The web server's settings (myapp/gunicorn_conf.py), on a real gunicorn: a keep-alive connection is
closed after KEEPALIVE_REQUESTS answers, so a client cannot stay on one worker for good."""
from __future__ import annotations

import http.client
import subprocess
import sys

from tests.support import free_port, healthy, platform_environment, wait_until


def test_a_kept_alive_connection_is_closed_after_its_share_of_requests(tmp_path):
    port = free_port()
    with platform_environment(tmp_path) as env:
        server = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "python:myapp.gunicorn_conf", "--bind", f"127.0.0.1:{port}",
             "--workers", "1", "myapp.wsgi:app"],
            env=env | {"MYAPP_KEEPALIVE_REQUESTS": "3", "MYAPP_WEB_THREADS": "4"},
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_until(lambda: healthy(f"http://127.0.0.1:{port}"), what="gunicorn answering /health", timeout=60)
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            closes = []
            for _ in range(7):
                conn.request("GET", "/health")
                resp = conn.getresponse()
                assert resp.status == 200 and resp.read()
                closes.append(resp.will_close)
                if resp.will_close:
                    conn.close()  # the next request connects again, as HTTP/1.1 clients do
            assert closes == [False, False, True, False, False, True, False]
        finally:
            server.terminate()
            server.wait(30)
