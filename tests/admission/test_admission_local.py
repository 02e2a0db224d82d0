"""Admission per resource group, end to end on the local backend (real sandboxed processes): a project
over its quota waits saying why and starts when capacity frees; a 2-replica job never runs one replica
alone; a borrower is preempted when the owner submits, and starts again later without that counting
as a failure. CPU is what is contended (cpu_millicores capacity), so no GPU is needed."""
from __future__ import annotations

import pytest
import sqlalchemy as sa

from tests.pipelines.support import make_pipeline
from tests.support import unique, wait_until

pytestmark = pytest.mark.backends

SLEEP = "import time; time.sleep({})"


def make_group(app, cpu_millicores, quotas=(), policy="sieve", kubernetes=False):
    """A local cluster (or the API-server double's) with a resource group of `cpu_millicores` (memory and
    GPUs not tracked) and one new project per quota (None: no quota): quotas = [{"cpu_millicores": ...,
    "can_borrow": ...}] -> group id, [project ids]."""
    from myapp.extensions import db
    from myapp.models import Cluster, ClusterKind, Project, Quota, ResourceGroup

    with app.app_context():
        cluster = (Cluster(name=unique("c"), kind=ClusterKind.KUBERNETES, kube_context="double") if kubernetes
                   else Cluster(name=unique("c"), kind=ClusterKind.LOCAL))
        db.session.add(cluster)
        db.session.flush()
        group = ResourceGroup(name=unique("rg"), cluster_id=cluster.id, cpu_millicores=cpu_millicores,
                              policy=policy)
        db.session.add(group)
        db.session.flush()
        projects = []
        for quota in quotas:
            project = Project(name=unique("p"), namespace=unique("ns"))
            db.session.add(project)
            db.session.flush()
            if quota is not None:
                db.session.add(Quota(project_id=project.id, resource_group_id=group.id, **quota))
            projects.append(project.id)
        db.session.commit()
        return group.id, projects


def submit(app, catalog, group_id, project_id, tasks):
    """A run of a new pipeline in the project; tasks: {name: fields}, each in the group -> run id."""
    fields = {name: {"resource_group_id": group_id, "retries": 0} | spec for name, spec in tasks.items()}
    run_id, _ = make_pipeline(app, catalog, fields, [], project_id=project_id, name=unique("pipe"))
    return run_id


def python_task(seconds, cpu="1"):
    return {"args": {"script": SLEEP.format(seconds)}, "resources": {"cpu": cpu, "memory": "64Mi"}}


class Platform:
    """The run controller on a real local backend, reconciling the given runs as workers would."""

    def __init__(self, app, tmp_path):
        from myapp.backends.archive import FileLogArchive
        from myapp.backends.local import LocalBackend
        from myapp.pipelines.controller import RunController

        self.app = app
        self.backend = LocalBackend(tmp_path / "jobs", restart_delay=0.1, grace_period=2.0, poll_interval=0.02)
        self.controller = RunController(lambda task: self.backend, archive=FileLogArchive(tmp_path / "logs"))
        self.runs: list[int] = []

    def step(self):
        with self.app.app_context():
            for run_id in self.runs:
                self.controller.reconcile(run_id)

    def attempts(self, run_id):
        """[(attempt, state, reason, queue_position, submitted, preemptions)] of the run, oldest first."""
        from myapp.extensions import db
        from myapp.models import TaskRun

        with self.app.app_context():
            rows = db.session.execute(sa.select(TaskRun.attempt, TaskRun.state, TaskRun.reason, TaskRun.queue_position,
                                                TaskRun.backend_ref, TaskRun.preemptions)
                                      .where(TaskRun.pipeline_run_id == run_id).order_by(TaskRun.id)).all()
            db.session.commit()
            return [(a, s.value, r, q, ref is not None, p) for a, s, r, q, ref, p in rows]

    def run_state(self, run_id):
        from myapp.extensions import db
        from myapp.models import PipelineRun

        with self.app.app_context():
            state = db.session.get(PipelineRun, run_id, populate_existing=True).state.value
            db.session.commit()
            return state

    def until(self, predicate, what, timeout=60.0):
        def check():
            self.step()
            return predicate()
        return wait_until(check, what=lambda: f"{what}: {[self.attempts(r) for r in self.runs]}", timeout=timeout,
                          interval=0.1)

    def stop(self):
        from myapp.extensions import db
        from myapp.models import PipelineRun

        with self.app.app_context():
            for run_id in self.runs:
                if not db.session.get(PipelineRun, run_id).is_finished:
                    self.controller.cancel(run_id, "test over")


def test_a_project_over_its_quota_waits_with_its_reason_and_starts_when_capacity_frees(app, catalog, tmp_path):
    group, (project,) = make_group(app, 4000, [{"cpu_millicores": 1000, "can_borrow": False}])
    platform = Platform(app, tmp_path)
    try:
        first = submit(app, catalog, group, project, {"a": python_task(2)})
        second = submit(app, catalog, group, project, {"b": python_task(0)})
        platform.runs = [first, second]
        platform.until(lambda: platform.attempts(first)[0][1] in ("pending", "running"), "the first run started")
        ((_, state, reason, position, submitted, _),) = platform.attempts(second)
        # The group has room, the project's quota has none: the second waits, nothing submitted.
        assert (state, reason, position, submitted) == (
            "queued", "waiting: project quota cpu 1/1 (this project does not borrow)", 1, False)
        platform.until(lambda: platform.run_state(second) == "succeeded", "the second run ran after the first")
        assert platform.run_state(first) == "succeeded"
        ((_, state, reason, position, _, _),) = platform.attempts(second)
        assert position is None and state == "succeeded"
    finally:
        platform.stop()


def test_a_two_replica_job_never_runs_one_replica_alone(app, catalog, tmp_path):
    """Room for one replica only while another job runs: the gang waits whole (nothing submitted), then
    both replicas start together and the job succeeds."""
    group, (blocker_project, gang_project) = make_group(app, 3000, [None, None], policy="gang-fifo")
    platform = Platform(app, tmp_path)
    try:
        blocker = submit(app, catalog, group, blocker_project, {"hold": python_task(3, cpu="1500m")})
        platform.runs = [blocker]
        platform.until(lambda: platform.attempts(blocker)[0][1] in ("pending", "running"), "the blocker started")
        gang = submit(app, catalog, group, gang_project, {"ddp": {  # Master + 1 Worker, a CPU each
            "template": "pytorch-ddp",
            "args": {"workers": 1, "epochs": 1, "hidden": 16, "output_path": "/tmp/model.pt"},
            "resources": {"cpu": "1", "memory": "512Mi"}}})
        platform.runs = [blocker, gang]
        platform.step()
        ((_, state, reason, position, submitted, _),) = platform.attempts(gang)
        assert (state, reason, position, submitted) == ("queued", "waiting: no node with 2 free CPUs", 1, False)
        seen = []

        def gang_state():
            seen.append((platform.attempts(blocker)[0][1], platform.attempts(gang)[0][4]))
            return platform.run_state(gang) in ("succeeded", "failed")

        platform.until(gang_state, "the gang ran after the blocker")
        # Never submitted (no replica of it existed) while the blocker held the room.
        assert not [s for s in seen if s == ("running", True)], seen
        assert platform.run_state(gang) == "succeeded", platform.attempts(gang)
    finally:
        platform.stop()


def test_a_borrower_is_preempted_when_the_owner_submits_and_restarts_later(app, catalog, tmp_path):
    group, (owner, borrower) = make_group(app, 2000, [{"cpu_millicores": 2000}, None])
    platform = Platform(app, tmp_path)
    try:
        borrowed = submit(app, catalog, group, borrower, {"long": python_task(4, cpu="2")})
        platform.runs = [borrowed]
        platform.until(lambda: platform.attempts(borrowed)[0][1] == "running", "the borrower runs")
        owned = submit(app, catalog, group, owner, {"mine": python_task(1, cpu="2")})
        platform.runs = [owned, borrowed]
        platform.until(lambda: platform.attempts(owned)[0][4], "the owner's job was submitted")
        first, *_ = platform.attempts(borrowed)
        assert first[1] == "cancelled" and first[2].startswith(
            "preempted in resource group rg"), first
        assert "its project's quota was borrowed and its owner took it back (preemption 1 of at most 2)" in first[2]
        platform.until(lambda: platform.run_state(borrowed) in ("succeeded", "failed"), "the borrower finished")
        assert platform.run_state(owned) == "succeeded"
        # retries=0, yet the run succeeded: the preemption was not a failure; the count is kept.
        assert [(a, s, p) for a, s, _, _, _, p in platform.attempts(borrowed)] == [
            (1, "cancelled", 0), (2, "succeeded", 1)]
        assert platform.run_state(borrowed) == "succeeded"
        with app.app_context():  # the attempts say why each ended: a preemption, not a failure of any kind
            from myapp.extensions import db
            from myapp.models import TaskRun

            assert db.session.scalars(sa.select(TaskRun.cause).where(TaskRun.pipeline_run_id == borrowed)
                                      .order_by(TaskRun.attempt)).all() == ["preempted", None]
    finally:
        platform.stop()
