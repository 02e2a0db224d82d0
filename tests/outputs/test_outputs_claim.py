"""Outputs on a Kubernetes claim without an S3 store (the API-server double): when an attempt ends, the
worker runs a reader pod in the project's namespace that reads the attempt's folder off the claim (the
double runs the pod's own command against a folder standing for the claim: tests/k8s_double/readers.py),
copies it within bounds, and deletes the reader; the API lists, previews and downloads the copy."""
from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from myapp.outputs.reader import COPY_BYTES
from myapp.rendering.contract import OUTPUTS_READER_LABEL
from myapp.rendering.kinds.outputs_reader import MOUNT
from tests.k8s_double import registry
from tests.pipelines.support import make_pipeline, task_states
from tests.support import wait_until

METRICS = json.dumps({"step": 0, "name": "loss", "value": 0.5}).encode() + b"\n"
PNG = b"\x89PNG\r\n\x1a\nfake"
def run_on_double(app, catalog, double, k8s_backend, tmp_path, claim: Path) -> int:
    """make -> use on the double; each Job's pod writes what `make` writes to its folder on the claim."""
    from myapp.backends.archive import FileLogArchive
    from myapp.extensions import db
    from myapp.models import PipelineRun, Project
    from myapp.pipelines.controller import RunController

    run_id, _ = make_pipeline(app, catalog, {
        "make": {"args": {"command": "echo 1,2 > $MYAPP_OUTPUT_DIR/data.csv", "outputs": ["data.csv"]}},
        "use": {"args": {"command": "cat '{{ tasks.make.outputs.data.csv }}'"}},
    }, [("make", "use")])
    with app.app_context():
        double.claims[db.session.get(Project, db.session.get(PipelineRun, run_id).project_id).namespace] = claim
    controller = RunController(lambda task: k8s_backend, archive=FileLogArchive(tmp_path / "logs"))
    seen: set[str] = set()

    def step() -> str:
        for job in double.list("batch/v1", "Job"):
            meta = job["metadata"]
            if meta["name"] not in seen:
                seen.add(meta["name"])
                own = job["spec"]["template"]["spec"]["containers"][0]["volumeMounts"][1]["subPath"]
                write_outputs(claim / own)
            double.set_status("batch/v1", "Job", meta["namespace"], meta["name"],
                              {"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]})
        with app.app_context():
            return controller.reconcile(run_id).value

    wait_until(lambda: step() == "succeeded", timeout=60, what=lambda: f"the run: {task_states(app, run_id)}")
    return run_id


def finished_make(app, catalog, double, k8s_backend, tmp_path, claim: Path, monkeypatch) -> tuple[int, int, str]:
    """run_on_double with the worker's backend the double's: (the run, make's attempt, its output folder)."""
    from myapp.backends import registry as backends
    from myapp.extensions import db
    from myapp.models import Task, TaskRun

    monkeypatch.setattr(backends, "backend_for", lambda task: k8s_backend)
    run_id = run_on_double(app, catalog, double, k8s_backend, tmp_path, claim)
    with app.app_context():
        make = db.session.scalars(sa.select(TaskRun).join(Task).where(
            TaskRun.pipeline_run_id == run_id, Task.name == "make")).one()
        return run_id, make.id, str(make.output_dir)


def write_outputs(folder: Path) -> None:
    """What the attempt's pod leaves on the claim: files to copy, one beyond the copy's bound, a symlink."""
    (folder / "plots").mkdir(parents=True, exist_ok=True)
    (folder / "data.csv").write_bytes(b"x,y\n1,2\n")
    (folder / "metrics.jsonl").write_bytes(METRICS)
    (folder / "plots" / "loss.png").write_bytes(PNG)
    with open(folder / "model.bin", "wb") as fh:
        fh.truncate(COPY_BYTES)  # with the rest, more than one attempt's copy holds
    os.symlink("/etc/passwd", folder / "link.txt")


@pytest.fixture()
def claim(tmp_path, monkeypatch) -> Path:
    """A folder standing for the project's claim (no S3 store: the claim is where outputs are)."""
    monkeypatch.delenv("MYAPP_OUTPUTS_S3_BUCKET", raising=False)
    path = tmp_path / "claim"
    path.mkdir()
    return path


def reader_pods(double) -> list[dict[str, Any]]:
    return double.list("v1", "Pod", label_selector=OUTPUTS_READER_LABEL)


def test_claim_outputs_are_listed_previewed_and_downloaded(app, catalog, double, k8s_backend, tmp_path, claim, admin):
    from myapp.extensions import db
    from myapp.models import Project, Task, TaskRun
    from myapp.outputs import store as outputs_store
    from myapp.pipelines import outputs_cleanup

    run_id = run_on_double(app, catalog, double, k8s_backend, tmp_path, claim)
    with app.app_context():
        rows = dict(db.session.execute(sa.select(Task.name, TaskRun).join(Task)
                                       .where(TaskRun.pipeline_run_id == run_id)).all())
        namespace = db.session.get(Project, rows["make"].project_id).namespace
        make = rows["make"]
        assert (make.backend, make.output_dir) == ("kubernetes", f"{run_id}/make/1")
        assert make.outputs == [{"path": "data.csv", "size": 8, "preview": "csv"},
                                {"path": "metrics.jsonl", "size": len(METRICS), "preview": "metrics"},
                                {"path": "model.bin", "size": COPY_BYTES, "preview": "none", "on_claim": True},
                                {"path": "plots/loss.png", "size": len(PNG), "preview": "image"}]
        assert make.reported_metrics == [{"step": 0, "name": "loss", "value": 0.5}]
        copy_dir = outputs_store.attempt_folder(make, namespace)
    # One reader per attempt, in the project's namespace, reading its claim read-only; none left.
    readers = {pod["metadata"]["labels"][OUTPUTS_READER_LABEL]: pod for pod in double.readers.seen}
    assert sorted(readers) == sorted(str(row.id) for row in rows.values())
    pod = readers[str(make.id)]
    assert pod["metadata"]["namespace"] == namespace
    assert pod["spec"]["volumes"] == [{"name": "myapp-outputs", "persistentVolumeClaim": {
        "claimName": "myapp-outputs", "readOnly": True}}]
    assert pod["spec"]["containers"][0]["volumeMounts"][0]["readOnly"] is True
    assert f"{MOUNT}/{run_id}/make/1" in pod["spec"]["containers"][0]["command"]
    assert reader_pods(double) == []
    assert double.get("v1", "PersistentVolumeClaim", namespace, "myapp-outputs") is not None

    url = f"/api/v1/task_run/{make.id}"
    listed = admin.get(f"{url}/outputs").get_json()
    assert [f["path"] for f in listed["files"]] == ["data.csv", "metrics.jsonl", "model.bin", "plots/loss.png"]
    assert listed["metrics"] == [{"step": 0, "name": "loss", "value": 0.5}]
    preview = admin.get(f"{url}/output?path=data.csv&preview=1")
    assert preview.status_code == 200 and preview.mimetype == "text/plain" and preview.data == b"x,y\n1,2\n"
    download = admin.get(f"{url}/output?path=data.csv")
    assert download.headers["Content-Disposition"].startswith("attachment") and download.data == b"x,y\n1,2\n"
    image = admin.get(f"{url}/output?path=plots/loss.png")
    assert image.mimetype == "image/png" and image.data == PNG
    beyond = admin.get(f"{url}/output?path=model.bin")  # fetched on demand: test_outputs_fetch.py
    assert beyond.status_code == 202 and "being fetched" in beyond.get_json()["message"]
    assert admin.get(f"{url}/output?path=link.txt").status_code == 404
    assert admin.get(f"{url}/output?path=../use/1/data.csv").status_code == 400
    with zipfile.ZipFile(io.BytesIO(admin.get(f"{url}/output").data)) as zf:
        assert sorted(zf.namelist()) == ["data.csv", "metrics.jsonl", "plots/loss.png"]

    # Deleting the run deletes the platform's copy (the claim keeps its own).
    assert copy_dir is not None and copy_dir.is_dir()
    assert admin.delete(f"/api/v1/pipeline_run/{run_id}").status_code == 200
    with app.app_context():
        assert outputs_cleanup.remove_due() == 1  # the worker after the commit (pipelines/outputs_cleanup.py)
    assert not copy_dir.exists()
    assert (claim / f"{run_id}/make/1/data.csv").exists()


def test_a_failed_reader_records_nothing_and_is_deleted(app, catalog, double, k8s_backend, tmp_path, claim, caplog):
    from myapp.extensions import db
    from myapp.models import TaskRun

    double.readers.exit_code = 1
    run_id = run_on_double(app, catalog, double, k8s_backend, tmp_path, claim)
    with app.app_context():
        attempts = db.session.scalars(sa.select(TaskRun).where(TaskRun.pipeline_run_id == run_id)).all()
        assert [a.state.value for a in attempts] == ["succeeded", "succeeded"]  # the run goes on
        assert [a.outputs for a in attempts] == [None, None]
    assert "not copied from the claim" in caplog.text and "outputs reader" in caplog.text
    assert reader_pods(double) == []


def test_a_reader_left_by_a_crash_is_adopted_or_swept(double, k8s_backend, tmp_path, claim):
    from myapp.rendering.kinds.outputs_reader import reader_pod

    write_outputs(claim / "5/make/1")
    namespace = "team-a"
    # A worker died after creating task run 7's reader: the next one adopts it (409) instead of failing.
    double.put(reader_pod(namespace, 7, "5/make/1", "python:3.12-slim"))
    # A reader of another attempt, older than its deadline and the wait: nobody will come back for it.
    old = reader_pod(namespace, 3, "4/make/1", "python:3.12-slim")
    double.put(old)
    double.set_pod_status(namespace, old["metadata"]["name"], {"phase": "Running"})
    with double.store.lock:  # the API server keeps creationTimestamp from writes: set where it is stored
        key = double.store.key(registry.by_kind("v1", "Pod"), namespace, old["metadata"]["name"])
        double.store.objects[key]["metadata"]["creationTimestamp"] = "2020-01-01T00:00:00Z"
    double.claims[namespace] = claim
    listing = k8s_backend.fetch_outputs(namespace, 7, "5/make/1", tmp_path / "copy")
    assert listing.copied == {"data.csv", "metrics.jsonl", "plots/loss.png"}
    assert (tmp_path / "copy" / "plots" / "loss.png").read_bytes() == PNG
    assert reader_pods(double) == []
    assert len(double.requests_matching("POST", rf"/namespaces/{namespace}/pods$")) == 1  # the adopted one: 409



def test_a_reader_that_cannot_start_is_given_up_at_once(double, k8s_backend, tmp_path, claim):
    from myapp.backends import BackendError
    from myapp.rendering.kinds.outputs_reader import reader_pod

    namespace = "team-a"
    stuck = reader_pod(namespace, 8, "5/make/1", "registry.invalid/python:3")
    double.put({**stuck, "status": {"phase": "Pending", "containerStatuses": [{
        "name": "reader", "image": "registry.invalid/python:3", "imageID": "", "ready": False, "restartCount": 0,
        "state": {"waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling image"}}}]}})
    with pytest.raises(BackendError, match="cannot start: ImagePullBackOff"):
        k8s_backend.fetch_outputs(namespace, 8, "5/make/1", tmp_path / "copy")
    assert reader_pods(double) == []  # deleted all the same


def test_the_claim_is_read_after_the_pass_commits_not_under_the_run_lock(app, catalog, double, k8s_backend,
                                                                          tmp_path, claim, monkeypatch):
    """The reader takes seconds (minutes pulling its image): while it runs, another connection can take the
    run's row (a cancel would wait on it otherwise), and the attempt has already ended in SQL."""
    from myapp.models import PipelineRun, TaskRun

    engine = sa.create_engine(app.config["SQLALCHEMY_DATABASE_URI"],
                              connect_args={"timeout": 0.5} if app.config["SQLALCHEMY_DATABASE_URI"]
                              .startswith("sqlite") else {})
    fetch, seen = k8s_backend.fetch_outputs, []

    def fetch_checking_locks(namespace, task_run_id, relative_dir, into):
        with engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                conn.exec_driver_sql("SET LOCAL lock_timeout = '500ms'")
            run_id = conn.scalar(sa.select(TaskRun.pipeline_run_id).where(TaskRun.id == task_run_id))
            conn.execute(sa.update(PipelineRun).where(PipelineRun.id == run_id)
                         .values(reconcile_requested_at=PipelineRun.reconcile_requested_at))  # fails if locked
            seen.append(conn.scalar(sa.select(TaskRun.state).where(TaskRun.id == task_run_id)))
        return fetch(namespace, task_run_id, relative_dir, into)

    monkeypatch.setattr(k8s_backend, "fetch_outputs", fetch_checking_locks)
    try:
        run_on_double(app, catalog, double, k8s_backend, tmp_path, claim)
    finally:
        engine.dispose()
    assert seen and all(str(state).lower().endswith("succeeded") for state in seen), seen
