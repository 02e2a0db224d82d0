"""A browser stand-in for notebook origins in tests: Python cannot resolve `*.localhost` (Chromium can), so
requests go to the proxy's address with the notebook's Host, and the origin's cookies are kept per origin.

`enter()` walks the hand-off as a browser does: the notebook's address without a session sends it to the
platform's `/notebook-open`, which (signed in, a member) sends it back to `/_myapp/handoff?code=...`, which
sets the origin's cookie. Writes carry Jupyter's XSRF double-submit (a `_xsrf` cookie and `X-XSRFToken`), as
JupyterLab's own requests do, unless `xsrf=False` (a forged request)."""
from __future__ import annotations

import secrets
import urllib.parse
from typing import Any

import requests

NAVIGATE = {"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document", "Sec-Fetch-Site": "none",
            "Accept": "text/html"}


def platform_session(web: str, username: str, password: str) -> requests.Session:
    """A browser signed in on the platform (its session cookie, host-only on the web's address)."""
    browser = requests.Session()
    token = browser.get(f"{web}/api/v1/session/", timeout=10).json()["csrf_token"]
    answer = browser.post(f"{web}/api/v1/session/login", json={"username": username, "password": password},
                          headers={"X-CSRFToken": token}, timeout=10)
    assert answer.status_code == 200, answer.text
    return browser


def signed_in_client(app: Any, someone: Any) -> Any:
    """The Flask test client signed in with the platform's session cookie, as a browser is."""
    client = app.test_client()
    token = client.get("/api/v1/session/").get_json()["csrf_token"]
    answer = client.post("/api/v1/session/login", json={"username": someone.username, "password": someone.password},
                         headers={"X-CSRFToken": token})
    assert answer.status_code == 200, answer.get_json()
    return client


class OriginClient:
    def __init__(self, proxy: str, host: str, cookies: dict[str, str] | None = None):
        self.proxy, self.host = proxy.rstrip("/"), host
        self.cookies: dict[str, str] = dict(cookies or {})
        self.xsrf = secrets.token_hex(16)

    @property
    def origin(self) -> str:
        return f"http://{self.host}:{urllib.parse.urlsplit(self.proxy).port}"

    def headers(self, method: str = "GET", xsrf: bool = True, **extra: str) -> dict[str, str]:
        cookies = dict(self.cookies)
        headers = {"Host": f"{self.host}:{urllib.parse.urlsplit(self.proxy).port}"}
        if method not in ("GET", "HEAD") and xsrf:
            cookies["_xsrf"] = self.xsrf
            headers["X-XSRFToken"] = self.xsrf
        if cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in cookies.items())
        return headers | extra

    def request(self, method: str, path: str, xsrf: bool = True, headers: dict[str, str] | None = None,
                **kwargs: Any) -> requests.Response:
        answer = requests.request(method, self.proxy + path, headers=self.headers(method, xsrf, **(headers or {})),
                                  allow_redirects=False, timeout=kwargs.pop("timeout", 30), **kwargs)
        for name, value in answer.cookies.items():
            self.cookies[name] = value
        return answer

    def get(self, path: str, **kwargs: Any) -> requests.Response:
        return self.request("GET", path, **kwargs)


def code_from(location: str) -> str:
    return urllib.parse.parse_qs(urllib.parse.urlsplit(location).query)["code"][0]


def enter(platform: requests.Session, web: str, proxy: str, host: str, path: str = "/") -> OriginClient:
    """The hand-off as a browser follows it, from the notebook's address back into it."""
    origin = OriginClient(proxy, host)
    first = origin.get(path, headers=NAVIGATE)
    assert first.status_code == 302, (first.status_code, first.text)
    opened = urllib.parse.urlsplit(first.headers["Location"])
    assert opened.path == "/notebook-open", first.headers["Location"]
    handed = platform.get(f"{web}{opened.path}?{opened.query}", headers=NAVIGATE, allow_redirects=False, timeout=10)
    assert handed.status_code == 302, (handed.status_code, handed.text)
    back = urllib.parse.urlsplit(handed.headers["Location"])
    assert back.hostname == host and back.path == "/_myapp/handoff", handed.headers["Location"]
    landed = origin.get(f"{back.path}?{back.query}", headers=NAVIGATE)
    assert landed.status_code == 302 and landed.cookies, (landed.status_code, landed.text)
    return origin
