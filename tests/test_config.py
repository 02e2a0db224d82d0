"""Settings read from the environment at start (myapp/config.py): a bad value stops the process there, naming the
variable and why, instead of running with the default unsaid."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from myapp.config import build_config

SECONDS = ("MYAPP_CLAIM_METRICS_SECONDS", "MYAPP_CLAIM_CHECKPOINT_SECONDS")


@pytest.mark.parametrize("name", SECONDS)
@pytest.mark.parametrize("raw", ["1O", "ten", "-5", "nan", "inf", "10s"])
def test_a_bad_number_of_seconds_is_refused_naming_the_variable(name, raw, tmp_path, monkeypatch):
    monkeypatch.setenv(name, raw)
    with pytest.raises(ValueError) as refused:
        build_config({"INSTANCE_PATH": str(tmp_path)})
    assert str(refused.value).startswith(f"{name}={raw!r}: must be a number of seconds, 0 or more (default ")


def test_numbers_of_seconds_are_read_and_unset_ones_default(tmp_path, monkeypatch):
    monkeypatch.setenv("MYAPP_CLAIM_METRICS_SECONDS", " 2.5 ")
    monkeypatch.setenv("MYAPP_CLAIM_CHECKPOINT_SECONDS", "0")
    config = build_config({"INSTANCE_PATH": str(tmp_path)})
    assert (config["MYAPP_CLAIM_METRICS_SECONDS"], config["MYAPP_CLAIM_CHECKPOINT_SECONDS"]) == (2.5, 0.0)
    for name in SECONDS:
        monkeypatch.delenv(name)
    config = build_config({"INSTANCE_PATH": str(tmp_path)})
    assert (config["MYAPP_CLAIM_METRICS_SECONDS"], config["MYAPP_CLAIM_CHECKPOINT_SECONDS"]) == (10.0, 60.0)


def test_the_worker_does_not_start_with_a_typo_and_says_which_setting(tmp_path):
    env = {key: value for key, value in os.environ.items() if key not in ("DATABASE_URL", "REDIS_URL")}
    env.update(MYAPP_HOME=str(tmp_path), MYAPP_CLAIM_METRICS_SECONDS="1O")
    done = subprocess.run([sys.executable, "-c", "import myapp.worker"], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode != 0
    assert "ValueError: MYAPP_CLAIM_METRICS_SECONDS='1O': must be a number of seconds, 0 or more (default 10)" \
        in done.stderr, done.stderr[-2000:]
