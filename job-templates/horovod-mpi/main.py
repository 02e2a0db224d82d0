"""Horovod (PyTorch) training on the digits dataset, started by mpirun from the Launcher.

Each MPI rank trains on its shard; hvd.DistributedOptimizer all-reduces gradients.
Rank 0 prints the test accuracy and saves the model. After every epoch rank 0 saves the model and
optimizer state to MYAPP_CHECKPOINT_DIR (myapp.checkpoint, atomically); a later attempt of the task resumes
after the newest complete one (docs/checkpoints.md). A stop (SIGTERM to any rank, then SIGKILL after the grace
period) ends the step every rank is in: before each step the ranks agree by an allreduce of the flag, an epoch
whose steps are all done is saved at once, one cut short is dropped, and every rank exits with 143
(myapp.checkpoint.STOPPED). --epoch-seconds slows each epoch down to at least that long.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import horovod.torch as hvd
import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from torch import nn

from myapp.checkpoint import STOPPED, Stop, load_latest, save  # the job SDK, beside this file (docs/checkpoints.md)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--output-path", default="/mnt/output/horovod-model.pt")
    parser.add_argument("--epoch-seconds", type=float, default=0.0,
                        help="make each epoch last at least this long (0: as fast as it trains)")
    return parser.parse_args(argv)


def any_rank(flag: int) -> int:
    """Every rank's stop flag, summed by one allreduce: the ranks stop together, since each step's gradients
    need every rank (``Stop.agreed``)."""
    return int(hvd.allreduce(torch.tensor([flag]), op=hvd.Sum, name="stop").item())


def main(argv: list[str] | None = None) -> float | None:
    """Train; the test accuracy on rank 0 (0.0 on the others), or None when stopped (SIGTERM) before the end."""
    args = parse_args(argv)
    stop = Stop()  # before anything slow: a SIGTERM from here on ends a step, not the process
    hvd.init()
    torch.manual_seed(42)
    features, labels = load_digits(return_X_y=True)
    x_train, x_test, y_train, y_test = train_test_split(
        features / 16.0, labels, test_size=0.2, random_state=42, stratify=labels)
    x_train = torch.tensor(x_train[hvd.rank()::hvd.size()], dtype=torch.float32)
    y_train = torch.tensor(y_train[hvd.rank()::hvd.size()], dtype=torch.long)

    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    # Scale the learning rate with the number of ranks, as Horovod recommends.
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr * hvd.size(), momentum=0.9)
    optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters())
    found = load_latest()  # every rank reads the same checkpoint; the broadcasts below keep them equal anyway
    if found is not None:
        state = torch.load(found.path, map_location="cpu", weights_only=True)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        torch.manual_seed(42 + found.step)  # the shuffles of the epochs left differ from the ones done
    start = found.step if found is not None else 0
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    hvd.broadcast_optimizer_state(optimizer, root_rank=0)
    loss_fn = nn.CrossEntropyLoss()

    if hvd.rank() == 0 and start:
        print(f"resuming from epoch {start} (its checkpoint)", flush=True)

    stopped, done = False, start  # done: the epochs trained and saved
    for epoch in range(start, args.epochs):
        began = time.monotonic()
        permutation = torch.randperm(len(x_train))
        for first in range(0, len(x_train), args.batch_size):
            if stop.agreed(any_rank):  # stopped mid-epoch: its steps so far are dropped, the last checkpoint stands
                stopped = True
                break
            index = permutation[first:first + args.batch_size]
            optimizer.zero_grad()
            loss = loss_fn(model(x_train[index]), y_train[index])
            loss.backward()
            optimizer.step()
        if stopped:
            break
        average = hvd.allreduce(loss.detach(), name="loss")
        if hvd.rank() == 0:
            print(f"epoch {epoch + 1}/{args.epochs} loss {average.item():.4f}", flush=True)
        stop.wait(args.epoch_seconds - (time.monotonic() - began))  # the epoch's steps are done: a stop saves it
        if hvd.rank() == 0:
            save(epoch + 1, lambda fh: torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()},
                                                  fh), unit="epoch")
        done = epoch + 1
        if done < args.epochs and stop.agreed(any_rank):  # after the last epoch, finishing beats stopping
            stopped = True
            break

    if stopped:
        if hvd.rank() == 0:
            print(f"stopped (SIGTERM) after epoch {done} of {args.epochs}", flush=True)
        return None
    accuracy = 0.0
    if hvd.rank() == 0:
        with torch.no_grad():
            predictions = model(torch.tensor(x_test, dtype=torch.float32)).argmax(dim=1)
        accuracy = (predictions == torch.tensor(y_test)).float().mean().item()
        print(f"test accuracy: {accuracy:.4f}", flush=True)
        output = Path(args.output_path)
        output.parent.mkdir(parents=True, exist_ok=True)
        torch.save(model.state_dict(), output)
        print(f"model saved to {output}", flush=True)
    return accuracy


if __name__ == "__main__":
    sys.exit(0 if main() is not None else STOPPED)
