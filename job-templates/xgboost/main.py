"""Distributed XGBoost on the digits dataset.

The training-operator sets MASTER_ADDR, MASTER_PORT, WORLD_SIZE and RANK. Rank 0 (the
Master) runs the collective tracker on MASTER_PORT; every rank joins it, trains on its own
shard (xgboost synchronises the histograms), and rank 0 reports test accuracy and saves
the booster. Without those variables it trains alone. Rank 0 saves the booster to MYAPP_CHECKPOINT_DIR
(myapp.checkpoint, atomically) every --checkpoint-every rounds; a later attempt of the task loads the newest
complete one and boosts only the rounds left (docs/checkpoints.md). A stop (SIGTERM, then SIGKILL after the
grace period) ends the round every rank is in: after each round the ranks agree through the collective (one
all-reduce of the flag), rank 0 saves that round at once and every rank exits with 143
(myapp.checkpoint.STOPPED), losing no finished round. --round-seconds slows each round down to at least that
long (tests stop it mid-training).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
import xgboost as xgb
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from xgboost.tracker import RabitTracker

from myapp.checkpoint import STOPPED, Stop, load_latest, save  # the job SDK, beside this file (docs/checkpoints.md)


def any_rank(flag: int) -> int:
    """Every rank's stop flag, all-reduced (MAX) through xgboost's collective (``Stop.agreed``)."""
    return int(xgb.collective.allreduce(np.array([flag], dtype=np.int32), xgb.collective.Op.MAX)[0])


class Checkpoints(xgb.callback.TrainingCallback):
    """After each round: rank 0 saves the booster every `every` rounds, and at once when the ranks agree to
    stop, which ends the training (``stopped``) unless that round was the last."""

    def __init__(self, stop: Stop, rank: int, world: int, every: int, rounds: int, round_seconds: float):
        super().__init__()
        self.stop, self.rank, self.every, self.rounds, self.round_seconds = stop, rank, every, rounds, round_seconds
        self.agree = any_rank if world > 1 else None
        self.stopped, self.began = False, time.monotonic()

    def after_iteration(self, model, epoch, evals_log) -> bool:
        rounds = model.num_boosted_rounds()  # the checkpoint's rounds included
        self.stop.wait(self.round_seconds - (time.monotonic() - self.began))  # the round is done: a stop saves it
        # Every rank asks after every round but the last (after it, finishing beats stopping).
        self.stopped = rounds < self.rounds and self.stop.agreed(self.agree)
        if self.rank == 0 and (self.stopped or rounds % self.every == 0):
            save(rounds, bytes(model.save_raw("ubj")), unit="round")
        self.began = time.monotonic()
        return self.stopped  # True ends xgb.train after this round


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--num-rounds", type=int, default=50)
    parser.add_argument("--max-depth", type=int, default=6)
    parser.add_argument("--eta", type=float, default=0.3)
    parser.add_argument("--output-path", default="/mnt/output/xgboost-model.json")
    parser.add_argument("--checkpoint-every", type=int, default=5)
    parser.add_argument("--round-seconds", type=float, default=0.0,
                        help="make each round last at least this long (0: as fast as it trains)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> float | None:
    """Train; the test accuracy on rank 0 (0.0 on the others), or None when stopped (SIGTERM) before the end."""
    args = parse_args(argv)
    stop = Stop()  # before anything slow: a SIGTERM from here on ends a round, not the process
    rank, world = int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))
    host, port = os.environ.get("MASTER_ADDR", "127.0.0.1"), int(os.environ.get("MASTER_PORT", "9999"))

    features, labels = load_digits(return_X_y=True)
    x_train, x_test, y_train, y_test = train_test_split(
        features, labels, test_size=0.2, random_state=42, stratify=labels)
    shard = np.arange(rank, len(x_train), world)  # disjoint, deterministic shards

    tracker = None
    if rank == 0:
        tracker = RabitTracker(n_workers=world, host_ip="0.0.0.0", port=port)
        tracker.start()
    params = {"objective": "multi:softmax", "num_class": 10, "max_depth": args.max_depth,
              "eta": args.eta, "tree_method": "hist"}
    found = load_latest()  # every rank starts from the same booster
    start = xgb.Booster(model_file=bytearray(found.path.read_bytes())) if found is not None else None
    done = found.step if found is not None else 0
    if rank == 0 and done:
        print(f"resuming from round {done} (its checkpoint)", flush=True)
    kept = Checkpoints(stop, rank, world, max(args.checkpoint_every, 1), args.num_rounds, args.round_seconds)
    with xgb.collective.CommunicatorContext(dmlc_tracker_uri=host, dmlc_tracker_port=port,
                                            dmlc_task_id=str(rank)):
        booster = xgb.train(params, xgb.DMatrix(x_train[shard], label=y_train[shard]),
                            num_boost_round=max(args.num_rounds - done, 0), xgb_model=start, callbacks=[kept])
    accuracy = None
    if rank == 0:
        rounds = booster.num_boosted_rounds()
        if kept.stopped:
            print(f"stopped (SIGTERM) after round {rounds} of {args.num_rounds}", flush=True)
        else:
            accuracy = float((booster.predict(xgb.DMatrix(x_test)) == y_test).mean())
            print(f"test accuracy: {accuracy:.4f}", flush=True)
            os.makedirs(os.path.dirname(args.output_path), exist_ok=True)
            booster.save_model(args.output_path)
            print(f"model saved to {args.output_path}", flush=True)
        tracker.wait_for()
    return None if kept.stopped else (accuracy if accuracy is not None else 0.0)


if __name__ == "__main__":
    sys.exit(0 if main() is not None else STOPPED)
