"""One point of a hyper-parameter sweep, run in every pod of a Volcano Job.

Volcano's env plugin sets VC_TASK_INDEX (0..replicas-1); pod i fits a logistic regression
with C = c_min * (c_max / c_min) ** (i / (replicas - 1)) and writes its result as JSON. Each point's result
is also its checkpoint (MYAPP_CHECKPOINT_DIR/point-<i>, myapp.checkpoint): a later attempt of the task does
not fit a point again that an earlier attempt finished (docs/checkpoints.md).
"""
from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from myapp.checkpoint import load_latest, save  # the job SDK, in the image beside this file (docs/checkpoints.md)


def sweep_point(index: int, replicas: int, c_min: float, c_max: float) -> float:
    low, high = sorted((c_min, c_max))
    if replicas == 1:
        return low
    return low * (high / low) ** (index / (replicas - 1))


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--replicas", type=int, default=1)
    parser.add_argument("--c-min", type=float, default=0.01)
    parser.add_argument("--c-max", type=float, default=100.0)
    parser.add_argument("--output-dir", default="/mnt/output/sweep")
    args = parser.parse_args(argv)
    index = int(os.environ.get("VC_TASK_INDEX", os.environ.get("VK_TASK_INDEX", "0")))
    kept = os.environ.get("MYAPP_CHECKPOINT_DIR")
    point = os.path.join(kept, f"point-{index}") if kept else None
    done = load_latest(point) if point else None
    if done is not None:  # an earlier attempt finished this point
        result = json.loads(done.path.read_bytes())
        print(json.dumps(result | {"resumed": True}), flush=True)
        _write(args.output_dir, index, result)
        return result

    features, labels = load_digits(return_X_y=True)
    x_train, x_test, y_train, y_test = train_test_split(
        features / 16.0, labels, test_size=0.2, random_state=42, stratify=labels)
    c = sweep_point(index, args.replicas, args.c_min, args.c_max)
    model = LogisticRegression(C=c, max_iter=2000).fit(x_train, y_train)
    result = {"index": index, "C": c, "test_accuracy": float(model.score(x_test, y_test))}
    print(json.dumps(result), flush=True)
    _write(args.output_dir, index, result)
    if point:
        save(1, json.dumps(result).encode(), unit="point", where=point)
    return result


def _write(folder: str, index: int, result: dict) -> None:
    output = Path(folder) / f"result-{index}.json"
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(result))


if __name__ == "__main__":
    main()
