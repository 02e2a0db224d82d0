"""Distributed XGBoost on the digits dataset.

The training-operator sets MASTER_ADDR, MASTER_PORT, WORLD_SIZE and RANK. Rank 0 (the
Master) runs the collective tracker on MASTER_PORT; every rank joins it, trains on its own
shard (xgboost synchronises the histograms), and rank 0 reports test accuracy and saves
the booster. Without those variables it trains alone. Rank 0 saves the booster to MYAPP_CHECKPOINT_DIR
(myapp.checkpoint, atomically) every --checkpoint-every rounds; a later attempt of the task loads the newest
complete one and boosts only the rounds left (docs/checkpoints.md).
"""
from __future__ import annotations

import argparse
import os

import numpy as np
import xgboost as xgb
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from xgboost.tracker import RabitTracker

from myapp.checkpoint import load_latest, save  # the job SDK, in the image beside this file (docs/checkpoints.md)


class Checkpoints(xgb.callback.TrainingCallback):
    """Rank 0 saves the booster after every `every` rounds."""

    def __init__(self, rank: int, every: int):
        super().__init__()
        self.rank, self.every = rank, every

    def after_iteration(self, model, epoch, evals_log) -> bool:
        rounds = model.num_boosted_rounds()  # the checkpoint's rounds included
        if self.rank == 0 and rounds % self.every == 0:
            save(rounds, bytes(model.save_raw("ubj")), unit="round")
        return False  # go on


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--num-rounds", type=int, default=50)
    parser.add_argument("--max-depth", type=int, default=6)
    parser.add_argument("--eta", type=float, default=0.3)
    parser.add_argument("--output-path", default="/mnt/output/xgboost-model.json")
    parser.add_argument("--checkpoint-every", type=int, default=5)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
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
    with xgb.collective.CommunicatorContext(dmlc_tracker_uri=host, dmlc_tracker_port=port,
                                            dmlc_task_id=str(rank)):
        booster = xgb.train(params, xgb.DMatrix(x_train[shard], label=y_train[shard]),
                            num_boost_round=max(args.num_rounds - done, 0), xgb_model=start,
                            callbacks=[Checkpoints(rank, max(args.checkpoint_every, 1))])
    if rank == 0:
        accuracy = float((booster.predict(xgb.DMatrix(x_test)) == y_test).mean())
        print(f"test accuracy: {accuracy:.4f}", flush=True)
        os.makedirs(os.path.dirname(args.output_path), exist_ok=True)
        booster.save_model(args.output_path)
        print(f"model saved to {args.output_path}", flush=True)
        tracker.wait_for()


if __name__ == "__main__":
    main()
