"""Built images used by pipelines, locally: a pipeline whose task's template names an image the project built runs with
that environment's packages, through the controller and the local backend; another project's run of the
same template does not get them."""
from __future__ import annotations

from pathlib import Path

from tests.pipelines.support import make_pipeline
from tests.support import unique, wait_until
from tests.world import created

# (The platform's own Python may have six too: the prefix tells which Python ran.)
PROBE = ("import sys\ntry:\n    import six\n    print('six', six.__version__, sys.prefix)\n"
         "except ImportError:\n    print('no six', sys.prefix)\n")


def run_and_read(app, template_id, project_id, backend):
    run_id, _ = make_pipeline(app, template_id, {"probe": {"retries": 0}}, [], project_id=project_id)
    return drive_and_read(app, run_id, backend)


def drive_and_read(app, run_id, backend):
    """Drive the run's one attempt to its end on ``backend`` (it must succeed) and return its log lines."""
    from myapp.backends import JobRef
    from myapp.extensions import db
    from myapp.models import TaskRun
    from myapp.pipelines.controller import RunController

    controller = RunController(lambda task: backend)

    def finished():
        with app.app_context():
            return controller.reconcile(run_id).value in ("succeeded", "failed")

    wait_until(finished, what="the probe run to finish", timeout=60, interval=0.2)
    with app.app_context():
        attempt = db.session.scalars(db.select(TaskRun).filter_by(pipeline_run_id=run_id)).one()
        assert attempt.state.value == "succeeded", attempt.reason
        ref = JobRef.from_dict(attempt.backend_ref)
    # Live from the job's folder, or from the archive once the controller cleaned the attempt up.
    lines = list(backend.logs(ref)) if backend.job_dir(ref).exists() else log_archive(app).read(ref)
    return [line.line for line in lines]


def log_archive(app):
    from myapp.backends.registry import log_archive as archive

    with app.app_context():
        return archive()


def test_a_task_naming_the_built_image_runs_with_its_packages(app, admin, user, tmp_path):
    from myapp.backends.local import LocalBackend
    from myapp.images.drive import drive

    project = created(user.post("/api/v1/project/", json={"name": unique("pipe")}))
    reference = f"registry.local/pipe/six-env:{unique('v')}"
    repository, tag = reference.rsplit(":", 1)
    build = created(user.post("/api/v1/image_build/", json={
        "project_id": project["id"], "repository": repository, "tag": tag, "packages": ["six==1.17.0"]}))
    with app.app_context():
        assert drive(build["id"]) == "succeeded"
    done = user.get(f"/api/v1/image_build/{build['id']}").get_json()
    template = created(admin.post("/api/v1/job_template/", json={
        "name": unique("six-probe"), "version": "1.0.0", "kind": "job", "image": reference,
        "command": ["python", "-c", PROBE], "default_resources": {"cpu": "1", "memory": "1Gi"}}))
    assert [t["id"] for t in user.get(f"/api/v1/image_build/{build['id']}/usage").get_json()["templates"]] == [
        template["id"]]

    backend = LocalBackend(tmp_path / "jobs", gpus=[], environments=Path(app.config["INSTANCE_PATH"]) / "environments")
    env_path = Path(app.config["INSTANCE_PATH"]) / "environments" / done["environment"]
    assert run_and_read(app, template["id"], project["id"], backend) == [f"six 1.17.0 {env_path}"]
    other = created(user.post("/api/v1/project/", json={"name": unique("other")}))
    (line,) = run_and_read(app, template["id"], other["id"], backend)
    assert line.rsplit(" ", 1)[1] != str(env_path)  # the host's Python, not the environment
