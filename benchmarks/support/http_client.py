"""The benchmarks' HTTP client: one keep-alive connection per simulated client, the login, a free port."""
from __future__ import annotations

import http.client
import http.cookies
import json
import socket
import sys


class Client:
    """One keep-alive HTTP/1.1 connection (http.client: a fraction of requests' CPU per call, which
    matters because the load generator shares the server's cores). A request on a reused connection
    that the server had closed (keep-alive timeout) is sent again once on a new one, as urllib3 does;
    any other failure is the caller's error."""

    def __init__(self, base: str, headers: dict[str, str] | None = None, timeout: float = 30):
        host, port = base.removeprefix("http://").split(":")
        self.host, self.port, self.timeout = host, int(port), timeout
        self.headers = dict(headers or {})
        self.cookies: dict[str, str] = {}  # name -> value, what Set-Cookie said (a browser session)
        self.conn: http.client.HTTPConnection | None = None

    def request(self, method: str, path: str, body: object = None, headers: dict[str, str] | None = None
                ) -> tuple[int, bytes, http.client.HTTPResponse]:
        data = None if body is None else json.dumps(body).encode()
        sent = {**self.headers, **(headers or {})}
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        if data is not None:
            sent["Content-Type"] = "application/json"
        for attempt in (1, 2):
            reused = self.conn is not None
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            try:
                self.conn.request(method, path, body=data, headers=sent)
                resp = self.conn.getresponse()
                payload = resp.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.close()
                if reused and attempt == 1:
                    continue
                raise
            if resp.will_close:
                self.close()
            for header in resp.headers.get_all("Set-Cookie") or ():
                jar = http.cookies.SimpleCookie(header)
                self.cookies.update({k: m.value for k, m in jar.items()})
            return resp.status, payload, resp
        raise AssertionError("unreachable")

    def stream(self, path: str, headers: dict[str, str] | None = None) -> http.client.HTTPResponse:
        """A response left open for the caller to read (server-sent events); on its own connection."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        cookie = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())} if self.cookies else {}
        conn.request("GET", path, headers={**self.headers, **cookie, **(headers or {})})
        return conn.getresponse()

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def login(base: str, username: str, password: str) -> str:
    status, body, _ = Client(base).request("POST", "/api/v1/security/login",
                                           {"username": username, "password": password, "provider": "db"})
    if status != 200:
        sys.exit(f"login failed: {status} {body[:200]!r}")
    return json.loads(body)["access_token"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
