"""Which client address a request comes from, behind reverse proxies (MYAPP_TRUSTED_PROXIES).

The login rate limit per address (myapp/auth/logins.py) and the access log read `REMOTE_ADDR`. Without the
setting it is the peer that connected and `X-Forwarded-For` is ignored: a client must not choose its own
address to dodge the per-address limit. Behind proxies the peer is the last proxy, so the setting says
whom to believe:

- a count N of proxy hops: werkzeug's `ProxyFix(x_for=N)`, the client is the N-th address from the right
  of `X-Forwarded-For` (each proxy appends its peer). Right when every request passes those N proxies;
  a client that can reach the web port directly could still send a header of its own;
- addresses or networks of the proxies (`10.0.0.0/8, 127.0.0.1`): the header is read only when the peer
  is one of them, from the right, skipping the trusted ones; the first other address is the client.
"""
from __future__ import annotations

import ipaddress
from typing import Any

from flask import Flask
from werkzeug.http import parse_list_header
from werkzeug.middleware.proxy_fix import ProxyFix

SETTING = "MYAPP_TRUSTED_PROXIES"
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse(text: str | None) -> int | tuple[Network, ...]:
    """The setting: a hop count (0 or empty: no proxy), or the proxies' addresses; ValueError naming it."""
    text = (text or "").strip()
    if not text or text.isdigit():
        return int(text or 0)
    networks = []
    for entry in (part.strip() for part in text.split(",")):
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            raise ValueError(f"{SETTING}: {entry!r} is neither a count of proxy hops nor an IP address or "
                             "network") from None
    return tuple(networks)


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.strip().strip("[]").split("%")[0])
    except ValueError:
        return None


class TrustedAddresses:
    """X-Forwarded-For believed only as far as it was written by the listed proxies."""

    def __init__(self, app: Any, networks: tuple[Network, ...]) -> None:
        self.app, self.networks = app, networks

    def trusted(self, text: str | None) -> bool:
        addr = _address(text or "")
        return addr is not None and any(addr in net for net in self.networks if net.version == addr.version)

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        peer = environ.get("REMOTE_ADDR")
        if self.trusted(peer):
            client = peer
            for hop in reversed(parse_list_header(environ.get("HTTP_X_FORWARDED_FOR", ""))):
                if _address(hop) is None:  # not an address: nothing left of it can be believed
                    break
                client = hop.strip()
                if not self.trusted(client):
                    break
            environ["werkzeug.proxy_fix.orig"] = {"REMOTE_ADDR": peer}  # where ProxyFix keeps it too
            environ["REMOTE_ADDR"] = client
        return self.app(environ, start_response)


def install(app: Flask) -> None:
    """Wrap the app's WSGI entry as the setting says (nothing without it)."""
    trusted = parse(app.config.get(SETTING))
    if isinstance(trusted, int):
        if trusted:
            app.wsgi_app = ProxyFix(app.wsgi_app, x_for=trusted, x_proto=0, x_host=0)  # type: ignore[method-assign]
    else:
        app.wsgi_app = TrustedAddresses(app.wsgi_app, trusted)  # type: ignore[method-assign]
