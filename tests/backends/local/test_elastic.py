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
from myapp.rendering.pod import pod_templates
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
    """elastic(step_seconds, rdzv_conf="") -> (backend, manifests, checkpoint folder): the catalog's pytorch-ddp
    made elastic (1 to 2 replicas), a gang of two whose entry script is TRAIN, its task's checkpoint folder
    mounted; ``rdzv_conf`` is added to every agent's rendezvous settings."""
    def make(step_seconds: float, rdzv_conf: str = "") -> tuple[LocalBackend, list[dict], str]:
        folder = elastic_copy(tmp_path / "catalog", elastic={"min": 1, "max": 2})
        (folder / "main.py").write_text(f"STEPS, STEP_SECONDS = {STEPS}, {step_seconds}\n{TRAIN}")
        ctx = make_ctx(task="train")
        ctx = dataclasses.replace(ctx, checkpoint_dir=f"{ctx.run_id}/train")
        manifests = render(load_template(folder), {"workers": 1}, ctx)
        if rdzv_conf:
            for pod in pod_templates(workload(manifests)):
                command = pod.template["spec"]["containers"][0]["command"]
                command[:] = [f"{a},{rdzv_conf}" if a.startswith("--rdzv-conf=") else a for a in command]
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


# A lost agent is taken for dead after keep_alive_interval x 3 s of silence (torchrun: 5 x 3), and a round with
# fewer than the most replicas waits last_call_timeout s (30) for more: shortened so the test takes seconds.
QUICK_RENDEZVOUS = "keep_alive_interval=1,last_call_timeout=5"


def test_the_gang_reforms_after_a_killed_process_and_goes_on_without_a_replica_killed_whole(elastic):
    """A training process killed: both agents re-form the gang of two in place from the newest checkpoint. Then
    the Worker replica killed whole (its agent and all it started: the pod), for good: the Master's agent
    re-forms the gang alone (elastic, at least one replica) from the newest checkpoint, and the attempt
    succeeds; no pod restarted, the lost one stays failed, and there is no loss for the platform to answer."""
    backend, manifests, checkpoints = elastic(step_seconds=0.5, rdzv_conf=QUICK_RENDEZVOUS)
    ref = backend.submit(manifests)
    pid_file = backend.job_dir(ref) / f"pid-{ref.primary.name}-worker-0"
    wait_until(lambda: pid_file.exists() and pid_file.read_text(), what="the worker's training process", timeout=60)
    saved = lambda: (backend.last_checkpoint(ref.namespace, checkpoints) or {}).get("step", 0)  # noqa: E731
    wait_until(lambda: saved() >= 2, what="the step-2 checkpoint", timeout=30)
    killed_after = saved()
    os.kill(host_pid(backend, ref, "worker-0", int(pid_file.read_text())), signal.SIGKILL)
    wait_until(lambda: len(joined(backend, ref).get("worker-0", [])) == 2, what="the second round", timeout=60)
    wait_until(lambda: saved() >= killed_after + 2, what="two steps of the second round", timeout=30)
    lost_after = saved()
    state = json.loads((backend.job_dir(ref) / ".myapp" / "state.json").read_text())
    os.kill(state["replicas"]["worker-0"]["pid"], signal.SIGKILL)  # the replica's own process: its sandbox

    status = finished(backend, ref, timeout=90)
    assert status.state is JobState.SUCCEEDED, (status.reason, lines_of(backend, ref)[-20:])
    assert status.cause is None and status.exit_code == 0
    assert status.replicas["Worker"] == {"active": 0, "succeeded": 0, "failed": 1, "restarts": 0}, status.replicas
    rounds = joined(backend, ref)
    assert sorted(rounds) == ["master-0", "worker-0"] and len(rounds["worker-0"]) == 2, rounds
    (first, second, *alone) = rounds["master-0"]
    for index, r in enumerate((first, second)):  # both replicas in each: ranks 0 and 1 of a world of two
        assert sorted([r[:2], rounds["worker-0"][index][:2]]) == [(0, 2), (1, 2)], rounds
    # the first round from the start, the second from the newest checkpoint when the process was killed (or one
    # saved before the others saw it go), the last one from the newest when the replica was
    assert first[3] == rounds["worker-0"][0][3] == 0 and second[3] == rounds["worker-0"][1][3], rounds
    assert killed_after <= second[3] <= killed_after + 1, (killed_after, rounds)
    assert alone and alone[-1][:2] == (0, 1) and lost_after <= alone[-1][3] <= lost_after + 1, (lost_after, rounds)
    assert saved() == STEPS
