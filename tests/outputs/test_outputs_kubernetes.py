"""Data between tasks on Kubernetes (the API-server double, strict CRD and core validation): every
attempt's pods mount the project's outputs claim (all of it read-only, their own folder read-write),
the consumer gets the producer's path as data, and the claim outlives the attempts' cleanup."""
from __future__ import annotations

import sqlalchemy as sa

from tests.pipelines.support import make_pipeline, task_states
from tests.support import wait_until

CHECKPOINTS_VOLUME = {"name": "myapp-checkpoints", "persistentVolumeClaim": {"claimName": "myapp-checkpoints"}}


def test_the_second_task_reads_the_first_tasks_output_through_the_volume(app, catalog, double, k8s_backend,
                                                                            tmp_path, monkeypatch):
    from myapp.backends.archive import FileLogArchive
    from myapp.extensions import db
    from myapp.models import Project, Task, TaskRun
    from myapp.pipelines.controller import RunController

    monkeypatch.setenv("MYAPP_OUTPUTS_STORAGE_CLASS", "shared-nfs")
    run_id, _ = make_pipeline(app, catalog, {
        "make": {"args": {"command": "echo 1,2 > $MYAPP_OUTPUT_DIR/data.csv", "outputs": ["data.csv"]}},
        "use": {"args": {"command": "cat '{{ tasks.make.outputs.data.csv }}'"}},
    }, [("make", "use")])
    controller = RunController(lambda task: k8s_backend, archive=FileLogArchive(tmp_path / "logs"))
    seen_jobs: dict[str, dict] = {}

    def step() -> str:
        for job in double.list("batch/v1", "Job"):
            meta = job["metadata"]
            seen_jobs[meta["name"]] = job
            double.set_status("batch/v1", "Job", meta["namespace"], meta["name"],
                              {"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]})
        with app.app_context():
            return controller.reconcile(run_id).value

    wait_until(lambda: step() == "succeeded", timeout=60, what=lambda: f"the run: {task_states(app, run_id)}")
    with app.app_context():
        rows = dict(db.session.execute(sa.select(Task.name, TaskRun).join(Task)
                                       .where(TaskRun.pipeline_run_id == run_id)).tuples().all())
        namespace = db.session.get(Project, rows["make"].project_id).namespace
    jobs = {job["metadata"]["labels"]["myapp.io/task"]: job for job in seen_jobs.values()}
    for task in ("make", "use"):
        pod = jobs[task]["spec"]["template"]["spec"]
        assert pod["volumes"] == [{"name": "myapp-outputs", "persistentVolumeClaim": {"claimName": "myapp-outputs"}},
                                  CHECKPOINTS_VOLUME]
        assert pod["containers"][0]["volumeMounts"] == [
            {"name": "myapp-outputs", "mountPath": "/myapp/outputs", "readOnly": True},
            {"name": "myapp-outputs", "mountPath": f"/myapp/outputs/{run_id}/{task}/1",
             "subPath": f"{run_id}/{task}/1"},
            {"name": "myapp-checkpoints", "mountPath": f"/myapp/checkpoints/{run_id}/{task}",
             "subPath": f"{run_id}/{task}"}]  # the task's checkpoints (the python template keeps them)
    args = jobs["use"]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[args.index("--command") + 1] == f"cat '/myapp/outputs/{run_id}/make/1/data.csv'"
    claim = double.get("v1", "PersistentVolumeClaim", namespace, "myapp-outputs")
    assert claim is not None, "the outputs claim outlives the attempts' cleanup"
    assert double.get("v1", "PersistentVolumeClaim", namespace, "myapp-checkpoints") is not None, "so does this one"
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"] and claim["spec"]["storageClassName"] == "shared-nfs"
    assert double.list("batch/v1", "Job", namespace) == []  # the attempts themselves were cleaned up
