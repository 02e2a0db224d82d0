"""myapp.checkpoint, the helper jobs save and load checkpoints with: a save killed mid-write (a real process,
SIGKILL) is never loaded, the one before it is; damaged data is skipped; the newest two are kept; without a
folder nothing is saved. A stop (SIGTERM) is a flag a job reads between steps: the demo's trainer, two real
ranks, saves the epoch whose steps are done at once and both exit 143; the next run resumes from it. Ranks agree
on a stop through an all-reduce of the flag; the xgboost and tf-distributed trainers save on a stop and resume
the same way where their frameworks are installed."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time

import pytest

from myapp.checkpoint import STOPPED, latest_manifest, load_latest, parse_manifest, save
from myapp.rendering.catalog import catalog_root
from tests.support import wait_until

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


# Waits for a stop that comes (SIGTERM) after one that did not.
WAITS = textwrap.dedent("""
    import time
    from myapp.checkpoint import STOPPED, Stop
    stop = Stop()
    print(stop.wait(0.01), stop.requested, flush=True)
    began = time.monotonic()
    print(stop.wait(60), stop.requested, time.monotonic() - began < 10, flush=True)
    raise SystemExit(STOPPED)
""")


def test_a_stop_is_a_flag_that_cuts_a_wait_short():
    child = subprocess.Popen([sys.executable, "-c", WAITS], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "False False\n"  # the event: the handler is in place
        child.send_signal(signal.SIGTERM)
        out, _ = child.communicate(timeout=30)
    finally:
        child.kill()
    assert out == "True True True\n" and child.returncode == STOPPED == 143


def trainer(folder, world: int, rank: int, port: int, *args: str, template: str = "pytorch-ddp",
            env: dict[str, str] | None = None) -> subprocess.Popen:
    """A template's trainer (the demo's by default) as one rank of a job outside the platform (its checkpoint
    folder given)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MYAPP_")} | {
        "MYAPP_CHECKPOINT_DIR": str(folder / "checkpoints"), "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port),
        "WORLD_SIZE": str(world), "RANK": str(rank), "OMP_NUM_THREADS": "1"} | (env or {})
    own = ["--hidden", "16"] if template == "pytorch-ddp" else []
    return subprocess.Popen([sys.executable, str(catalog_root() / template / "main.py"), *own,
                             "--output-path", str(folder / "model.out"), *args],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def read_until(rank: subprocess.Popen, prefix: str) -> list[str]:
    """A rank's output lines up to the first that starts with ``prefix`` (the event a test waits for)."""
    lines: list[str] = []
    while not lines or not lines[-1].startswith(prefix):
        lines.append(rank.stdout.readline())
        assert lines[-1], "".join(lines)
    return lines


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.slow
def test_the_trainer_saves_on_sigterm_and_the_next_run_resumes_from_it(tmp_path):
    port, folder = free_port(), tmp_path / "checkpoints"
    ranks = [trainer(tmp_path, 2, rank, port, "--epochs", "3", "--epoch-seconds", "1.5") for rank in (0, 1)]
    try:
        read_until(ranks[0], "epoch 1/3")  # the event: epoch 1's steps are done
        assert latest_manifest(folder) is None  # its checkpoint is due at its end, about 1.5 s from now
        # Mid-epoch by the clock (its steps take milliseconds): only rank 0 is stopped, so rank 1 stops by
        # agreement, and rank 0 saves epoch 1 at once rather than at its end.
        stopped_at = time.time()
        ranks[0].send_signal(signal.SIGTERM)
        outs = [rank.communicate(timeout=30)[0] for rank in ranks]
    finally:
        for rank in ranks:
            rank.kill()
    assert [rank.returncode for rank in ranks] == [STOPPED, STOPPED], outs
    assert "stopped (SIGTERM) after epoch 1 of 3" in outs[0] and "epoch 2/3" not in outs[0], outs[0]
    found = load_latest(folder)  # whole: its size and digest checked
    assert (found.step, found.unit) == (1, "epoch")
    assert found.saved_at - stopped_at < 1.0

    resumed = trainer(tmp_path, 1, 0, free_port(), "--epochs", "2")
    out, _ = resumed.communicate(timeout=60)
    assert resumed.returncode == 0, out
    assert "resuming from epoch 1 (its checkpoint)" in out and "epoch 2/2" in out and "epoch 1/2" not in out, out
    assert load_latest(folder).step == 2


# Two ranks, each stopped by SIGTERM only between steps: they ask at every step whether any rank was stopped, through
# one all-reduce of the flag (Stop.agreed with the framework's collective, here torch's gloo, as pytorch-ddp,
# horovod-mpi and xgboost do with theirs), and rank 0 saves the last whole step before both exit with STOPPED.
AGREEING_RANKS = textwrap.dedent("""
    import sys, time
    import torch
    import torch.distributed as dist
    from myapp.checkpoint import STOPPED, Stop, save
    stop = Stop()
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    def any_rank(flag):
        tensor = torch.tensor([flag])
        dist.all_reduce(tensor, op=dist.ReduceOp.MAX)
        return int(tensor.item())
    step = 0
    while not stop.agreed(any_rank):
        step += 1
        if rank == 0:
            save(step, str(step).encode(), unit="step")
        print("step", step, flush=True)
        time.sleep(0.02)
    print("stopped after step", step, flush=True)
    dist.destroy_process_group()
    sys.exit(STOPPED)
""")


@pytest.mark.slow
def test_one_ranks_stop_stops_every_rank_at_the_same_step(tmp_path):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MYAPP_")} | {
        "MYAPP_CHECKPOINT_DIR": str(tmp_path), "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port),
        "WORLD_SIZE": "2", "OMP_NUM_THREADS": "1"}
    ranks = [subprocess.Popen([sys.executable, "-c", AGREEING_RANKS], env=env | {"RANK": str(rank)},
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for rank in (0, 1)]
    try:
        read_until(ranks[1], "step 3")  # the event: both ranks are stepping together
        ranks[1].send_signal(signal.SIGTERM)  # only rank 1 is stopped
        outs = [rank.communicate(timeout=30)[0] for rank in ranks]
    finally:
        for rank in ranks:
            rank.kill()
    assert [rank.returncode for rank in ranks] == [STOPPED, STOPPED], outs
    ends = [out.strip().splitlines()[-1] for out in outs]
    assert ends[0] == ends[1] and ends[0].startswith("stopped after step "), outs  # the same step on both
    assert load_latest(tmp_path).step == int(ends[0].rsplit(" ", 1)[1])  # and saved by rank 0 before it left


@pytest.mark.slow
def test_the_xgboost_trainer_saves_the_round_on_sigterm_and_the_next_run_resumes_from_it(tmp_path):
    """Runs where xgboost is installed (not in the platform's own environment): two ranks, one stopped; they
    agree through xgboost's collective after the round they are in, rank 0 saves that round at once and both
    exit 143; the next run boosts only the rounds left."""
    pytest.importorskip("xgboost")
    port, folder = free_port(), tmp_path / "checkpoints"
    ranks = [trainer(tmp_path, 2, rank, port, "--num-rounds", "30", "--round-seconds", "0.5", "--max-depth", "2",
                     "--checkpoint-every", "5", template="xgboost") for rank in (0, 1)]
    try:
        wait_until(lambda: latest_manifest(folder) is not None, what="the round-5 checkpoint", timeout=120)
        ranks[1].send_signal(signal.SIGTERM)  # mid-training, between checkpoints: rank 0 stops by agreement
        outs = [rank.communicate(timeout=60)[0] for rank in ranks]
    finally:
        for rank in ranks:
            rank.kill()
    assert [rank.returncode for rank in ranks] == [STOPPED, STOPPED], outs
    found = load_latest(folder)  # the round the stop came in, saved then (after round 5, the next check is 6's)
    assert found.unit == "round" and 6 <= found.step < 30, found
    assert f"stopped (SIGTERM) after round {found.step} of 30" in outs[0], outs[0]

    resumed = trainer(tmp_path, 1, 0, free_port(), "--num-rounds", "30", "--max-depth", "2", template="xgboost")
    out, _ = resumed.communicate(timeout=120)
    assert resumed.returncode == 0 and f"resuming from round {found.step} (its checkpoint)" in out, out
    assert load_latest(folder).step == 30


TF_ENV = {"TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONUNBUFFERED": "1"}  # Keras's epoch lines as they come


@pytest.mark.slow
def test_the_tf_chief_saves_the_whole_epoch_on_sigterm_and_the_next_run_resumes_from_it(tmp_path):
    """Runs where TensorFlow is installed (not in the platform's own environment): the chief alone (no
    TF_CONFIG) stopped after an epoch's steps, in its --epoch-seconds wait: that epoch is saved at once and it
    exits 143; the next run goes on from the epoch after."""
    pytest.importorskip("tensorflow")
    folder = tmp_path / "checkpoints"
    chief = trainer(tmp_path, 1, 0, free_port(), "--epochs", "5", "--steps-per-epoch", "5", "--epoch-seconds", "3",
                    template="tf-distributed", env=TF_ENV)
    try:
        read_until(chief, "Epoch 3/5")  # the event: epoch 2 saved (Keras prints its line after our callback's)
        assert load_latest(folder).step == 2
        time.sleep(1.0)  # epoch 3's five steps take milliseconds once traced: this is its 3 s wait
        stopped_at = time.time()
        chief.send_signal(signal.SIGTERM)
        out = chief.communicate(timeout=60)[0]
    finally:
        chief.kill()
    assert chief.returncode == STOPPED, out
    assert "stopped (SIGTERM) after epoch 3 of 5" in out and "Epoch 4/5" not in out, out
    found = load_latest(folder)
    assert found.step == 3 and found.saved_at - stopped_at < 1.0  # at once, not at the wait's end

    resumed = trainer(tmp_path, 1, 0, free_port(), "--epochs", "4", "--steps-per-epoch", "5",
                      template="tf-distributed", env=TF_ENV)
    out, _ = resumed.communicate(timeout=120)
    assert resumed.returncode == 0 and "resuming from epoch 3 (its checkpoint)" in out, out
    assert "Epoch 4/4" in out and "Epoch 3/4" not in out and load_latest(folder).step == 4
