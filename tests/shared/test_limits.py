"""Limits hold across web processes (myapp/shared/limits.py): two processes of the app sharing one
instance folder without Redis, as gunicorn's workers do, count login attempts per address and open event
streams per user together, and the sign-in backoff (SQL) counts failed passwords of both; the slot stores
(the file, Redis) share slots between handles and let a dead holder's lapse."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.security.test_web_hardening import run_url  # noqa: F401 - the fixture

pytestmark = pytest.mark.backends

ROOT = Path(__file__).resolve().parents[2]


class WebProcess:
    def __init__(self, home: Path, config: dict) -> None:
        env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"} | {"MYAPP_HOME": str(home)}
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.security.web_process", json.dumps(config)],
                                     cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.shared_file = self.answer()["ready"]

    def answer(self) -> dict:
        line = self.proc.stdout.readline()  # type: ignore[union-attr]
        assert line, f"the web process ended (exit {self.proc.poll()})"
        return json.loads(line)

    def do(self, **command) -> int:
        return self.ask(**command)["status"]

    def ask(self, **command) -> dict:
        self.proc.stdin.write(json.dumps(command) + "\n")  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]
        return self.answer()

    def stop(self) -> None:
        self.proc.stdin.close()  # type: ignore[union-attr]
        self.proc.wait(timeout=30)


LIMITS = {"MYAPP_LOGIN_RATE_PER_IP": "3 per minute", "MYAPP_LOGIN_BACKOFF_FREE": 1,
          "MYAPP_LOGIN_BACKOFF_SECONDS": 600, "MYAPP_STREAMS_PER_USER": 2}


@pytest.fixture(scope="module")
def two(app, instance_dir) -> Iterator[tuple[WebProcess, WebProcess]]:
    """Two web processes on the test's instance folder and database, with LIMITS."""
    a = WebProcess(instance_dir, LIMITS)
    b = WebProcess(instance_dir, LIMITS)
    yield a, b
    a.stop()
    b.stop()


def new_ip() -> str:
    return f"10.77.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}"


def test_login_attempts_per_address_count_across_processes(user, two):
    a, b = two
    assert a.shared_file and a.shared_file == b.shared_file
    ip = new_ip()
    login = {"do": "login", "username": user.username, "password": user.password, "ip": ip}
    assert [a.do(**login), b.do(**login), a.do(**login)] == [200, 200, 200]
    assert b.do(**login) == 429 and a.do(**login) == 429  # 3 in all, not 3 in each
    assert b.do(**(login | {"ip": new_ip()})) == 200


def test_the_backoff_counts_failures_on_every_process(user, two):
    a, b = two
    wrong = {"do": "login", "username": user.username, "password": "not the password", "ip": new_ip()}
    assert [a.do(**wrong), b.do(**wrong)] == [401, 401]  # one free, the second makes the pair wait
    right = a.ask(**(wrong | {"password": user.password}))
    assert right["status"] == 429 and "for this account from this address" in right["message"]


def test_open_streams_per_user_count_across_processes(user, run_url, two):  # noqa: F811
    a, b = two
    stream = {"do": "stream", "url": run_url, "token": user.token}
    assert a.do(**stream) == 200 and b.do(**stream) == 200
    assert a.do(**stream) == 429 and b.do(**stream) == 429  # 2 in all
    assert b.do(do="close") == 0  # b's stream closed: its slot is free for either process
    assert a.do(**stream) == 200 and b.do(**stream) == 429
    a.do(do="close")


@pytest.fixture(params=["file", "redis"])
def slot_stores(request, tmp_path):
    """Two handles on one slot store, as two web processes have: the instance folder's file, or Redis."""
    from myapp.shared.limits import RedisSlots, SharedFile
    from tests.support import REDIS_TEST_URL

    if request.param == "file":
        return SharedFile(tmp_path / "limits.sqlite"), SharedFile(tmp_path / "limits.sqlite")
    return RedisSlots(REDIS_TEST_URL), RedisSlots(REDIS_TEST_URL)


def user_ids(n: int) -> list[int]:
    """Ids no other test uses (the Redis DB is shared by the pass)."""
    base = uuid.uuid4().int % 10**12
    return [base + i for i in range(n)]


def test_slots_per_user_are_shared_and_released(slot_stores):
    a, b = slot_stores
    user, other = user_ids(2)
    first = a.take_slot(user, 2, hold_seconds=60)
    assert first is not None and b.take_slot(user, 2, hold_seconds=60) is not None
    assert a.take_slot(user, 2, hold_seconds=60) is None and b.take_slot(user, 2, hold_seconds=60) is None
    assert b.take_slot(other, 2, hold_seconds=60) is not None  # another user's count is their own
    b.release_slot(first)  # released by whichever handle: the slot is the store's
    assert a.take_slot(user, 2, hold_seconds=60) is not None


def test_a_dead_process_holds_its_slots_for_a_bounded_time(slot_stores):
    """A process killed while streaming cannot release its slots: they stop counting after their hold time."""
    a, b = slot_stores
    [user] = user_ids(1)
    assert a.take_slot(user, 1, hold_seconds=0.3) is not None
    assert b.take_slot(user, 1, hold_seconds=0.3) is None
    time.sleep(0.4)
    assert b.take_slot(user, 1, hold_seconds=0.3) is not None
