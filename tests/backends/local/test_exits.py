"""What a replica's end means for an elastic PyTorchJob on the local backend (myapp/backends/local/exits.py):
a Worker killed for good leaves the rest of the gang running while at least minReplicas remain (its agents
re-form it: tests/backends/local/test_elastic.py runs that with torchrun), the job then ends as its Master
does; one more loss below the minimum, or the Master's (it hosts the rendezvous), stops the gang as
replica-lost. Each replica here is a plain process that waits, killed as in test_gang_restart.py."""
from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from myapp.backends import REPLICA_LOST, JobState
from myapp.rendering import render
from myapp.rendering.catalog import load_template
from tests.backends.local.support import finished, host_pid, make_ctx, pid_alive, python_script
from tests.rendering.test_elastic import elastic_copy
from tests.support import wait_until

# Each replica writes its pid where the test finds it, then waits; the Master ends when told to.
WAIT = """import os, socket, time
open("pid-" + socket.gethostname(), "w").write(str(os.getpid()))
while not os.path.exists("finish"):
    time.sleep(0.02)
"""


@pytest.fixture()
def gang(tmp_path, backends):
    """gang() -> (backend, ref, {replica: host pid}): an elastic PyTorchJob of 3 replicas (at least 2, at most
    3) whose replicas run WAIT, all started."""
    def start():
        template = load_template(elastic_copy(tmp_path / "catalog", elastic={"min": 2, "max": 3}))
        manifests = render(template, {"workers": 2}, make_ctx(task="train"))
        python_script(manifests, WAIT)
        backend = backends(catalog_root=tmp_path / "catalog")
        ref = backend.submit(manifests)
        pids = {}
        for replica in ("master-0", "worker-0", "worker-1"):
            path: Path = backend.job_dir(ref) / f"pid-{ref.primary.name}-{replica}"
            wait_until(lambda path=path: path.exists() and path.read_text(), what=f"{replica}'s process")
            pids[replica] = host_pid(backend, ref, replica, int(path.read_text()))
        return backend, ref, pids
    return start


def test_the_gang_goes_on_without_a_worker_while_enough_remain_and_ends_as_its_master(gang):
    backend, ref, pids = gang()
    os.kill(pids["worker-0"], signal.SIGKILL)
    wait_until(lambda: "going on" in backend.status(ref).reason, what="the job saying it goes on", timeout=10)
    status = backend.status(ref)
    assert status.state is JobState.RUNNING, status
    assert status.reason == "worker-0 was killed (signal 9); going on with 2 of 3 replicas (elastic, at least 2)"
    assert status.replicas["Worker"] == {"active": 1, "succeeded": 0, "failed": 1, "restarts": 0}
    assert pid_alive(pids["master-0"]) and pid_alive(pids["worker-1"])

    (backend.job_dir(ref) / "finish").touch()  # the Master's training ends: so does the job
    status = finished(backend, ref)
    assert status.state is JobState.SUCCEEDED and status.cause is None and status.exit_code == 0, status


def test_below_the_minimum_the_gang_stops_as_lost(gang):
    backend, ref, pids = gang()
    os.kill(pids["worker-1"], signal.SIGKILL)
    wait_until(lambda: "going on" in backend.status(ref).reason, what="the job going on", timeout=10)
    os.kill(pids["worker-0"], signal.SIGKILL)
    status = finished(backend, ref)
    assert status.state is JobState.FAILED and status.cause == REPLICA_LOST
    assert status.reason == ("worker-0 was killed (signal 9); 1 of 3 replicas left, fewer than the elastic "
                             "job's minimum of 2")
    assert not pid_alive(pids["master-0"])  # stopped, not left waiting for a gang it cannot have


def test_the_masters_loss_stops_the_gang_whatever_remains(gang):
    backend, ref, pids = gang()
    os.kill(pids["master-0"], signal.SIGKILL)
    status = finished(backend, ref)
    assert status.state is JobState.FAILED and status.cause == REPLICA_LOST
    assert status.reason == "master-0 was killed (signal 9)"
    assert not pid_alive(pids["worker-0"]) and not pid_alive(pids["worker-1"])
