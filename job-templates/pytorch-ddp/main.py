"""Train a small MLP on scikit-learn's digits dataset with torch DistributedDataParallel.

The training-operator sets MASTER_ADDR, MASTER_PORT, WORLD_SIZE and RANK in every replica;
without them (a local run) this falls back to a single process. The gloo backend works on
CPU-only nodes. Rank 0 reports the training loss and the test accuracy after every epoch (metrics.jsonl,
step = epoch: the platform charts them and records their last values on the registered model version),
prints the final test accuracy and saves a checkpoint: the model's
state_dict plus what a server needs to rebuild and feed it (layer sizes, input scaling), which
is what the deploy-service template loads.

Checkpoints (docs/checkpoints.md): after every epoch rank 0 saves the model and optimizer state to
MYAPP_CHECKPOINT_DIR with myapp.checkpoint (atomically); an attempt that finds a complete checkpoint there
(the task's earlier attempt was preempted or failed) resumes after its epoch. A stop (SIGTERM, then SIGKILL
after the grace period) ends the step every rank is in: an epoch whose steps are all done is reported and
saved at once, one cut short is dropped, and the ranks exit with 143 (myapp.checkpoint.STOPPED). A stopped
attempt loses at most the part of the epoch it was in. --epoch-seconds slows each epoch down to at least
that long (tests stop it mid-training).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import torch
import torch.distributed as dist
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

from myapp.checkpoint import STOPPED, Stop, load_latest, save  # the job SDK, in the image beside this file (docs/checkpoints.md)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--output-path", default="/mnt/output/model.pt")
    parser.add_argument("--epoch-seconds", type=float, default=0.0,
                        help="make each epoch last at least this long (0: as fast as it trains)")
    return parser.parse_args(argv)


def init_distributed() -> tuple[int, int]:
    if "WORLD_SIZE" not in os.environ:  # local run: a world of one
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29500", WORLD_SIZE="1", RANK="0")
    dist.init_process_group(backend="gloo", init_method="env://")
    return dist.get_rank(), dist.get_world_size()


PIXEL_SCALE = 1.0 / 16.0  # digits pixel intensities are 0..16


def load_data(seed: int) -> tuple[TensorDataset, TensorDataset]:
    features, labels = load_digits(return_X_y=True)
    features = features * PIXEL_SCALE
    x_train, x_test, y_train, y_test = train_test_split(
        features, labels, test_size=0.2, random_state=seed, stratify=labels)

    def tensors(x, y):
        return TensorDataset(torch.tensor(x, dtype=torch.float32), torch.tensor(y, dtype=torch.long))

    return tensors(x_train, y_train), tensors(x_test, y_test)


def report(step: int, name: str, value: float) -> None:
    """One metric for the platform (metrics.jsonl in $MYAPP_OUTPUT_DIR, charted in the run view)."""
    folder = os.environ.get("MYAPP_OUTPUT_DIR")
    if folder:
        with open(os.path.join(folder, "metrics.jsonl"), "a") as fh:
            fh.write(json.dumps({"step": step, "name": name, "value": value}) + "\n")


def accuracy_on(model: nn.Module, data: TensorDataset) -> float:
    """The share of `data` the model classifies right (in eval mode, without gradients)."""
    model.eval()
    with torch.no_grad():
        x, y = data.tensors
        return (model(x).argmax(dim=1) == y).float().mean().item()


def resume(model: nn.Module, optimizer: torch.optim.Optimizer) -> int:
    """Load the newest complete checkpoint, if any, into the model and optimizer: the epochs it covers."""
    found = load_latest()
    if found is None:
        return 0
    state = torch.load(found.path, map_location="cpu", weights_only=True)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    return found.step


def any_rank(flag: int) -> int:
    """Every rank's stop flag, all-reduced (MAX): the ranks stop together, since each step's gradients need
    every rank (``Stop.agreed``)."""
    tensor = torch.tensor([flag])
    dist.all_reduce(tensor, op=dist.ReduceOp.MAX)
    return int(tensor.item())


def main(argv: list[str] | None = None) -> float | None:
    """Train; the test accuracy, or None when stopped (SIGTERM) before the last epoch."""
    args = parse_args(argv)
    stop = Stop()  # before anything slow: a SIGTERM from here on ends a step, not the process
    rank, world = init_distributed()
    torch.manual_seed(args.seed)  # same initial weights everywhere (DDP also broadcasts them)
    train, test = load_data(args.seed)
    sampler = DistributedSampler(train, num_replicas=world, rank=rank, shuffle=True, seed=args.seed)
    loader = DataLoader(train, batch_size=args.batch_size, sampler=sampler)
    model = DistributedDataParallel(nn.Sequential(
        nn.Linear(64, args.hidden), nn.ReLU(), nn.Linear(args.hidden, 10)))
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    start = resume(model.module, optimizer)
    if rank == 0 and start:
        print(f"resuming from epoch {start} (its checkpoint)", flush=True)

    stopped, done = False, start  # done: the epochs trained and saved
    for epoch in range(start, args.epochs):
        began = time.monotonic()
        sampler.set_epoch(epoch)  # a different shuffle per epoch, consistent across ranks
        model.train()
        total = torch.zeros(2)
        for x, y in loader:
            if stop.agreed(any_rank):  # stopped mid-epoch: its steps so far are dropped, the last checkpoint stands
                stopped = True
                break
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()  # DDP all-reduces the gradients here
            optimizer.step()
            total += torch.tensor([loss.item() * len(y), len(y)])
        if stopped:
            break
        dist.all_reduce(total)
        if rank == 0:
            accuracy = accuracy_on(model.module, test)  # the same weights on every rank after DDP's step
            print(f"epoch {epoch + 1}/{args.epochs} loss {total[0] / total[1]:.4f}", flush=True)
            report(epoch + 1, "loss", float(total[0] / total[1]))
            report(epoch + 1, "accuracy", accuracy)
        stop.wait(args.epoch_seconds - (time.monotonic() - began))  # the epoch's steps are done: a stop saves it
        if rank == 0:
            save(epoch + 1, lambda fh: torch.save({"model": model.module.state_dict(),
                                                   "optimizer": optimizer.state_dict()}, fh), unit="epoch")
        done = epoch + 1
        if done < args.epochs and stop.agreed(any_rank):  # after the last epoch, finishing beats stopping
            stopped = True
            break

    if stopped:
        if rank == 0:
            print(f"stopped (SIGTERM) after epoch {done} of {args.epochs}", flush=True)
        dist.barrier()
        dist.destroy_process_group()
        return None
    accuracy = accuracy_on(model.module, test)
    if rank == 0:
        print(f"test accuracy: {accuracy:.4f}", flush=True)
        output = Path(args.output_path)
        output.parent.mkdir(parents=True, exist_ok=True)
        torch.save({"format": "myapp-mlp/v1", "state_dict": model.module.state_dict(),
                    "in_features": 64, "hidden": args.hidden, "classes": 10, "input_scale": PIXEL_SCALE,
                    "test_accuracy": accuracy}, output)
        print(f"model saved to {output}", flush=True)
    # Leave together: a replica tearing gloo down while rank 0 (the store's host) still saves
    # can abort with "terminate called without an active exception" on a loaded machine.
    dist.barrier()
    dist.destroy_process_group()
    return accuracy


if __name__ == "__main__":
    code = 0 if main() is not None else STOPPED
    # Skip interpreter finalization: gloo's worker threads can still hold tensors then, and tearing
    # them down without the interpreter aborts the replica (exit 134, "terminate called without an
    # active exception"; pytorch/pytorch#179291). Everything is saved and flushed by now.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
