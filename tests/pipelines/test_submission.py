"""Submissions that cannot succeed end their attempt instead of leaving the run stuck: transient backend
errors are tried a bounded number of times with backoff, permanent ones fail at once, status polling
that keeps failing gives up; and a disabled cluster takes no new work until an admin enables it again
(on a local cluster and a Kubernetes one)."""
from __future__ import annotations

import datetime as dt

import pytest
import sqlalchemy as sa

from myapp.backends import BackendError
from tests.fake_backend import FakeBackend
from tests.pipelines.support import make_pipeline, task_states
from tests.support import unique

UNFINISHED = ("queued", "running")


class Clock:
    def __init__(self):
        self.at = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.UTC)

    def __call__(self) -> dt.datetime:
        return self.at

    def advance(self, seconds: float) -> None:
        self.at += dt.timedelta(seconds=seconds)


def attempt_rows(app, run_id):
    from myapp.extensions import db
    from myapp.models import TaskRun

    with app.app_context():
        rows = db.session.execute(sa.select(TaskRun.attempt, TaskRun.state, TaskRun.reason, TaskRun.backend_ref)
                                  .where(TaskRun.pipeline_run_id == run_id).order_by(TaskRun.id)).all()
        return [(a, s.value, reason, ref) for a, s, reason, ref in rows]


def reconcile(app, controller, run_id) -> str:
    with app.app_context():
        return controller.reconcile(run_id).value


def test_unreachable_backend_fails_the_attempt_after_bounded_tries_with_backoff(app, catalog):
    from myapp.pipelines.controller import RunController

    run_id, _ = make_pipeline(app, catalog, {"a": {"retries": 1}}, [])
    backend, clock = FakeBackend(fail_submits=1000), Clock()
    controller = RunController(lambda task: backend, now=clock)
    tries = lambda: 1000 - backend.fail_submits  # noqa: E731

    assert reconcile(app, controller, run_id) == "running"
    assert tries() == 1
    (row,) = attempt_rows(app, run_id)
    assert row[:2] == (1, "queued")
    assert row[2] == "submit failed (try 1 of 5), next in 2 s: injected: API server unavailable"
    reconcile(app, controller, run_id)
    assert tries() == 1  # backing off: no second try before its time
    for step, delay in enumerate((2, 4, 8), start=2):
        clock.advance(delay)
        reconcile(app, controller, run_id)
        assert tries() == step
    clock.advance(16)
    reconcile(app, controller, run_id)
    first, second = attempt_rows(app, run_id)
    assert first[:3] == (1, "failed", "submit failed after 5 tries: injected: API server unavailable")
    assert second[:2] == (2, "queued")  # the task's own retries apply (retry_delay 0: tried at once)
    assert tries() == 6
    for delay in (2, 4, 8, 16):
        clock.advance(delay)
        state = reconcile(app, controller, run_id)
    assert state == "failed" and tries() == 10  # the run finishes instead of retrying forever
    assert [s for _, s, *_ in attempt_rows(app, run_id)] == ["failed", "failed"]


def test_a_burst_shorter_than_the_bound_recovers(app, catalog):
    from myapp.pipelines.controller import RunController

    run_id, _ = make_pipeline(app, catalog, {"a": {}}, [])
    backend, clock = FakeBackend(fail_submits=4), Clock()
    controller = RunController(lambda task: backend, now=clock)
    for _ in range(8):
        clock.advance(30)
        state = reconcile(app, controller, run_id)
    assert state == "succeeded"
    assert attempt_rows(app, run_id)[0][:3] == (1, "succeeded", None)
    assert set(backend.creations.values()) == {1}


def test_a_kind_the_backend_cannot_run_fails_at_once(app, catalog, tmp_path):
    """An image build on the local backend (no container engine): one try, the attempt fails saying why,
    the run ends."""
    from myapp.backends.local import LocalBackend
    from myapp.pipelines.controller import RunController

    backend = LocalBackend(tmp_path / "jobs")
    calls = []
    submit = backend.submit
    backend.submit = lambda manifests: calls.append(1) or submit(manifests)
    run_id, _ = make_pipeline(app, catalog, {"build": {"template": "image-build", "retries": 0, "args": {
        "destination": "registry.example.com/vision/digits:1.0"}}}, [])
    assert reconcile(app, RunController(lambda task: backend), run_id) == "failed"
    ((attempt, state, reason, ref),) = attempt_rows(app, run_id)
    assert (attempt, state, ref, len(calls)) == (1, "failed", None, 1)
    assert reason.startswith("cannot run: image builds run Kaniko inside a Kubernetes pod"), reason


class StatusDown(FakeBackend):
    """Accepts the job, then cannot say how it is doing (its API server went away)."""

    def status(self, ref):
        raise BackendError("connection refused")


def test_status_polling_that_keeps_failing_fails_the_attempt(app, catalog, monkeypatch):
    from myapp.pipelines.controller import RunController

    monkeypatch.setitem(app.config, "MYAPP_STATUS_ATTEMPTS", 3)
    run_id, _ = make_pipeline(app, catalog, {"a": {}}, [])
    backend, clock = StatusDown(), Clock()
    controller = RunController(lambda task: backend, now=clock)
    assert reconcile(app, controller, run_id) == "running"
    (row,) = attempt_rows(app, run_id)
    assert row[1:3] == ("pending", "status failed (try 1 of 3), next in 2 s: connection refused")
    clock.advance(2)
    reconcile(app, controller, run_id)
    clock.advance(4)
    assert reconcile(app, controller, run_id) == "failed"
    assert attempt_rows(app, run_id)[0][1:3] == ("failed", "status failed after 3 tries: connection refused")
    assert backend.cancelled == set(backend.jobs)  # not left running unseen


# ---- a disabled cluster takes no new work ------------------------------------------------------------------
def set_enabled(app, cluster_id: int, enabled: bool) -> None:
    from myapp.extensions import db
    from myapp.models import Cluster

    with app.app_context():
        db.session.get(Cluster, cluster_id).enabled = enabled
        db.session.commit()


def new_run(app, run_id: int) -> int:
    from myapp.extensions import db
    from myapp.models import PipelineRun

    with app.app_context():
        first = db.session.get(PipelineRun, run_id)
        run = PipelineRun(project_id=first.project_id, pipeline_id=first.pipeline_id, run_key=unique("k"))
        db.session.add(run)
        db.session.commit()
        return run.id


def run_row(app, run_id: int) -> tuple[str, str | None]:
    from myapp.extensions import db
    from myapp.models import PipelineRun

    with app.app_context():
        run = db.session.get(PipelineRun, run_id)
        return run.state.value, run.reason


@pytest.mark.parametrize("kind", ["local", "kubernetes"])
def test_disabled_cluster_takes_no_new_work_until_enabled(app, catalog, double, k8s_backend, kind):
    from myapp.backends.registry import backend_for
    from myapp.extensions import db
    from myapp.models import Cluster, ClusterKind, ResourceGroup
    from myapp.pipelines.controller import RunController
    from tests.support import wait_until

    with app.app_context():
        cluster = Cluster(name=unique("c"), kind=ClusterKind(kind), in_cluster=kind == "kubernetes")
        db.session.add(cluster)
        db.session.flush()
        group = ResourceGroup(name=unique("g"), cluster_id=cluster.id)
        db.session.add(group)
        db.session.commit()
        cluster_id, cluster_name, group_id = cluster.id, cluster.name, group.id
    tasks = {"a": {"resource_group_id": group_id, "args": {"command": "echo a"}},
             "b": {"resource_group_id": group_id, "args": {"command": "echo b"}}}
    run_id, _ = make_pipeline(app, catalog, tasks, [("a", "b")])
    controller = RunController((lambda task: k8s_backend) if kind == "kubernetes" else backend_for)

    def step(run: int) -> str:
        if kind == "kubernetes":  # the double's Jobs complete when told
            for job in double.list("batch/v1", "Job"):
                meta = job["metadata"]
                double.set_status("batch/v1", "Job", meta["namespace"], meta["name"],
                                  {"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]})
        return reconcile(app, controller, run)

    wait_until(lambda: step(run_id) and task_states(app, run_id)[0][2] != "queued", timeout=30,
               what="a to be submitted")
    set_enabled(app, cluster_id, False)
    waiting = new_run(app, run_id)
    assert step(waiting) == "queued"
    assert run_row(app, waiting) == ("queued", f"waiting: cluster {cluster_name} is disabled")
    # The running run goes on: a (submitted) finishes; b is not submitted and says why.
    wait_until(lambda: step(run_id) and [s for _, _, s in task_states(app, run_id)] == ["succeeded", "queued"],
               timeout=30, what=lambda: f"a to finish and b to wait: {task_states(app, run_id)}")
    assert attempt_rows(app, run_id)[1][2:] == (f"waiting: cluster {cluster_name} is disabled", None)
    assert step(run_id) == "running" and run_row(app, waiting)[0] == "queued"

    set_enabled(app, cluster_id, True)  # an admin enables it again: the work proceeds
    wait_until(lambda: step(run_id) == "succeeded", timeout=30, what=lambda: f"the run: {task_states(app, run_id)}")
    wait_until(lambda: step(waiting) == "succeeded", timeout=30,
               what=lambda: f"the waiting run: {task_states(app, waiting)}")
