"""myapp.checkpoint, the helper jobs save and load checkpoints with: a save killed mid-write (a real process,
SIGKILL) is never loaded, the one before it is; damaged data is skipped; the newest two are kept; without a
folder nothing is saved."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from myapp.checkpoint import latest_manifest, load_latest, parse_manifest, save

# Saves step 1, then starts step 2 and stops half-way through writing it, saying so on stdout.
KILLED_MID_WRITE = textwrap.dedent("""
    import sys, time
    from myapp.checkpoint import save
    save(1, b"one" * 1000, unit="epoch")
    def write(fh):
        fh.write(b"two" * 1000)
        fh.flush()
        print("writing", flush=True)
        time.sleep(60)
        fh.write(b"end")
    save(2, write, unit="epoch")
""")


def test_a_save_killed_mid_write_is_skipped_for_the_one_before(tmp_path):
    env = dict(os.environ, MYAPP_CHECKPOINT_DIR=str(tmp_path))
    child = subprocess.Popen([sys.executable, "-c", KILLED_MID_WRITE], env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "writing\n"  # the event: step 2 is half written
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert any(p.name.startswith(".tmp-") for p in tmp_path.iterdir())  # the torn write is there...
    found = load_latest(tmp_path)
    assert (found.step, found.unit, found.path.read_bytes()) == (1, "epoch", b"one" * 1000)  # ...and never loaded
    assert latest_manifest(tmp_path)["step"] == 1
    again = save(2, b"two", where=tmp_path)  # the next attempt saves over it
    assert load_latest(tmp_path).step == 2 and again.path.read_bytes() == b"two"


def test_data_without_a_manifest_or_unlike_it_is_skipped(tmp_path):
    save(3, b"three", unit="epoch", meta={"loss": 0.5}, where=tmp_path)
    (tmp_path / "ckpt-4.bin").write_bytes(b"renamed, manifest never written")
    save(5, b"five", where=tmp_path)
    (tmp_path / "ckpt-5.bin").write_bytes(b"fivE")  # same size, other bytes: the digest tells
    assert load_latest(tmp_path).step == 3 and load_latest(tmp_path).meta == {"loss": 0.5}
    assert load_latest(tmp_path, verify=False).step == 5  # size alone cannot tell
    (tmp_path / "ckpt-5.bin").write_bytes(b"fi")
    assert latest_manifest(tmp_path)["step"] == 3
    assert parse_manifest("ckpt-3.json", (tmp_path / "ckpt-3.json").read_bytes())["step"] == 3
    assert parse_manifest("ckpt-4.json", (tmp_path / "ckpt-3.json").read_bytes()) is None  # its name is its step
    assert parse_manifest("ckpt-3.json", b"{") is None


def test_the_newest_two_are_kept_and_no_folder_means_no_checkpoints(tmp_path, monkeypatch):
    for step in range(1, 5):
        save(step, lambda fh, s=step: fh.write(bytes([s]) * 10), where=tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt-3.bin", "ckpt-3.json", "ckpt-4.bin", "ckpt-4.json"]
    assert json.loads((tmp_path / "ckpt-4.json").read_text())["size"] == 10
    monkeypatch.delenv("MYAPP_CHECKPOINT_DIR", raising=False)
    assert save(1, b"x") is None and load_latest() is None
    with pytest.raises(ValueError, match="step"):
        save(-1, b"x", where=tmp_path)
