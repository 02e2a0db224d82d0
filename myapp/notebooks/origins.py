"""Each notebook is an origin of its own: `<notebook>.<project>.<domain>`, under a wildcard domain.

A page one notebook serves (a member wrote it: a script in an output) can then reach no other notebook,
nor the platform: the browser keeps their cookies and answers apart. Pure functions of the names and the
settings (MYAPP_NOTEBOOK_DOMAIN; the scheme and port of MYAPP_NOTEBOOK_URL): the web app, the proxy, the
ext-authz check and rendering all agree through them. See docs/notebooks.md, "Origins".
"""
from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass
from typing import Any

DEFAULT_DOMAIN = "localhost"  # browsers resolve *.localhost to the loopback (Chromium, Firefox)
HANDOFF_PATH = "/_myapp/handoff"  # where the browser brings a one-time code from the platform
# The cookie of one origin's session: host-only always; on https `__Host-` makes the browser refuse it
# from anywhere but this host itself (a sibling notebook cannot set it for a parent domain).
COOKIE = "myapp-notebook"
SECURE_COOKIE = "__Host-myapp-notebook"
COOKIES = (COOKIE, SECURE_COOKIE)
_LABEL = r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?"
LABEL = re.compile(_LABEL)
DOMAIN = re.compile(rf"{_LABEL}(\.{_LABEL})*")


@dataclass(frozen=True)
class Origins:
    """Where notebooks are served: `<scheme>://<notebook>.<project>.<domain>[:<port>]`."""

    domain: str
    scheme: str = "http"
    port: int | None = None

    @classmethod
    def of(cls, domain: str | None, notebook_url: str) -> Origins:
        """From MYAPP_NOTEBOOK_DOMAIN and MYAPP_NOTEBOOK_URL (whose scheme and port users reach the proxy or
        gateway at). ValueError names what is wrong."""
        domain = (domain or DEFAULT_DOMAIN).strip().lower().rstrip(".")
        if not DOMAIN.fullmatch(domain) or len(domain) > 253:
            raise ValueError(f"MYAPP_NOTEBOOK_DOMAIN={domain!r} is not a domain name such as notebooks.example.com")
        split = urllib.parse.urlsplit(notebook_url)
        if split.scheme not in ("http", "https"):
            raise ValueError(f"MYAPP_NOTEBOOK_URL={notebook_url!r} is not an http(s) address")
        default = 443 if split.scheme == "https" else 80
        return cls(domain, split.scheme, split.port if split.port not in (None, default) else None)

    @property
    def secure(self) -> bool:
        return self.scheme == "https"

    @property
    def cookie(self) -> str:
        return SECURE_COOKIE if self.secure else COOKIE

    def host(self, project: str, name: str) -> str:
        """The notebook's host name (no port): what its VirtualService matches and its code is bound to."""
        return f"{name}.{project}.{self.domain}"

    def origin(self, project: str, name: str) -> str:
        port = f":{self.port}" if self.port else ""
        return f"{self.scheme}://{self.host(project, name)}{port}"

    def parse(self, host: str) -> tuple[str, str] | None:
        """(project, notebook) of a Host header under the domain, or None. The port is not compared:
        cookies ignore ports, and a proxy behind another one may see its own."""
        name_part = hostname(host)
        suffix = "." + self.domain
        if not name_part.endswith(suffix):
            return None
        labels = name_part[: -len(suffix)].split(".")
        if len(labels) != 2 or not all(LABEL.fullmatch(label) for label in labels):
            return None
        name, project = labels
        return project, name


def hostname(host: str) -> str:
    """A Host header's name: lowercased, without port or trailing dot."""
    host = host.strip().lower()
    if host.startswith("["):  # an IPv6 literal is never a notebook's host
        return host
    return host.rsplit(":", 1)[0].rstrip(".") if ":" in host else host.rstrip(".")


def safe_next(prefix: str, wanted: str | None) -> str:
    """Where a hand-off may send the browser: a path under the notebook's prefix, else its JupyterLab.
    Never another host (no scheme, no `//`, no backslash: browsers read `/\\evil` as `//evil`)."""
    default = prefix + "lab"
    if not wanted or not wanted.startswith(prefix) or "\\" in wanted or any(c in wanted for c in "\r\n\t"):
        return default
    split = urllib.parse.urlsplit(wanted)
    if split.scheme or split.netloc or wanted.startswith("//"):
        return default
    return wanted


# ---- what a browser's request says about itself (the proxy and the ext-authz check alike) -------------------
# `headers`: a request's, looked up case-insensitively (aiohttp's CIMultiDict, werkzeug's Headers).
def is_navigation(method: str, headers: Any) -> bool:
    """A top-level page load, which may be sent to the platform or shown a page (never an API call)."""
    if method not in ("GET", "HEAD"):
        return False
    mode = headers.get("Sec-Fetch-Mode")
    if mode is not None:
        return mode == "navigate" and headers.get("Sec-Fetch-Dest", "document") == "document"
    return "text/html" in headers.get("Accept", "")


def cross_origin(method: str, headers: Any, host: str) -> str | None:
    """Why a request from another origin is refused before it reaches Jupyter, or None. Only top-level
    navigations may come from elsewhere (the platform's hand-off, a link): what they load shows in this
    origin, out of the other page's reach. Anything a script of another origin sends (fetch, a form's
    POST, an <img>), a sibling notebook's above all, stops here, whatever cookies it carried."""
    origin = headers.get("Origin")
    if origin and origin != "null" and urllib.parse.urlsplit(origin).netloc.lower() != host.lower():
        return f"requests from {origin} are refused"
    if origin == "null" and method not in ("GET", "HEAD"):
        return "requests from an opaque origin are refused"
    site = headers.get("Sec-Fetch-Site")
    if site in ("cross-site", "same-site") and not is_navigation(method, headers):
        return f"{site} requests other than page loads are refused"
    return None
