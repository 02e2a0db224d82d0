"""Cost-aware preemption on Kubernetes (the real backend against the API-server double): admission learns when
a running borrower last saved a complete checkpoint on the project's checkpoints claim, by a reader pod paced
per task (myapp/outputs/live.py), so the borrower that checkpointed a moment ago is the one stopped for the
quota's owner, and its attempt says where it resumes, instead of counting all its work as lost."""
from __future__ import annotations

import json
import time
from types import SimpleNamespace

import pytest
import sqlalchemy as sa

from tests.admission.test_admission_local import make_group, python_task, submit


def rows(app, run_id):
    from myapp.extensions import db
    from myapp.models import TaskRun

    with app.app_context():
        return [SimpleNamespace(id=r.id, state=r.state, reason=r.reason or "", backend_ref=r.backend_ref)
                for r in db.session.scalars(sa.select(TaskRun).where(TaskRun.pipeline_run_id == run_id)
                                            .order_by(TaskRun.id))]


def save_checkpoint(claim, folder: str, step: int, saved_at: float) -> None:
    """What myapp.checkpoint.save leaves in a task's folder: the data, then its manifest."""
    from myapp.checkpoint import FORMAT

    path = claim / folder
    path.mkdir(parents=True, exist_ok=True)
    (path / f"ckpt-{step}.bin").write_bytes(b"x" * 100)
    (path / f"ckpt-{step}.json").write_text(json.dumps({
        "format": FORMAT, "step": step, "unit": "epoch", "file": f"ckpt-{step}.bin", "size": 100,
        "sha256": "0" * 64, "saved_at": saved_at, "meta": {}}))


@pytest.mark.backends  # admission takes row locks (its group's row) on PostgreSQL
def test_the_borrower_that_just_checkpointed_on_the_claim_is_preempted_first(app, catalog, double, k8s_backend,
                                                                             tmp_path, monkeypatch):
    from myapp.backends.archive import FileLogArchive
    from myapp.extensions import db
    from myapp.models import Project
    from myapp.outputs import live
    from myapp.pipelines.controller import RunController

    monkeypatch.setitem(app.config, "MYAPP_CLAIM_CHECKPOINT_SECONDS", 0.0)  # read at every admission (60 s by default)
    group, (owner, borrower) = make_group(app, 2000, [{"cpu_millicores": 2000}, None], kubernetes=True)
    with app.app_context():
        owner_name = db.session.get(Project, owner).name
        namespace = db.session.get(Project, borrower).namespace
    claim = tmp_path / "checkpoints"
    double.checkpoint_claims[namespace] = claim
    controller = RunController(lambda task: k8s_backend, archive=FileLogArchive(tmp_path / "logs"))

    def start(run_id):
        with app.app_context():
            controller.reconcile(run_id)
        (attempt,) = rows(app, run_id)
        ref = attempt.backend_ref
        assert ref is not None, attempt.reason
        double.set_status("batch/v1", "Job", namespace, ref["primary"]["name"], {"active": 1, "ready": 1})
        with app.app_context():
            controller.reconcile(run_id)
        assert rows(app, run_id)[0].state.value == "running"

    older = submit(app, catalog, group, borrower, {"train": python_task(600)})
    start(older)
    time.sleep(1.1)  # whole seconds of work apart
    newer = submit(app, catalog, group, borrower, {"train": python_task(600)})
    start(newer)
    # The older job saved a checkpoint just now: stopping it loses less than stopping the newer one, which
    # has none (without knowing the checkpoint, the newer one would go: it has done less work).
    save_checkpoint(claim, f"{older}/train", 6, time.time())

    owned = submit(app, catalog, group, owner, {"mine": python_task(1, cpu="1")})
    with app.app_context():
        controller.reconcile(owned)
    (stopped,), (kept,) = rows(app, older), rows(app, newer)
    assert (stopped.state.value, kept.state.value) == ("cancelled", "running")
    assert f"for project {owner_name}'s quota" in stopped.reason, stopped.reason
    # Read before the stop: what the job saves on SIGTERM (myapp.checkpoint.Stop) may come after it.
    assert "the task resumes from epoch 6, or from the checkpoint it saves on the stop (at most 0 s of work since " \
           "epoch 6 lost)" in stopped.reason, stopped.reason
    readers = [p for p in double.readers.seen if p["metadata"]["labels"].get("myapp.io/outputs-fetch") == "checkpoint"]
    assert readers and {p["metadata"]["namespace"] for p in readers} == {namespace}
    assert [p for p in double.list("v1", "Pod", namespace)
            if p["metadata"]["name"].startswith("myapp-checkpoint")] == []  # each deleted once read

    # At the default pace a task's folder is read once a minute, whoever asks: admission read the newer job's
    # just now, so neither these looks nor its new checkpoint start another reader within that minute.
    monkeypatch.setitem(app.config, "MYAPP_CLAIM_CHECKPOINT_SECONDS", 60.0)
    save_checkpoint(claim, f"{newer}/train", 2, time.time())
    before = len(double.readers.seen)
    with app.app_context():
        answers = [live.last_checkpoint(namespace, kept.id, f"{newer}/train", k8s_backend) for _ in range(3)]
    assert answers == [None, None, None] and len(double.readers.seen) == before
    monkeypatch.setitem(app.config, "MYAPP_CLAIM_CHECKPOINT_SECONDS", 0.0)
    with app.app_context():
        assert live.last_checkpoint(namespace, kept.id, f"{newer}/train", k8s_backend)["step"] == 2
    assert len(double.readers.seen) == before + 1


def test_what_a_stopped_attempt_keeps_is_said_alike_locally_and_on_kubernetes(app, double, k8s_backend, tmp_path,
                                                                              monkeypatch):
    """Locally the folder is read once the stopped job has ended, so its save on SIGTERM is the checkpoint named;
    a claim is read before the stop, so the message names the last checkpoint read and the save still to come."""
    import datetime as dt

    from myapp.admission.checkpoints import resumes
    from myapp.admission.group_state import Entry
    from myapp.admission.usage import Amount
    from myapp.backends.local import LocalBackend
    from myapp.models import TaskState
    from tests.support import unique

    monkeypatch.setitem(app.config, "MYAPP_CLAIM_CHECKPOINT_SECONDS", 0.0)
    namespace, now = unique("ns"), dt.datetime.now(dt.UTC)
    entry = Entry(attempt_id=7, run_id=70, project_id=1, task_id=1, state=TaskState.RUNNING, amount=Amount(),
                  created_at=now, started_at=now - dt.timedelta(seconds=20), placement=None, preemptions=0,
                  checkpoints=True, task_name="train", namespace=namespace)
    local = LocalBackend(tmp_path / "jobs")
    claim = tmp_path / "claim"
    double.checkpoint_claims[namespace] = claim

    def said(backend):
        with app.app_context():
            return resumes(backend, entry, entry.started_at, now)

    assert said(local) == "starts over (no checkpoint yet; 20 s of work lost)"
    assert said(k8s_backend) == "starts over unless it saves a checkpoint on the stop (none read yet; at most 20 s " \
                                "of work lost)"
    for folder in (local.checkpoints_dir(namespace), claim):
        save_checkpoint(folder, "70/train", 6, now.timestamp() - 5)
    assert said(local) == "resumes from epoch 6 (5 s of work since that checkpoint lost)"
    assert said(k8s_backend) == "resumes from epoch 6, or from the checkpoint it saves on the stop (at most 5 s of " \
                                "work since epoch 6 lost)"
    save_checkpoint(local.checkpoints_dir(namespace), "70/train", 7, now.timestamp())  # saved on SIGTERM
    assert said(local) == "resumes from epoch 7 (0 s of work since that checkpoint lost)"
    # A job that keeps no checkpoints starts over wherever it runs.
    entry.checkpoints = False
    assert said(k8s_backend) == said(local) == "starts over (it keeps no checkpoints; 20 s of work lost)"
