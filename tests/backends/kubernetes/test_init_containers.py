"""Init containers are read like the others: an image build runs Kaniko in one, so its log is
the build's log and its exit code is the attempt's."""
from __future__ import annotations

import copy
from collections import Counter

from myapp.backends.base import JobRef, ObjectRef
from myapp.backends.kubernetes.adapters import exit_code
from myapp.backends.kubernetes.logs import Follower, snapshot, targets
from tests.k8s_double.support import manifests

REF = JobRef("kubernetes", "ns", "b", ObjectRef("batch/v1", "Job", "ns", "b"))
LOGS = {"prepare": "2024-01-01T00:00:01Z wrote Dockerfile\n", "build": "2024-01-01T00:00:02Z RUN pip install\n",
        "push": "2024-01-01T00:00:03Z pushed\n"}


def terminated(code: int = 0) -> dict:
    return {"terminated": {"exitCode": code, "reason": "Completed" if code == 0 else "Error"}}


def build_pod(build_state: dict, push_state: dict, phase: str = "Running") -> dict:
    """The pod of a rendered image-build Job, as the kubelet reports it."""
    spec = copy.deepcopy(manifests("image-build")[0]["spec"]["template"]["spec"])
    return {"metadata": {"name": "b-0", "uid": "u-0"}, "spec": spec, "status": {
        "phase": phase,
        "initContainerStatuses": [{"name": "prepare", "state": terminated()}, {"name": "build", "state": build_state}],
        "containerStatuses": [{"name": "push", "state": push_state}]}}


class Response:
    def __init__(self, text: str):
        self.body = text.encode()

    def stream(self, amt=None, decode_content=False):
        yield self.body

    def close(self):
        pass

    release_conn = shutdown = close


class Source:
    """A PodLogSource for one pod; the workload finishes after ``running`` checks."""

    def __init__(self, pod: dict, running: int = 0):
        self.pod, self.running = pod, running
        self.opened: Counter[tuple[str, bool]] = Counter()

    def list_pods(self, ref):
        return [self.pod]

    def read_pod(self, namespace, name):
        return self.pod

    def read_container_log(self, namespace, pod, container):
        return LOGS[container]

    def open_container_log(self, namespace, pod, container, *, follow, since_seconds=None):
        self.opened[(container, follow)] += 1
        return Response(LOGS[container])

    def workload_finished(self, ref):
        self.running -= 1
        return self.running < 0


def test_init_containers_are_targets_with_their_own_tags():
    pod = build_pod(terminated(), {"running": {}})
    assert [(t.container, t.replica) for t in targets([pod])] == [
        ("prepare", "b-0/prepare"), ("build", "b-0/build"), ("push", "b-0")]
    plain = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "main"}]}}
    assert [(t.container, t.replica) for t in targets([plain])] == [("main", "p")]  # unchanged without init


def test_a_snapshot_has_the_build_log():
    source = Source(build_pod(terminated(), terminated(), phase="Succeeded"))
    assert [(line.replica, line.line) for line in snapshot(source, REF, {})] == [
        ("b-0/prepare", "wrote Dockerfile"), ("b-0/build", "RUN pip install"), ("b-0", "pushed")]


def test_following_ends_an_init_container_reader_once_it_has_terminated():
    """Its follow stream ended and initContainerStatuses says terminated: not reopened while the
    pod's main container keeps the pod running."""
    source = Source(build_pod(terminated(), {"running": {}}), running=15)
    lines = list(Follower(source, REF, {}, poll_interval=0.01, drain_timeout=5))
    assert sorted((line.replica, line.seq) for line in lines) == [("b-0", 1), ("b-0/build", 1), ("b-0/prepare", 1)]
    assert source.opened[("build", True)] == 1 and source.opened[("prepare", True)] == 1
    assert source.opened[("push", True)] > 1  # still running: followed until the workload ended


def test_a_failed_build_step_gives_the_exit_code():
    failed = build_pod(terminated(2), {"waiting": {"reason": "PodInitializing"}}, phase="Failed")
    assert exit_code([failed]) == 2
    assert exit_code([build_pod(terminated(), terminated(), phase="Succeeded")]) == 0
