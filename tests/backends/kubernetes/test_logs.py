"""Logs through the double: several pods merged with replica tags, resume with ``after``,
follow across dropped streams without duplicates or loss, late pods, shutdown."""
from __future__ import annotations

import inspect
import time
from collections import defaultdict

import pytest

from myapp.backends.base import BackendError, JobRef, ObjectRef
from myapp.backends.kubernetes import KubernetesBackend
from myapp.backends.kubernetes.logs import Follower, PodLogSource, parse_line, snapshot
from myapp.backends.kubernetes.retry import KubeApiError
from tests.k8s_double import format_timestamp
from tests.k8s_double.support import NS, make_backend, manifests
from tests.support import in_thread, wait_until

PYTORCH = ("kubeflow.org/v1", "PyTorchJob")


def add_pod(double, ref, replica, **kwargs):
    rtype, index = replica.split("-")
    labels = {"myapp.io/job-name": ref.job_name, "training.kubeflow.org/replica-type": rtype,
              "training.kubeflow.org/replica-index": index}
    name = f"{ref.job_name}-{replica}"
    double.add_pod(ref.namespace, name, labels, containers=kwargs.pop("containers", ("pytorch",)),
                   owner=(*PYTORCH, ref.primary.name), **kwargs)
    return name


def set_job(double, ref, condition):
    double.set_status(*PYTORCH, ref.namespace, ref.primary.name,
                      {"conditions": [{"type": condition, "status": "True"}]})


def by_replica(lines):
    out = defaultdict(list)
    for line in lines:
        out[line.replica].append((line.seq, line.line))
    return dict(out)


@pytest.fixture
def job(double, k8s_backend):
    return k8s_backend.submit(manifests("pytorch-ddp", workers=2))


def test_parse_line_reads_rfc3339nano():
    ns = 1_700_000_000_123_400_000
    assert parse_line(f"{format_timestamp(ns)} hello  world") == (ns, "hello  world")
    assert parse_line("2023-11-14T22:13:20Z x") == (1_700_000_000_000_000_000, "x")
    assert parse_line("2023-11-14T23:13:20.5+01:00 y") == (1_700_000_000_500_000_000, "y")
    assert parse_line("no timestamp") == (None, "no timestamp")


def test_logs_of_three_pods_are_merged_with_replica_tags(double, k8s_backend, job):
    t0 = time.time() - 100
    pods = {r: add_pod(double, job, r) for r in ("master-0", "worker-0", "worker-1")}
    double.append_log(NS, pods["master-0"], "m1", timestamp=t0 + 1)
    double.append_log(NS, pods["worker-0"], "w0-1", timestamp=t0 + 2)
    double.append_log(NS, pods["worker-1"], "w1-1", timestamp=t0 + 3)
    double.append_log(NS, pods["master-0"], "m2", timestamp=t0 + 4)
    double.append_log(NS, pods["worker-0"], "w0-2", "w0-3", timestamp=t0 + 5)
    lines = list(k8s_backend.logs(job))
    assert [(ln.replica, ln.seq, ln.line) for ln in lines] == [
        ("master-0", 1, "m1"), ("worker-0", 1, "w0-1"), ("worker-1", 1, "w1-1"), ("master-0", 2, "m2"),
        ("worker-0", 2, "w0-2"), ("worker-0", 3, "w0-3")]
    assert lines[0].timestamp == pytest.approx(t0 + 1, abs=1e-3)
    resumed = list(k8s_backend.logs(job, after={"master-0": 2, "worker-0": 1}))
    assert [(ln.replica, ln.seq) for ln in resumed] == [("worker-1", 1), ("worker-0", 2), ("worker-0", 3)]


def test_pods_of_other_attempts_and_sidecars_are_left_out(double, k8s_backend, job):
    mine = add_pod(double, job, "master-0", containers=("pytorch", "istio-proxy"))
    double.add_pod(NS, "other-master-0", {"myapp.io/job-name": "other"})
    double.append_log(NS, mine, "mine")
    double.append_log(NS, mine, "envoy noise", container="istio-proxy")
    double.append_log(NS, "other-master-0", "not mine")
    assert [(ln.replica, ln.line) for ln in k8s_backend.logs(job)] == [("master-0", "mine")]


def test_a_pod_that_has_not_started_has_no_log_yet(double, k8s_backend, job):
    add_pod(double, job, "master-0", phase="Pending")
    assert list(k8s_backend.logs(job)) == []


def test_read_errors_surface_after_retries(double, k8s_backend, job):
    add_pod(double, job, "master-0")
    double.inject_fault("GET", r"/log$", status=500, times=10)
    with pytest.raises(BackendError, match=r"open log of pod train-42-1-master-0: 500"):
        list(k8s_backend.logs(job))


def follow(backend, ref, **kwargs):
    """Start following in a thread; returns (thread, lines seen so far, result holder)."""
    seen = []

    def consume():
        for line in backend.logs(ref, follow=True, **kwargs):
            seen.append(line)
        return "done"
    thread, result = in_thread(consume)
    return thread, seen, result


def test_follow_survives_a_dropped_stream_and_picks_up_a_late_pod(double, k8s_backend, job):
    set_job(double, job, "Running")
    master = add_pod(double, job, "master-0")
    worker = add_pod(double, job, "worker-0")
    double.append_log(NS, master, "m1", "m2")
    double.append_log(NS, worker, "w1")
    thread, seen, result = follow(k8s_backend, job)
    wait_until(lambda: len(seen) == 3, what="first lines")
    stamp = time.time()
    double.append_log(NS, master, "m3", timestamp=stamp)
    wait_until(lambda: len(seen) == 4, what="m3")
    assert double.drop_log_streams(NS, master) == 1  # broken connection mid-follow
    double.append_log(NS, master, "m4", "m5", timestamp=stamp)  # same timestamp as the last line seen
    late = add_pod(double, job, "worker-1")  # appears while following
    double.append_log(NS, late, "late-1")
    wait_until(lambda: len(seen) == 7, what="lines after the drop")
    for name in (master, worker, late):
        double.terminate_pod(NS, name)
    set_job(double, job, "Succeeded")
    thread.join(10)
    assert result == ["done"]
    assert by_replica(seen) == {
        "master-0": [(1, "m1"), (2, "m2"), (3, "m3"), (4, "m4"), (5, "m5")],
        "worker-0": [(1, "w1")],
        "worker-1": [(1, "late-1")],
    }
    reconnects = [r for r in double.requests_matching("GET", master + "/log$") if "sinceSeconds" in r.query]
    assert reconnects and all(r.query["timestamps"] == "true" for r in reconnects)
    assert double.open_streams("log") == 0


def test_follow_cut_by_a_fault_mid_burst_of_equal_timestamps(double, k8s_backend, job):
    set_job(double, job, "Running")
    master = add_pod(double, job, "master-0")
    double.append_log(NS, master, *[f"line {i}" for i in range(1, 7)], timestamp=time.time())
    fault = double.inject_fault("GET", master + "/log$", drop_after=2, times=2)  # cut twice
    thread, seen, result = follow(k8s_backend, job)
    wait_until(lambda: len(seen) == 6, what="all six lines")
    double.append_log(NS, master, "line 7")
    wait_until(lambda: len(seen) == 7, what="line 7")
    double.terminate_pod(NS, master)
    set_job(double, job, "Failed")
    thread.join(10)
    assert result == ["done"] and fault.hits == 2
    assert [(ln.seq, ln.line) for ln in seen] == [(i, f"line {i}") for i in range(1, 8)]


def test_follow_waits_for_a_container_to_start(double, k8s_backend, job):
    set_job(double, job, "Running")
    master = add_pod(double, job, "master-0", phase="Pending")
    thread, seen, result = follow(k8s_backend, job)
    wait_until(lambda: any(r.path.endswith("/log") for r in double.requests), what="a first log request")
    double.set_pod_status(NS, master, {"phase": "Running", "containerStatuses": [
        {"name": "pytorch", "state": {"running": {}}}]})
    double.append_log(NS, master, "started")
    wait_until(lambda: len(seen) == 1, what="the first line")
    double.terminate_pod(NS, master)
    set_job(double, job, "Succeeded")
    thread.join(10)
    assert result == ["done"] and [ln.line for ln in seen] == ["started"]


def test_follow_of_a_finished_job_reads_the_rest_and_ends(double, k8s_backend, job):
    master = add_pod(double, job, "master-0", phase="Succeeded")
    double.append_log(NS, master, "a", "b", "c")
    set_job(double, job, "Succeeded")
    lines = list(k8s_backend.logs(job, follow=True, after={"master-0": 1}))
    assert [(ln.seq, ln.line) for ln in lines] == [(2, "b"), (3, "c")]


def test_follow_ends_after_the_drain_timeout_when_a_container_keeps_running(double, sleeps, job):
    quick = make_backend(double, sleeps, drain_timeout=0.3)
    ps = add_pod(double, job, "worker-0")  # e.g. a parameter server nobody stops
    double.append_log(NS, ps, "serving")
    set_job(double, job, "Succeeded")
    started = time.monotonic()
    assert [ln.line for ln in quick.logs(job, follow=True)] == ["serving"]
    assert time.monotonic() - started < 5
    quick.close()


def test_closing_the_follow_generator_closes_every_stream(double, k8s_backend, job):
    set_job(double, job, "Running")
    for replica in ("master-0", "worker-0"):
        double.append_log(NS, add_pod(double, job, replica), "hello")
    stream = k8s_backend.logs(job, follow=True)
    assert next(stream).line == "hello"
    wait_until(lambda: double.open_streams("log") == 2, what="two open streams")
    stream.close()
    wait_until(lambda: double.open_streams("log") == 0, what="streams closed")


# ---- the readers' interface: PodLogSource, nothing else of the backend -------------------------------

def test_kubernetes_backend_implements_pod_log_source():
    methods = [name for name, value in vars(PodLogSource).items() if inspect.isfunction(value) and name[0] != "_"]
    assert sorted(methods) == ["list_pods", "open_container_log", "read_container_log", "read_pod",
                               "workload_finished"]
    for name in methods:
        wanted = inspect.signature(getattr(PodLogSource, name))
        assert inspect.signature(getattr(KubernetesBackend, name)).parameters.keys() == wanted.parameters.keys(), name


class Response:
    """Enough of a urllib3 response for the readers: the whole body in one chunk."""

    def __init__(self, text):
        self.body, self.closed, self.released = text.encode(), False, False

    def stream(self, amt=None, decode_content=False):
        yield self.body

    def close(self):
        self.closed = True

    def release_conn(self):
        self.released = True

    def shutdown(self):
        self.closed = True


class MemorySource:
    """A PodLogSource with no cluster behind it: pods and their logs in dicts."""

    def __init__(self, logs, finished=True):
        self.logs, self.finished, self.responses = logs, finished, []

    def list_pods(self, ref):
        return [{"metadata": {"name": pod, "uid": pod}, "spec": {"containers": [{"name": "main"}]},
                 "status": {"phase": "Succeeded"}} for pod in self.logs]

    def read_pod(self, namespace, name):
        return self.list_pods(None)[list(self.logs).index(name)]

    def read_container_log(self, namespace, pod, container):
        if self.logs[pod] is None:
            raise KubeApiError("read log: 404 NotFound", status=404)
        return self.logs[pod]

    def open_container_log(self, namespace, pod, container, *, follow, since_seconds=None):
        self.responses.append(Response(self.read_container_log(namespace, pod, container)))
        return self.responses[-1]

    def workload_finished(self, ref):
        return self.finished


MEMORY_REF = JobRef("kubernetes", "ns", "j", ObjectRef("batch/v1", "Job", "ns", "j"))


def test_snapshot_reads_any_pod_log_source():
    source = MemorySource({"a": "2024-01-01T00:00:01Z a1\n2024-01-01T00:00:03Z a2\n",
                           "b": "2024-01-01T00:00:02Z b1\n", "gone": None})
    assert [(ln.replica, ln.seq, ln.line) for ln in snapshot(source, MEMORY_REF, {})] == [
        ("a", 1, "a1"), ("b", 1, "b1"), ("a", 2, "a2")]
    assert [(ln.replica, ln.seq) for ln in snapshot(source, MEMORY_REF, {"a": 1, "b": 1})] == [("a", 2)]


def test_follower_reads_any_pod_log_source_and_releases_its_streams():
    source = MemorySource({"a": "2024-01-01T00:00:01Z a1\n2024-01-01T00:00:02Z a2\n"})
    lines = list(Follower(source, MEMORY_REF, {"a": 1}, poll_interval=0.01, drain_timeout=5))
    assert [(ln.replica, ln.seq, ln.line) for ln in lines] == [("a", 2, "a2")]
    assert source.responses and all(r.released for r in source.responses)
