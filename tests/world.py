"""A small world of two projects with one of every object, built through the API."""
from __future__ import annotations

from dataclasses import dataclass, field

from tests.support import ApiClient, unique


def created(resp) -> dict:
    assert resp.status_code == 201, resp.get_json()
    return resp.get_json()


@dataclass
class ProjectWorld:
    project: dict
    ids: dict[str, int] = field(default_factory=dict)


def build_catalog(admin: ApiClient) -> dict[str, int]:
    cluster = created(admin.post("/api/v1/cluster/", json={"name": unique("local"), "kind": "local"}))
    group = created(admin.post("/api/v1/resource_group/", json={
        "name": unique("cpu"), "cluster_id": cluster["id"], "cpu": "16", "memory": "64Gi", "gpus": 0,
        "node_selector": {"pool": "cpu"}}))
    template = created(admin.post("/api/v1/job_template/", json={
        "name": unique("python"), "version": "1.0.0", "kind": "job", "image": "python:3.11-slim",
        "command": ["python", "-c"],
        "args_schema": {"type": "object", "properties": {
            "epochs": {"type": "integer", "minimum": 1, "maximum": 100, "default": 3},
            "optimizer": {"type": "string", "enum": ["sgd", "adam"], "default": "adam"}}},
        "default_resources": {"cpu": "1", "memory": "1Gi"}, "max_resources": {"cpu": "4", "memory": "8Gi", "gpu": 0}}))
    image = created(admin.post("/api/v1/image/", json={"repository": "registry.local/team/base", "tag": unique("v")}))
    return {"cluster": cluster["id"], "resource_group": group["id"], "job_template": template["id"],
            "image": image["id"]}


def build_project(owner: ApiClient, catalog: dict[str, int], app) -> ProjectWorld:
    project = created(owner.post("/api/v1/project/", json={"name": unique("proj")}))
    pid = project["id"]
    world = ProjectWorld(project, {"project": pid})
    pipeline = created(owner.post("/api/v1/pipeline/", json={"project_id": pid, "name": "train",
                                                             "parameters": {"lr": 0.1}}))
    world.ids["pipeline"] = pipeline["id"]
    tasks = [created(owner.post("/api/v1/task/", json={
        "pipeline_id": pipeline["id"], "name": name, "template_id": catalog["job_template"]}))
        for name in ("prepare", "fit")]
    world.ids["task"] = tasks[0]["id"]
    world.ids["task2"] = tasks[1]["id"]
    world.ids["edge"] = created(owner.post("/api/v1/edge/", json={
        "pipeline_id": pipeline["id"], "upstream_task_id": tasks[0]["id"],
        "downstream_task_id": tasks[1]["id"]}))["id"]
    run = created(owner.post("/api/v1/pipeline_run/", json={"pipeline_id": pipeline["id"]}))
    world.ids["pipeline_run"] = run["id"]
    world.ids["task_run"] = insert_task_run(app, pid, run["id"], tasks[0]["id"])
    image = owner.get(f"/api/v1/image/{catalog['image']}").get_json()  # a notebook names a catalog image
    world.ids["notebook"] = created(owner.post("/api/v1/notebook/", json={
        "project_id": pid, "name": "nb", "image": f"{image['repository']}:{image['tag']}"}))["id"]
    world.ids["model_version"] = created(owner.post("/api/v1/model_version/", json={
        "project_id": pid, "name": "digits", "uri": "file://" + data_file(app, pid, "trained/digits.pt"),
        "task_run_id": world.ids["task_run"]}))["id"]
    world.ids["inference_service"] = created(owner.post("/api/v1/inference_service/", json={
        "project_id": pid, "name": "digits", "model_version_id": world.ids["model_version"]}))["id"]
    world.ids["image_build"] = created(owner.post("/api/v1/image_build/", json={
        "project_id": pid, "repository": f"registry.local/{pid}/env", "tag": "v1", "packages": ["numpy==2.1"]}))["id"]
    world.ids["experiment"] = created(owner.post("/api/v1/experiment/", json=experiment_body(pipeline["id"])))["id"]
    world.ids["trial"] = insert_trial(app, pid, world.ids["experiment"])
    members = owner.get(f"/api/v1/project/{pid}/members").get_json()["items"]
    world.ids["member"] = members[0]["id"]
    return world


def insert_task_run(app, project_id: int, run_id: int, task_id: int) -> int:
    """Task runs are written by the controller, not the API: insert one directly."""
    from myapp.extensions import db
    from myapp.models import TaskRun

    with app.app_context():
        row = TaskRun(project_id=project_id, pipeline_run_id=run_id, task_id=task_id, attempt=1,
                      manifests=[{"kind": "Job"}])
        db.session.add(row)
        db.session.commit()
        return row.id


def experiment_body(pipeline_id: int) -> dict:
    """An experiment over the world's pipeline, not started (no worker looks at it in these tests)."""
    return {"pipeline_id": pipeline_id, "name": unique("exp"), "start": False,
            "search_space": [{"name": "lr", "type": "float", "low": 0.001, "high": 1.0, "log": True}],
            "objectives": [{"metric": "loss"}]}


def insert_trial(app, project_id: int, experiment_id: int) -> int:
    """Trials are written by the experiment driver, not the API: insert one directly."""
    from myapp.extensions import db
    from myapp.models import Trial

    with app.app_context():
        row = Trial(project_id=project_id, experiment_id=experiment_id, number=0, parameters={"lr": 0.01},
                    intermediate=[], system_attrs={})
        db.session.add(row)
        db.session.commit()
        return row.id


def insert_finished_run(app, project_id: int, pipeline_id: int) -> int:
    """A run that has finished (it may be rerun or deleted), as the controller would leave it."""
    import uuid

    from myapp.extensions import db
    from myapp.models import PipelineRun, RunState
    from myapp.models.base import utcnow

    with app.app_context():
        now = utcnow()
        row = PipelineRun(project_id=project_id, pipeline_id=pipeline_id, run_key=f"done-{uuid.uuid4().hex}",
                          state=RunState.SUCCEEDED, started_at=now, finished_at=now)
        db.session.add(row)
        db.session.commit()
        return row.id


def add_member(owner: ApiClient, project_id: int, username: str, role: str) -> int:
    """Add a member through the API (as an owner or an admin); returns the membership's id."""
    return created(owner.post(f"/api/v1/project/{project_id}/members",
                              json={"username": username, "role": role}))["id"]


def data_file(app, project_id: int, name: str = "model.joblib", content: bytes = b"model") -> str:
    """A file in the project's data folder (where a model version's local uri may point), as a job would
    leave it there; its absolute path."""
    from myapp.backends.registry import local_workdir
    from myapp.extensions import db
    from myapp.models import Project

    with app.app_context():
        folder = local_workdir() / "data" / db.session.get(Project, project_id).namespace
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return str(path)
