"""A job races its own outputs folder against the platform serving it: while a real process swaps ``d`` in its
attempt's folder between a link to a decoy inside, a link to a folder of the platform's outside, and the real
decoy folder (fresh links renamed over it, and renameat2 RENAME_EXCHANGE), the job's run token downloads,
previews and zips ``d/secret.txt`` for RACE_SECONDS. Not one answer may hold the secret's bytes, and none may
be a server error: a link or a swap anywhere in the path is "not found" (404)."""
from __future__ import annotations

import collections
import io
import os
import secrets
import time
import zipfile

import pytest

from tests.fs import attackers
from tests.fs.conftest import resolver  # noqa: F401 (the fixture: openat2, and the component walk)
from tests.outputs.support import attempt_with_token

pytestmark = pytest.mark.slow  # RACE_SECONDS each; not backend-specific (the first pass runs them)

SIZE = 32  # the decoy and the secret are the same size: a zip copies at most what was listed


@pytest.fixture
def raced(app, catalog, tmp_path):
    """(a client with the job's own run token, its attempt's id, the attempt's folder, the secret's folder)."""
    client, attempt_id, folder = attempt_with_token(app, catalog)
    (folder / "decoy").mkdir()
    (folder / "decoy" / "secret.txt").write_bytes(b"D" * SIZE)
    os.symlink("decoy", folder / "d")
    platform = tmp_path / "platform"  # stands for MYAPP_HOME: the secret key beside the database
    platform.mkdir()
    (platform / "secret.txt").write_bytes(secrets.token_hex(SIZE // 2).encode())
    return client, attempt_id, folder, platform


def race(client, url, folder, platform, read=lambda body: [body]) -> collections.Counter:
    """Requests to url while the attacker swaps ``d``; the statuses seen. Fails on a leak or a 5xx."""
    secret = (platform / "secret.txt").read_bytes()
    attacker = attackers.start(attackers.SWAP_LINKS, folder, platform, attackers.RACE_SECONDS)
    statuses: collections.Counter = collections.Counter()
    leaks, errors = 0, []
    deadline = time.monotonic() + attackers.RACE_SECONDS
    try:
        while time.monotonic() < deadline:
            answer = client.get(url)
            statuses[answer.status_code] += 1
            if answer.status_code >= 500:
                errors.append(answer.get_data(as_text=True)[:300])
            elif answer.status_code == 200 and any(secret in part for part in read(answer.data)):
                leaks += 1
    finally:
        swapped = attackers.swaps(attacker)
    assert swapped > 1000, f"the attacker swapped only {swapped} times"
    assert leaks == 0, f"{leaks} of {sum(statuses.values())} answers held the secret: {dict(statuses)}"
    assert not errors, f"{len(errors)} server errors of {sum(statuses.values())} ({dict(statuses)}): {errors[:3]}"
    assert set(statuses) <= {200, 404}, dict(statuses)
    return statuses


def test_download_races_a_swapped_link(raced, resolver):  # noqa: F811
    client, attempt_id, folder, platform = raced
    statuses = race(client, f"/api/v1/task_run/{attempt_id}/output?path=d/secret.txt", folder, platform)
    assert statuses[404] > 0 and statuses[200] > 0, dict(statuses)  # the real folder was served, the links never


def test_preview_races_a_swapped_link(raced):
    client, attempt_id, folder, platform = raced
    race(client, f"/api/v1/task_run/{attempt_id}/output?path=d/secret.txt&preview=1", folder, platform)


def test_download_all_races_a_swapped_link(raced):
    client, attempt_id, folder, platform = raced

    def members(body: bytes) -> list[bytes]:
        with zipfile.ZipFile(io.BytesIO(body)) as zf:
            return [body, *(zf.read(name) for name in zf.namelist())]

    statuses = race(client, f"/api/v1/task_run/{attempt_id}/output", folder, platform, read=members)
    assert statuses[200] > 0, dict(statuses)
