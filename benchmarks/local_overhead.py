"""Overhead of the local backend: the pytorch-ddp example (Master + 1 Worker, gloo on CPU) run
by LocalBackend vs the same entry code started by hand.

    .venv/bin/python benchmarks/local_overhead.py                 # 3 rounds, ~1 minute on 2 cores
    .venv/bin/python benchmarks/local_overhead.py --repeats 5 --epochs 20
    .venv/bin/python benchmarks/local_overhead.py --quick         # 1 round of 1 epoch, ~40 s

Each round runs, in rotating order:
  local     render pytorch-ddp (workers=1) -> LocalBackend.submit -> poll status until finished
  torchrun  torchrun --nproc_per_node 2 job-templates/pytorch-ddp/main.py <same args>
  by-hand   two `python main.py` processes with MASTER_ADDR/PORT, WORLD_SIZE, RANK set by hand
Wall time is from "start" to "both processes done" (for local: submit -> terminal status, as the
platform sees it). Prints every run, the medians, and local / torchrun (target <= 1.10).
Exit status 1 means the benchmark broke (a run failed or printed no accuracy); a missed target is
only reported.
"""
from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from myapp.backends.base import JobState  # noqa: E402
from myapp.backends.local import LocalBackend  # noqa: E402
from myapp.rendering import RenderContext, render  # noqa: E402
from myapp.rendering.catalog import catalog_root, get_template  # noqa: E402

ENTRY = catalog_root() / "pytorch-ddp" / "main.py"
TARGET = 1.10
QUICK = {"repeats": 1, "epochs": 1}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def job_args(epochs: int, output: Path) -> list[str]:
    return ["--epochs", str(epochs), "--output-path", str(output)]


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    env.update(OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")  # what the template's env gives the replicas
    return env


def run_local(backend: LocalBackend, epochs: int, output: Path, run_id: int) -> float:
    ctx = RenderContext(project="bench", namespace="bench", pipeline="overhead", run_id=run_id, task="ddp",
                        service_account="bench-runner")
    manifests = render(get_template("pytorch-ddp"), {"workers": 1, "epochs": epochs, "output_path": str(output)}, ctx)
    start = time.perf_counter()
    ref = backend.submit(manifests)
    status = backend.wait(ref, timeout=600)
    elapsed = time.perf_counter() - start
    if status.state is not JobState.SUCCEEDED:
        raise SystemExit(f"local run failed: {status.reason}")
    if not any(line.line.startswith("test accuracy") for line in backend.logs(ref)):
        raise SystemExit("local run printed no accuracy")
    return elapsed


def run_torchrun(epochs: int, output: Path) -> float:
    torchrun = Path(sys.executable).parent / "torchrun"
    command = [str(torchrun), "--nproc_per_node", "2", "--master_addr", "127.0.0.1", "--master_port",
               str(free_port()), str(ENTRY), *job_args(epochs, output)]
    start = time.perf_counter()
    done = subprocess.run(command, env=child_env(), capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0 or "test accuracy" not in done.stdout:
        raise SystemExit(f"torchrun failed: {done.stderr[-2000:]}")
    return elapsed


def run_by_hand(epochs: int, output: Path) -> float:
    port = str(free_port())
    start = time.perf_counter()
    procs = []
    for rank in range(2):
        env = child_env() | {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port, "WORLD_SIZE": "2", "RANK": str(rank)}
        procs.append(subprocess.Popen([sys.executable, str(ENTRY), *job_args(epochs, output)], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    outputs = [p.communicate()[0] for p in procs]
    elapsed = time.perf_counter() - start
    if any(p.returncode for p in procs) or "test accuracy" not in outputs[0]:
        raise SystemExit(f"by-hand run failed: {outputs}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="{repeats} round of {epochs} epochs".format(**QUICK))
    args = parser.parse_args()
    if args.quick:
        vars(args).update(QUICK)
    times: dict[str, list[float]] = {"local": [], "torchrun": [], "by-hand": []}
    with tempfile.TemporaryDirectory(prefix="bench-local-") as tmp:
        backend = LocalBackend(Path(tmp) / "work", gpus=[])
        order = list(times)
        print(f"pytorch-ddp, 2 processes, {args.epochs} epochs, {os.cpu_count()} CPUs")
        for round_ in range(args.repeats):
            for name in order[round_ % 3:] + order[:round_ % 3]:  # rotate: no method always goes first
                output = Path(tmp) / f"{name}-{round_}" / "model.pt"
                if name == "local":  # a sandboxed job writes only its attempt and its project's data folder
                    output = backend.data_dir("bench") / f"{name}-{round_}" / "model.pt"
                    elapsed = run_local(backend, args.epochs, output, run_id=round_ + 1)
                elif name == "torchrun":
                    elapsed = run_torchrun(args.epochs, output)
                else:
                    elapsed = run_by_hand(args.epochs, output)
                if not output.is_file():
                    raise SystemExit(f"{name} run saved no model at {output}")
                times[name].append(elapsed)
                print(f"  round {round_ + 1} {name:9s} {elapsed:6.2f} s", flush=True)
    medians = {name: statistics.median(values) for name, values in times.items()}
    print("\nmedian wall time")
    for name, value in medians.items():
        print(f"  {name:9s} {value:6.2f} s   (min {min(times[name]):.2f}, max {max(times[name]):.2f})")
    ratio = medians["local"] / medians["torchrun"]
    print(f"\nlocal / by-hand  = {medians['local'] / medians['by-hand']:.3f}")
    print(f"target local / torchrun <= {TARGET:.2f}: {'MET' if ratio <= TARGET else 'MISSED'} ({ratio:.3f})")


if __name__ == "__main__":
    main()
