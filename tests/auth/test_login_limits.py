"""Sign-in limits that slow attackers without locking owners out (myapp/auth/login_limits.py): wrong passwords
never end sessions or tokens; each (account, address) backs off on its own failures, answered at once
with a growing Retry-After; an account's attempts from new addresses share a ceiling its known addresses
never meet; admins see and clear the limits."""
from __future__ import annotations

import time
import uuid

import pytest

from tests.security.test_web_hardening import jwt_login, session_login
from tests.support import ApiClient, login_token

pytestmark = pytest.mark.backends

SETTINGS = {"MYAPP_LOGIN_BACKOFF_FREE": 3, "MYAPP_LOGIN_BACKOFF_SECONDS": 1.0,
            "MYAPP_LOGIN_BACKOFF_MAX_SECONDS": 60.0, "MYAPP_LOGIN_BACKOFF_RESET_SECONDS": 3600.0,
            "MYAPP_LOGIN_NEW_ADDRESS_BURST": 10, "MYAPP_LOGIN_NEW_ADDRESS_SECONDS": 60.0,
            "MYAPP_LOGIN_KNOWN_ADDRESS_DAYS": 30.0}


class Clock:
    """The limits' clock (myapp.auth.login_limits.now), moved by the test instead of waited for."""

    def __init__(self) -> None:
        self.at = time.time()

    def __call__(self) -> float:
        return self.at

    def advance(self, seconds: float) -> None:
        self.at += seconds


@pytest.fixture()
def clock(app, monkeypatch) -> Clock:
    import myapp.auth.login_limits

    for name, value in SETTINGS.items():
        monkeypatch.setitem(app.config, name, value)
    found = Clock()
    monkeypatch.setattr(myapp.auth.login_limits, "now", found)
    return found


def new_ip(prefix: str = "10.61") -> str:
    return f"{prefix}.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250 + 1}"


def message(resp) -> str:
    return resp.get_json()["message"]


def test_an_attack_from_other_addresses_never_locks_the_owner_out(app, make_user, clock):
    owner = make_user(admin=True)
    known, attacker, new = new_ip(), new_ip("10.62"), new_ip("10.63")
    browser, first = session_login(app, owner.username, owner.password, known)
    assert first.status_code == 200

    # The attacker's failures from one address: three free, then waits that double, answered at once.
    waits = []
    for attempt in range(8):
        answer = jwt_login(app, owner.username, f"guess number {attempt}", attacker)
        assert answer.status_code == 401, answer.get_json()
        if attempt < 3:
            continue
        limited = jwt_login(app, owner.username, owner.password, attacker)  # the right one: no hint of it
        assert limited.status_code == 429 and "from this address" in message(limited), limited.get_json()
        assert "access_token" not in limited.get_json()
        waits.append(int(limited.headers["Retry-After"]))
        clock.advance(waits[-1])
    assert waits == [1, 2, 4, 8, 16]

    # Spread over many addresses, the attack meets the ceiling of the account's attempts from new ones.
    spread = [jwt_login(app, owner.username, "another guess!", new_ip("10.64")).status_code for _ in range(6)]
    assert 429 in spread and set(spread) <= {401, 429}, spread

    # The owner: at the address they signed in from, at once; their session and token still work.
    again = jwt_login(app, owner.username, owner.password, known)
    assert again.status_code == 200, again.get_json()
    assert browser.get("/api/v1/me/").status_code == 200 and owner.get("/api/v1/me/").status_code == 200
    # At a new address: slowed to the account's rate, never refused for longer than its interval.
    slowed = jwt_login(app, owner.username, owner.password, new)
    assert slowed.status_code == 429 and "from new addresses" in message(slowed), slowed.get_json()
    assert 1 <= int(slowed.headers["Retry-After"]) <= SETTINGS["MYAPP_LOGIN_NEW_ADDRESS_SECONDS"]
    clock.advance(int(slowed.headers["Retry-After"]))
    assert jwt_login(app, owner.username, owner.password, new).status_code == 200
    # ... and that address is known from now on, however spent the account's budget is.
    assert jwt_login(app, owner.username, "a guess from afar", new_ip("10.65")).status_code == 429
    assert jwt_login(app, owner.username, owner.password, new).status_code == 200


def test_wrong_passwords_never_end_sessions_or_tokens(app, user, clock):
    browser, _ = session_login(app, user.username, user.password)
    for _ in range(12):
        jwt_login(app, user.username, "not the password", new_ip())
        clock.advance(120)
    assert browser.get("/api/v1/me/").status_code == 200 and user.get("/api/v1/me/").status_code == 200


def test_a_limited_attempt_holds_no_thread(app, user, clock, monkeypatch):
    monkeypatch.setitem(app.config, "MYAPP_LOGIN_BACKOFF_FREE", 0)
    monkeypatch.setitem(app.config, "MYAPP_LOGIN_BACKOFF_SECONDS", 600.0)
    monkeypatch.setitem(app.config, "MYAPP_LOGIN_BACKOFF_MAX_SECONDS", 600.0)
    ip = new_ip()
    assert jwt_login(app, user.username, "not the password", ip).status_code == 401

    def no_sleep(seconds: float) -> None:
        raise AssertionError(f"a login request slept {seconds} s")

    monkeypatch.setattr(time, "sleep", no_sleep)
    started = time.perf_counter()
    limited = jwt_login(app, user.username, user.password, ip)
    elapsed = time.perf_counter() - started
    assert limited.status_code == 429 and int(limited.headers["Retry-After"]) == 600
    assert elapsed < 1.0, f"a limited attempt took {elapsed:.2f} s"


def test_a_success_ends_the_streak_and_time_forgets_it(app, user, clock):
    ip = new_ip()
    for _ in range(2):
        assert jwt_login(app, user.username, "not the password", ip).status_code == 401
    assert jwt_login(app, user.username, user.password, ip).status_code == 200
    for _ in range(3):  # three free again: the success ended the streak
        assert jwt_login(app, user.username, "not the password", ip).status_code == 401
    assert jwt_login(app, user.username, "not the password", ip).status_code == 401  # the 4th: waits 1 s
    assert jwt_login(app, user.username, user.password, ip).status_code == 429
    clock.advance(SETTINGS["MYAPP_LOGIN_BACKOFF_RESET_SECONDS"])
    for _ in range(3):  # forgotten after an hour without failures
        assert jwt_login(app, user.username, "not the password", ip).status_code == 401


def test_unknown_names_are_limited_alike(app, user, clock):
    def answers(name: str) -> list[int]:
        ip = new_ip()
        return [jwt_login(app, name, "not the password", ip).status_code for _ in range(5)]

    assert answers(f"nobody-{uuid.uuid4().hex[:8]}") == answers(user.username) == [401, 401, 401, 401, 429]


def test_admins_see_and_clear_an_accounts_limits(app, admin, make_user, clock):
    target = make_user()
    known, attacker = new_ip(), new_ip("10.66")
    assert jwt_login(app, target.username, target.password, known).status_code == 200
    for _ in range(4):
        jwt_login(app, target.username, "not the password", attacker)
    url = f"/api/v1/user/{target.user_id}/login_limits"
    seen = admin.get(url)
    assert seen.status_code == 200, seen.get_json()
    state = seen.get_json()
    assert state["addresses"] == [{"address": attacker, "failures": 4, "retry_after": 1}]
    assert state["new_addresses"]["attempts_left"] < SETTINGS["MYAPP_LOGIN_NEW_ADDRESS_BURST"]
    assert known in [k["address"] for k in state["known_addresses"]]
    listed = admin.get(f"/api/v1/user/?username={target.username}").get_json()["items"]
    assert listed[0]["sign_in_limited"] is True

    assert jwt_login(app, target.username, target.password, attacker).status_code == 429
    cleared = admin.delete(url)
    assert cleared.status_code == 200, cleared.get_json()
    assert cleared.get_json()["addresses"] == [] and cleared.get_json()["new_addresses"] == {
        "attempts_left": SETTINGS["MYAPP_LOGIN_NEW_ADDRESS_BURST"], "retry_after": 0}
    assert known in [k["address"] for k in cleared.get_json()["known_addresses"]]  # known addresses stay
    assert admin.get(f"/api/v1/user/?username={target.username}").get_json()["items"][0]["sign_in_limited"] is False
    assert jwt_login(app, target.username, target.password, attacker).status_code == 200

    plain = ApiClient(app.test_client(), login_token(app.test_client(), target.username, target.password))
    assert plain.get(url).status_code == 403 and plain.delete(url).status_code == 403  # admins only


def test_the_backoff_doubles_up_to_its_cap():
    from myapp.auth.login_limits import backoff

    s = {"BACKOFF_FREE": 3.0, "BACKOFF_SECONDS": 1.0, "BACKOFF_MAX_SECONDS": 900.0}
    assert [backoff(n, s) for n in range(1, 16)] == [0, 0, 0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900]
    assert backoff(10**9, s) == 900  # a very long streak stays at the cap


@pytest.mark.parametrize(("given", "counted"), [
    ("192.0.2.7", "192.0.2.7"),
    ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"),  # one client holds a whole /64
    ("2001:db8:1:2:ffff::1", "2001:db8:1:2::/64"),
    ("::ffff:192.0.2.7", "192.0.2.7"),
    ("fe80::1%eth0", "fe80::/64"),
    ("not an address", "not an address"),
    (None, "-"),
])
def test_addresses_are_counted_by_client(given, counted):
    from myapp.auth.login_limits import address_key

    assert address_key(given) == counted
