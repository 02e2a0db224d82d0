"""A pipeline never starts a model server of its own: a task of a template of kind `service`
(deploy-service) is refused when saved, naming the field, and one stored before the rule fails to
render with the reason; serve-model, which asks the API for an inference service, is accepted. Nor is a
notebook a task (it never runs to completion); the catalog says which templates a task may use."""
from __future__ import annotations

import pytest
import sqlalchemy as sa

from myapp.extensions import db
from myapp.models import JobTemplate, Task
from myapp.pipelines.manifests import render_task
from myapp.rendering import ArgumentError
from tests.support import unique
from tests.world import created


def template_id(app, name: str) -> int:
    with app.app_context():
        return db.session.scalar(sa.select(JobTemplate.id).filter_by(name=name))


def errors_of(resp) -> dict[str, str]:
    return {e["field"]: e["reason"] for e in resp.get_json().get("errors", [])}


@pytest.fixture()
def pipeline(user):
    project = created(user.post("/api/v1/project/", json={"name": unique("proj")}))
    return created(user.post("/api/v1/pipeline/", json={"project_id": project["id"], "name": "serve"}))


def test_a_task_of_kind_service_is_refused_naming_the_template(app, catalog, user, pipeline):
    deploy = template_id(app, "deploy-service")
    resp = user.post("/api/v1/task/", json={"pipeline_id": pipeline["id"], "name": "serve", "template_id": deploy,
                                            "args": {"service_name": "digits", "version": "v1"}})
    assert resp.status_code == 400 and "serve-model" in errors_of(resp)["template_id"]
    resp = user.put(f"/api/v1/pipeline/{pipeline['id']}/graph", json={"tasks": [
        {"key": "a", "name": "a", "template_id": deploy, "args": {"service_name": "digits", "version": "v1"}}],
        "edges": []})
    assert resp.status_code == 400 and "tasks[0].template_id" in errors_of(resp)
    assert user.get(f"/api/v1/pipeline/{pipeline['id']}/graph").get_json()["tasks"] == []
    served = user.post("/api/v1/task/", json={"pipeline_id": pipeline["id"], "name": "serve",
                                              "template_id": template_id(app, "serve-model"),
                                              "args": {"service_name": "digits", "model_name": "digits"}})
    assert served.status_code == 201, served.get_json()


def test_a_task_stored_before_the_rule_fails_to_render_with_the_reason(app, catalog, user, pipeline):
    with app.app_context():
        task = Task(project_id=pipeline["project_id"], pipeline_id=pipeline["id"], name="old",
                    template_id=template_id(app, "deploy-service"), args={"service_name": "d", "version": "v1"})
        db.session.add(task)
        db.session.commit()
        with pytest.raises(ArgumentError, match="serve-model") as caught:
            render_task(task, run_id=7)
        assert caught.value.field == "template"


def test_the_catalog_says_which_templates_a_task_may_use(catalog, user):
    steps = {t["name"]: t["pipeline_step"] for t in user.get("/api/v1/job_template/?page_size=100").get_json()["items"]}
    assert steps["notebook"] is False and steps["deploy-service"] is False
    assert steps["python"] is True and steps["serve-model"] is True and steps["pytorch-ddp"] is True


def test_a_task_of_a_template_that_never_finishes_is_refused(app, catalog, user, pipeline):
    resp = user.put(f"/api/v1/pipeline/{pipeline['id']}/graph", json={"tasks": [
        {"key": "a", "name": "lab", "template_id": template_id(app, "notebook"), "args": {"name": "lab"}}],
        "edges": []})
    assert resp.status_code == 400, resp.get_json()
    assert "does not run to completion" in errors_of(resp)["tasks[0].template_id"]
    assert user.get(f"/api/v1/pipeline/{pipeline['id']}/graph").get_json()["tasks"] == []
