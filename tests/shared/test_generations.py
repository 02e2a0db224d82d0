"""Generations shared by the processes of the platform (myapp/shared/generations.py): a change made by one
process is what every other process reads next, on the embedded file and on Redis."""
from __future__ import annotations

import multiprocessing
import uuid

import pytest

from myapp.shared.generations import MappedGenerations, RedisGenerations
from tests.support import redis_test_url

pytestmark = pytest.mark.backends


def _bump_in_child(path: str, key: str) -> None:
    MappedGenerations(path).bump(key)


def test_a_change_in_another_process_is_read_here(tmp_path):
    store = MappedGenerations(tmp_path / "generations.bin")
    before = store.read("caller:7", "caller:*")
    assert before == store.read("caller:7", "caller:*")  # reading changes nothing
    child = multiprocessing.get_context("spawn").Process(target=_bump_in_child,
                                                         args=(str(tmp_path / "generations.bin"), "caller:7"))
    child.start()
    child.join(60)
    assert child.exitcode == 0
    after = store.read("caller:7", "caller:*")
    assert after[0] != before[0] and after[1] == before[1]


def test_every_bump_is_a_new_generation_and_the_file_outlives_the_process(tmp_path):
    path = tmp_path / "generations.bin"
    store = MappedGenerations(path)
    seen = {store.read("memberships:1")}
    for _ in range(50):
        store.bump("memberships:1")
        seen.add(store.read("memberships:1"))
    assert len(seen) == 51
    assert MappedGenerations(path).read("memberships:1") == store.read("memberships:1")


def test_redis_generations_change_on_bump():
    store = RedisGenerations(redis_test_url("tests"))
    one, two = (f"caller:{uuid.uuid4().hex}" for _ in range(2))  # the DB is shared with other tests
    first = store.read(one, two)
    store.bump(one)
    second = store.read(one, two)
    assert second[0] != first[0] and second[1] == first[1]
    store.bump(one)
    assert store.read(one)[0] not in (first[0], second[0])


def test_unset_generations_say_so():
    from myapp.shared.generations import Generations

    with pytest.raises(RuntimeError, match="init_app"):
        Generations().read("caller:1")
