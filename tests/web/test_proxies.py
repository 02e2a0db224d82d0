"""The client address behind reverse proxies (MYAPP_TRUSTED_PROXIES, myapp/web/proxies.py): without the
setting X-Forwarded-For is ignored, so a client cannot dodge the per-address login limit by naming other
addresses; with it, the address the trusted proxies saw is the one limited."""
from __future__ import annotations

import uuid

import pytest


def random_ip(prefix: str = "10.7") -> str:
    return f"{prefix}.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250 + 1}"


def login(app, user, peer: str, forwarded: str | None = None):
    headers = {"X-Forwarded-For": forwarded} if forwarded is not None else {}
    return app.test_client().post("/api/v1/security/login", environ_base={"REMOTE_ADDR": peer}, headers=headers,
                                  json={"username": user.username, "password": user.password, "provider": "db"})


@pytest.fixture()
def proxies(app, monkeypatch):
    """proxies(setting): the app behind MYAPP_TRUSTED_PROXIES=setting for this test (the WSGI entry is
    wrapped as create_app does; restored afterwards)."""
    from myapp.web.proxies import install

    monkeypatch.setattr(app, "wsgi_app", app.wsgi_app)

    def _set(setting: str) -> None:
        monkeypatch.setitem(app.config, "MYAPP_TRUSTED_PROXIES", setting)
        install(app)

    return _set


@pytest.fixture()
def three_per_minute(app, monkeypatch):
    monkeypatch.setitem(app.config, "MYAPP_LOGIN_RATE_PER_IP", "3 per minute")


def test_without_the_setting_x_forwarded_for_is_ignored(app, user, three_per_minute):
    peer = random_ip()
    for _ in range(3):
        assert login(app, user, peer, forwarded=random_ip("172.20")).status_code == 200
    refused = login(app, user, peer, forwarded=random_ip("172.20"))  # a new "address" each time: no help
    assert refused.status_code == 429 and "from this address" in refused.get_json()["message"]


def test_a_hop_count_limits_the_address_the_proxy_saw(app, user, three_per_minute, proxies):
    proxies("1")
    proxy, client, other = random_ip("10.8"), random_ip("192.0"), random_ip("192.1")
    for _ in range(3):
        assert login(app, user, proxy, forwarded=f"{random_ip('203.0')}, {client}").status_code == 200
    assert login(app, user, proxy, forwarded=client).status_code == 429  # the spoofed left part changes nothing
    assert login(app, user, proxy, forwarded=other).status_code == 200  # others behind the same proxy are not


def test_listed_proxies_are_believed_and_others_are_not(app, user, three_per_minute, proxies):
    proxies("10.66.0.0/16, ::1")
    client, outer = random_ip("198.51"), "10.66.0.9"
    for _ in range(3):  # client -> outer proxy -> inner proxy (the peer); a client's own header is left of it
        assert login(app, user, "10.66.1.1", forwarded=f"{random_ip('203.0')}, {client}, {outer}").status_code == 200
    assert login(app, user, "10.66.1.1", forwarded=f"{client}, {outer}").status_code == 429
    assert login(app, user, "10.66.1.1", forwarded=f"{random_ip('198.50')}, {outer}").status_code == 200  # others pass
    # A peer that is not a listed proxy: its header is not read, the peer itself is limited.
    stranger = random_ip("10.9")
    for _ in range(3):
        assert login(app, user, stranger, forwarded=random_ip("198.52")).status_code == 200
    assert login(app, user, stranger, forwarded=random_ip("198.53")).status_code == 429


@pytest.mark.parametrize("setting", ["2", "10.0.0.0/8"])
def test_the_access_log_sees_the_client(app, proxies, setting):
    """gunicorn's access log prints REMOTE_ADDR of the environ it gave the app."""
    from werkzeug.test import EnvironBuilder

    proxies(setting)
    environ = EnvironBuilder(path="/health", environ_base={"REMOTE_ADDR": "10.0.0.2"},
                             headers={"X-Forwarded-For": "1.2.3.4, 198.51.100.7, 10.0.0.1"}).get_environ()
    b"".join(app.wsgi_app(environ, lambda status, headers, exc_info=None: None))
    assert environ["REMOTE_ADDR"] == "198.51.100.7"


@pytest.mark.parametrize(("text", "expected"), [("", 0), ("0", 0), (" 2 ", 2)])
def test_hop_counts(text, expected):
    from myapp.web.proxies import parse

    assert parse(text) == expected


def test_addresses_and_bad_entries():
    import ipaddress

    from myapp.web.proxies import parse

    assert parse("127.0.0.1, 10.0.0.0/8") == (ipaddress.ip_network("127.0.0.1/32"), ipaddress.ip_network("10.0.0.0/8"))
    with pytest.raises(ValueError, match=r"MYAPP_TRUSTED_PROXIES: 'proxy\.local' is neither"):
        parse("10.0.0.1, proxy.local")
