"""A python task that chose its project's environment runs in it on the local backend: the environment is built
from a wheel the tests make and serve from a package index on 127.0.0.1 (no network: tests/images/conftest.py),
the task is saved through the API with `image`, and the run's script imports the wheel's module with the
environment's Python."""
from __future__ import annotations

from pathlib import Path

from tests.images.test_pipeline import drive_and_read
from tests.support import unique
from tests.world import created

PACKAGE, VERSION = "myapp-envprobe", "1.0.0"
PROBE = "import sys, myapp_envprobe\nprint(myapp_envprobe.VALUE, sys.prefix)\n"


def test_a_python_task_choosing_its_projects_environment_imports_its_package(app, user, catalog,
                                                                            tmp_path):
    from myapp.backends.local import LocalBackend
    from myapp.extensions import db
    from myapp.images.drive import drive
    from myapp.models import PipelineRun

    project = created(user.post("/api/v1/project/", json={"name": unique("envs")}))
    repository, tag = "registry.local/envs/probe", unique("v")
    build = created(user.post("/api/v1/image_build/", json={
        "project_id": project["id"], "repository": repository, "tag": tag, "packages": [f"{PACKAGE}=={VERSION}"]}))
    with app.app_context():
        assert drive(build["id"]) == "succeeded", user.get(f"/api/v1/image_build/{build['id']}/log").get_json()
    environment = user.get(f"/api/v1/image_build/{build['id']}").get_json()["environment"]
    pipeline = created(user.post("/api/v1/pipeline/", json={"project_id": project["id"], "name": "probe"}))
    created(user.post("/api/v1/task/", json={"pipeline_id": pipeline["id"], "name": "probe", "template_id": catalog,
                                             "image": f"{repository}:{tag}", "args": {"script": PROBE}}))
    with app.app_context():
        run = PipelineRun(project_id=project["id"], pipeline_id=pipeline["id"], run_key=unique("k"))
        db.session.add(run)
        db.session.commit()
        run_id = run.id

    backend = LocalBackend(tmp_path / "jobs", gpus=[], environments=Path(app.config["INSTANCE_PATH"]) / "environments")
    lines = drive_and_read(app, run_id, backend)
    env_path = Path(app.config["INSTANCE_PATH"]) / "environments" / environment
    assert lines == [f"from-the-wheel {env_path}"]
