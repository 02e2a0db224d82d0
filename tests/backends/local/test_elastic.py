"""Elastic PyTorch on the local backend: every replica's torchrun agent, each in its own sandbox (PID 2 of
its own namespace, the pod's name as hostname and as its address's name), meets the others at one c10d
rendezvous, and a training process killed mid-run makes the agents re-form the gang, which goes on from its
newest checkpoint."""
from __future__ import annotations

import dataclasses
import json
import os
import re
import signal

import pytest

from myapp.backends.base import JobState
from myapp.backends.local import LocalBackend
from myapp.rendering import render
from myapp.rendering.catalog import load_template
from tests.backends.local.support import (
    finished,
    host_pid,
    lines_of,
    make_ctx,
    python_script,
    render_template,
    workload,
)
from tests.rendering.test_elastic import elastic_copy
from tests.support import wait_until

pytestmark = pytest.mark.slow  # real jobs: torch in four processes

STEPS = 8
# The template's entry script, replaced (after a line setting STEPS and STEP_SECONDS): a step is an all-reduce over the
# gang; rank 0 saves each step with the job SDK, and every round of the rendezvous starts from the newest one.
TRAIN = """
import os, socket, time
import torch
import torch.distributed as dist
from myapp.checkpoint import load_latest, save

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
found = load_latest()
start = found.step if found else 0
print(f"JOINED rank {rank} of {world} as {socket.getfqdn()} from step {start}", flush=True)
open("pid-" + socket.gethostname(), "w").write(str(os.getpid()))
for step in range(start + 1, STEPS + 1):
    total = torch.ones(1)
    dist.all_reduce(total)
    assert total.item() == world
    if rank == 0:
        save(step, str(step).encode())
    time.sleep(STEP_SECONDS)
dist.barrier()
dist.destroy_process_group()
"""
JOINED = re.compile(r"JOINED rank (\d) of (\d) as (\S+) from step (\d+)")


@pytest.fixture()
def elastic(tmp_path, backends):
    """elastic(step_seconds) -> (backend, manifests, checkpoint folder): the catalog's pytorch-ddp made elastic
    (1 to 2 replicas), a gang of two whose entry script is TRAIN, its task's checkpoint folder mounted."""
    def make(step_seconds: float) -> tuple[LocalBackend, list[dict], str]:
        folder = elastic_copy(tmp_path / "catalog", elastic={"min": 1, "max": 2})
        (folder / "main.py").write_text(f"STEPS, STEP_SECONDS = {STEPS}, {step_seconds}\n{TRAIN}")
        ctx = make_ctx(task="train")
        ctx = dataclasses.replace(ctx, checkpoint_dir=f"{ctx.run_id}/train")
        manifests = render(load_template(folder), {"workers": 1}, ctx)
        return backends(catalog_root=tmp_path / "catalog"), manifests, ctx.checkpoint_dir
    return make


def joined(backend, ref) -> dict[str, list[tuple[int, int, str, int]]]:
    """{replica: (rank, world size, node name, first step) of each rendezvous round it joined, in order}."""
    out: dict[str, list[tuple[int, int, str, int]]] = {}
    for line in backend.logs(ref):
        if m := JOINED.search(line.line):
            out.setdefault(line.replica, []).append((int(m[1]), int(m[2]), m[3], int(m[4])))
    return out


def test_each_replica_is_known_by_its_own_pod_name(backend):
    """The sandbox's /etc/hosts names the replica's own pod first: the canonical name of its address, which
    tools take for the node's identity (socket.getfqdn()), is its pod's, and every pod of the job resolves."""
    manifests = render_template("pytorch-ddp", {"workers": 1})
    pods = [f"{workload(manifests)['metadata']['name']}-{replica}-0" for replica in ("master", "worker")]
    python_script(manifests, f"""import glob, json, os, socket, time
print("NAMES " + json.dumps([socket.gethostname(), socket.getfqdn(), [socket.gethostbyname(p) for p in {pods!r}]]))
open("printed-" + socket.gethostname(), "w").close()
deadline = time.time() + 30  # the Master's success stops the Worker: it waits until both printed
while len(glob.glob("printed-*")) < 2 and time.time() < deadline:
    time.sleep(0.02)
""")
    ref = backend.submit(manifests)
    assert finished(backend, ref).state is JobState.SUCCEEDED
    names = {line.replica: json.loads(line.line[6:]) for line in backend.logs(ref) if line.line.startswith("NAMES ")}
    assert names == {"master-0": [pods[0], pods[0], ["127.0.0.1"] * 2],
                     "worker-0": [pods[1], pods[1], ["127.0.0.1"] * 2]}


def test_both_replicas_meet_at_one_rendezvous(elastic):
    backend, manifests, _ = elastic(step_seconds=0)
    ref = backend.submit(manifests)
    status = finished(backend, ref)
    assert status.state is JobState.SUCCEEDED, (status.reason, lines_of(backend, ref)[-20:])
    rounds = joined(backend, ref)
    # One world of two, each agent known by its own pod's name (not both as localhost with PID 2: one node).
    assert sorted(rounds) == ["master-0", "worker-0"] and all(len(r) == 1 for r in rounds.values()), rounds
    assert sorted(rank for ((rank, _, _, _),) in rounds.values()) == [0, 1], rounds
    assert {replica: r[0][1:] for replica, r in rounds.items()} == {
        replica: (2, f"{ref.primary.name}-{replica}", 0) for replica in ("master-0", "worker-0")}


def test_a_killed_training_process_reforms_the_gang_from_its_checkpoint(elastic):
    backend, manifests, checkpoints = elastic(step_seconds=0.5)
    ref = backend.submit(manifests)
    pid_file = backend.job_dir(ref) / f"pid-{ref.primary.name}-worker-0"
    wait_until(lambda: pid_file.exists() and pid_file.read_text(), what="the worker's training process", timeout=30)
    saved = lambda: (backend.last_checkpoint(ref.namespace, checkpoints) or {}).get("step", 0)  # noqa: E731
    wait_until(lambda: saved() >= 2, what="the step-2 checkpoint", timeout=30)
    killed_after = saved()
    os.kill(host_pid(backend, ref, "worker-0", int(pid_file.read_text())), signal.SIGKILL)

    status = finished(backend, ref)
    assert status.state is JobState.SUCCEEDED, (status.reason, lines_of(backend, ref)[-20:])
    # The agents re-formed the gang in place: no pod restarted, no loss for the platform to answer.
    assert status.cause is None and status.replicas["Worker"]["restarts"] == 0
    rounds = joined(backend, ref)
    assert sorted(rounds) == ["master-0", "worker-0"] and all(len(r) == 2 for r in rounds.values()), rounds
    for index in (0, 1):  # both replicas in each round: ranks 0 and 1 of a world of two
        assert sorted((r[index][0], r[index][1]) for r in rounds.values()) == [(0, 2), (1, 2)], rounds
    # the first round from the start, the second from the newest checkpoint when the process was killed (or one
    # saved before the others saw it go)
    resumed = {r[1][3] for r in rounds.values()}
    assert {r[0][3] for r in rounds.values()} == {0} and len(resumed) == 1, rounds
    assert killed_after <= resumed.pop() <= killed_after + 1, (killed_after, rounds)
