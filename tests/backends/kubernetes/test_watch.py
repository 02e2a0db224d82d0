"""Kubernetes watch events (myapp/backends/kubernetes/watch.py) against the API-server double: the runs
whose Jobs, training jobs or pods change are reported once each; a dropped watch resumes from the last
resourceVersion, a compacted one (410 Gone) lists again, bookmarks move the resume point, errors back off."""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from myapp.backends.kubernetes.watch import WATCHED, Backoff, RunWatch
from myapp.rendering.contract import MANAGED_BY, MANAGED_BY_LABEL, RUN_LABEL
from tests.k8s_double.support import NS, manifests
from tests.support import wait_until

JOB = ("batch/v1", "Job")
PYTORCH = ("kubeflow.org/v1", "PyTorchJob")


class Recorded(Backoff):
    """Backoff that waits almost nothing and keeps the delays it chose."""

    delays: list[float] = []

    def __init__(self) -> None:
        super().__init__(base=0.01, cap=0.05)

    def next(self) -> float:
        delay = super().next()
        Recorded.delays.append(delay)
        return delay


def job(name: str, run_id: int | None, managed: bool = True) -> dict:
    labels = {MANAGED_BY_LABEL: MANAGED_BY} if managed else {}
    if run_id is not None:
        labels[RUN_LABEL] = str(run_id)
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": NS, "labels": labels},
            "spec": {"template": {"spec": {"containers": [{"name": "main", "image": "python:3.11"}]}}}}


def collected(watcher: RunWatch, want: set[int], what: str) -> set[int]:
    """Take changed runs until `want` is among them; returns all taken."""
    seen: set[int] = set()

    def arrived() -> bool:
        seen.update(watcher.changed_runs())
        return want <= seen
    wait_until(arrived, what=what, timeout=10)
    return seen


def jobs_watch(watcher: RunWatch):
    return next(w for w in watcher.watches if w.what.name == "jobs")


def watch_requests(double, path: str) -> list[dict]:
    return [r.query for r in double.requests_matching("GET", path + "$") if r.query.get("watch") == "true"]


@pytest.fixture()
def watcher(double) -> Iterator[RunWatch]:
    Recorded.delays = []
    running = RunWatch(double.api_client(), timeout_seconds=30, backoff=Recorded).start()
    wait_until(lambda: all(w.watching.is_set() for w in running.watches), what="every watch open", timeout=10)
    yield running
    running.stop()


def test_changes_of_jobs_and_pods_report_their_runs_once(double, watcher):
    assert watcher.changed_runs() == set()  # nothing listed at the start
    double.put(job("a", 7))
    assert collected(watcher, {7}, "the Job's run") == {7}
    double.add_pod(NS, "a-pod", {MANAGED_BY_LABEL: MANAGED_BY, RUN_LABEL: "8"})
    double.set_status(*JOB, NS, "a", {"active": 1})
    assert collected(watcher, {7, 8}, "the pod's run and the Job's again") == {7, 8}
    double.put(job("stranger", 9, managed=False))  # not the platform's: not watched
    double.put(job("no-run", None))  # the platform's, no run (a notebook's, a build's): nothing to request
    double.put(job("b", 10))
    assert collected(watcher, {10}, "the next run") == {10}
    assert watcher.changed_runs() == set()  # each change reported once


def test_a_training_job_and_the_backends_submit_are_watched(double, watcher):
    pytorch = manifests("pytorch-ddp")
    run_id = int(pytorch[0]["metadata"]["labels"][RUN_LABEL])
    double.put(pytorch[0])
    assert run_id in collected(watcher, {run_id}, "the PyTorchJob's run")
    assert {w.what.name for w in watcher.watches} == {w.name for w in WATCHED}


def test_a_dropped_watch_resumes_from_the_last_version_it_saw(double, watcher):
    double.put(job("a", 1))
    collected(watcher, {1}, "the first run")
    seen_version = jobs_watch(watcher).resource_version
    with double.store.lock:  # the change is made before the watch can reconnect
        assert double.drop_watches() == len(WATCHED)
        double.put(job("b", 2))
    assert collected(watcher, {2}, "the change made while the watch was down") == {2}
    resumed = watch_requests(double, "/apis/batch/v1/jobs")
    assert resumed[-1]["resourceVersion"] == seen_version  # resumed, not listed again
    assert jobs_watch(watcher).relists == 1


def test_410_gone_lists_again_and_reports_every_listed_run(double, watcher):
    double.put(job("a", 1))
    collected(watcher, {1}, "the first run")
    with double.store.lock:
        double.drop_watches()
        double.put(job("b", 2))
        double.compact()  # the watch's version is gone from the history
    # Every run listed is reported: what changed while the history was lost is unknown.
    assert collected(watcher, {1, 2}, "the runs of the list after 410") >= {1, 2}
    wait_until(lambda: jobs_watch(watcher).relists == 2, what="the jobs listed again")
    double.put(job("c", 3))
    assert collected(watcher, {3}, "events after the relist") >= {3}


def test_a_bookmark_moves_the_resume_version(double):
    running = RunWatch(double.api_client(), kinds=tuple(w for w in WATCHED if w.name == "jobs"), timeout_seconds=1,
                       backoff=Recorded).start()
    try:
        wait_until(lambda: running.watches[0].watching.is_set(), what="the watch open")
        first = watch_requests(double, "/apis/batch/v1/jobs")[0]["resourceVersion"]
        double.add_pod(NS, "elsewhere", {MANAGED_BY_LABEL: MANAGED_BY, RUN_LABEL: "5"})  # not a Job: no event
        wait_until(lambda: len(watch_requests(double, "/apis/batch/v1/jobs")) >= 2, what="the timed-out watch renewed")
        later = watch_requests(double, "/apis/batch/v1/jobs")[1]
        assert later["allowWatchBookmarks"] == "true"
        assert int(later["resourceVersion"]) > int(first)  # the bookmark's, past the pod's change
        assert running.changed_runs() == set()
    finally:
        running.stop()


def test_errors_reconnect_with_backoff(double):
    double.inject_fault("GET", r"/api/v1/pods$", times=3, status=500)
    running = RunWatch(double.api_client(), kinds=tuple(w for w in WATCHED if w.name == "pods"), timeout_seconds=30,
                       backoff=Recorded)
    Recorded.delays = []
    running.start()
    try:
        wait_until(lambda: running.watches[0].watching.is_set(), what="the watch open after the errors")
        assert len(Recorded.delays) == 3 and Recorded.delays == sorted(Recorded.delays)  # growing
        double.add_pod(NS, "p", {MANAGED_BY_LABEL: MANAGED_BY, RUN_LABEL: "4"})
        assert collected(running, {4}, "the pod's run") == {4}
        assert running.watches[0].backoff.failures == 0  # reset once a watch delivered
    finally:
        running.stop()


def test_the_backend_reports_changed_runs_only_where_it_watches(double, k8s_backend):
    assert k8s_backend.changed_runs() == set()
    pytorch = manifests("pytorch-ddp")
    ref = k8s_backend.submit(pytorch)
    run_id = int(pytorch[0]["metadata"]["labels"][RUN_LABEL])
    watching = k8s_backend.start_watch(timeout_seconds=30)
    assert k8s_backend.start_watch() is watching  # one per process
    wait_until(lambda: all(w.watching.is_set() for w in watching.watches), what="every watch open")
    k8s_backend.changed_runs()  # the first list's
    double.set_status(*PYTORCH, NS, ref.primary.name, {"conditions": [{"type": "Succeeded", "status": "True"}]})
    seen: set[int] = set()

    def reported() -> bool:
        seen.update(k8s_backend.changed_runs())
        return run_id in seen
    wait_until(reported, what="the run of the finished job")
    k8s_backend.stop_watch()
    assert k8s_backend.changed_runs() == set()


def test_a_kind_the_cluster_does_not_serve_counts_as_watched_and_is_asked_again(double, monkeypatch):
    """No training operator installed: its list answers 404. Nothing of that kind can change, so the cluster's
    watch is still complete (its attempts get the slow safety-net polls) and no error loop runs; the kind
    is asked again later, and watched once it is served."""
    from myapp.backends.kubernetes import watch

    monkeypatch.setattr(watch, "ABSENT_RECHECK", 0.3)
    double.inject_fault("GET", r"/apis/kubeflow.org/v1/pytorchjobs$", times=1, status=404)
    kinds = tuple(w for w in WATCHED if w.name in ("pods", "pytorchjobs"))
    Recorded.delays = []
    running = RunWatch(double.api_client(), kinds=kinds, timeout_seconds=30, backoff=Recorded).start()
    try:
        pytorch = next(w for w in running.watches if w.what.name == "pytorchjobs")
        wait_until(lambda: pytorch.absent.is_set() or pytorch.watching.is_set(), what="the 404 seen")
        assert pytorch.absent.is_set() and Recorded.delays == []  # no error backoff for a kind not served
        wait_until(running.live, what="the watch complete with the kind absent")
        wait_until(lambda: pytorch.watching.is_set() and not pytorch.absent.is_set(),
                   what="the kind asked again, served now, and watched")
        assert running.live()
    finally:
        running.stop()
