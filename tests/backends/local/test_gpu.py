"""GPU allocation of the local backend, on a fake device list (the NVML reader is injectable)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from myapp.backends.base import JobState
from myapp.backends.local import GpuDevice, GpuPool, nvml_devices
from myapp.backends.local.procs import ProcessId
from tests.backends.local.support import PRINT_ENV, env_of, finished, print_env_and_wait, python_script, render_template
from tests.support import wait_until

FOUR = [GpuDevice(i, f"GPU-{i:04d}", "Fake A100", 80 * 2**30) for i in range(4)]


def me() -> ProcessId:
    return ProcessId.of(__import__("os").getpid())


def test_pool_allocates_all_or_nothing_and_releases(tmp_path):
    pool = GpuPool(tmp_path / "gpus.json", FOUR)
    assert pool.allocate("a", 3, me()) == [0, 1, 2]
    assert pool.allocate("a", 3, me()) == [0, 1, 2]  # same owner: same devices
    assert pool.allocate("b", 2, me()) is None  # only 1 free: nothing taken
    assert pool.free() == [3]
    assert pool.allocate("c", 1, me()) == [3]
    pool.release("a")
    assert pool.allocate("b", 2, me()) == [0, 1]
    assert pool.allocations() == {"b": [0, 1], "c": [3]}
    assert pool.allocate("d", 0, me()) == []


def test_pool_frees_devices_of_dead_holders(tmp_path):
    pool = GpuPool(tmp_path / "gpus.json", FOUR)
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert pool.allocate("gone", 4, ProcessId.of(holder.pid)) == [0, 1, 2, 3]
        assert pool.free() == []
    finally:
        holder.kill()
        holder.wait()
    assert pool.free() == [0, 1, 2, 3]
    # A reused pid (different create time) does not hold anything either.
    assert pool.allocate("x", 1, ProcessId(me().pid, 1.0)) == [0]
    assert pool.free() == [0, 1, 2, 3]


def test_nvml_absent_means_no_devices(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml -> ImportError
    assert nvml_devices() == []


@pytest.mark.slow
def test_replicas_see_their_own_gpus(backends):
    calls = []
    backend = backends(gpus=lambda: calls.append(1) or FOUR)
    manifests = render_template("pytorch-ddp", {"workers": 1}, resources={"gpu": 2})
    python_script(manifests, print_env_and_wait(2))
    ref = backend.submit(manifests)
    assert finished(backend, ref).state is JobState.SUCCEEDED
    envs = env_of(backend, ref)
    assert envs["master-0"]["CUDA_VISIBLE_DEVICES"] == "0,1" and envs["worker-0"]["CUDA_VISIBLE_DEVICES"] == "2,3"
    assert envs["master-0"]["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID" and envs["master-0"]["MYAPP_GPU"] == "2"
    assert calls  # the injected reader was asked
    assert backend.gpu_pool().free() == [0, 1, 2, 3]  # released when the job ended


@pytest.mark.slow
def test_jobs_wait_for_busy_gpus_and_get_them_when_freed(backends):
    backend = backends(gpus=FOUR[:2])
    holder = render_template("python", {"script": "import os, time\nwhile not os.path.exists('release'): "
                                                  "time.sleep(0.02)"}, resources={"gpu": 2})
    first = backend.submit(holder)
    wait_until(lambda: backend.status(first).state is JobState.RUNNING, what="the first job")
    assert backend.gpu_pool().allocations() == {f"{first.namespace}/{first.job_name}": [0, 1]}

    waiting = render_template("python", {"script": PRINT_ENV}, resources={"gpu": 1})
    second = backend.submit(waiting)
    status = wait_until(lambda: (s := backend.status(second)).state is JobState.WAITING and s, what="waiting")
    assert status.reason == "waiting for 1 GPU(s): 0 of 2 free"

    (backend.job_dir(first) / "release").touch()  # the job sees its own folder only
    assert finished(backend, first).state is JobState.SUCCEEDED
    assert finished(backend, second).state is JobState.SUCCEEDED
    assert env_of(backend, second)["job-0"]["CUDA_VISIBLE_DEVICES"] == "0"


@pytest.mark.slow
def test_more_gpus_than_the_host_has_is_unschedulable(backends):
    backend = backends(gpus=FOUR[:1])
    status = finished(backend, backend.submit(render_template("python", resources={"gpu": 2})))
    assert status.state is JobState.FAILED
    assert status.reason == "Unschedulable: the job needs 2 GPU(s), this host has 1"


@pytest.mark.slow
@pytest.mark.parametrize("devices", [[], FOUR])
def test_jobs_without_gpus_get_none(backends, devices):
    backend = backends(gpus=devices)
    manifests = render_template("python", {"script": PRINT_ENV})
    ref = backend.submit(manifests)
    assert finished(backend, ref).state is JobState.SUCCEEDED
    assert env_of(backend, ref)["job-0"]["CUDA_VISIBLE_DEVICES"] == ""


@pytest.mark.slow
def test_gpu_job_on_a_host_without_gpus_runs_on_cpu(backends):
    backend = backends(gpus=[])
    ref = backend.submit(render_template("python", {"script": PRINT_ENV + "\nimport time; time.sleep(0.5)"},
                                         resources={"gpu": 1}))
    status = wait_until(lambda: (s := backend.status(ref)).state is JobState.RUNNING and s, what="running")
    assert status.reason == "asked for 1 GPU(s); this host has none: running on CPU"
    assert finished(backend, ref).state is JobState.SUCCEEDED
    assert env_of(backend, ref)["job-0"]["CUDA_VISIBLE_DEVICES"] == ""
