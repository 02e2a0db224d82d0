"""A task's own image: saved through every door (task API, the editor's graph save, YAML, clone) only when the
template runs the user's code and the project may use the image, carried into its manifests, and refused by
name otherwise."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import sqlalchemy as sa
import yaml

from myapp.rendering.image_choice import PLATFORM_STEPS, USER_CODE_KINDS
from tests.support import unique
from tests.world import created

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def world(app, admin, user, catalog):
    """A project of the user's with a pipeline, a shared catalog image, an image of the project's and one of
    another project's."""
    from myapp.extensions import db
    from myapp.models import Image

    project = created(user.post("/api/v1/project/", json={"name": unique("p")}))
    other = created(admin.post("/api/v1/project/", json={"name": unique("other")}))
    pipeline = created(user.post("/api/v1/pipeline/", json={"project_id": project["id"], "name": "p"}))
    shared = created(admin.post("/api/v1/image/", json={"repository": "ghcr.io/acme/torch", "tag": unique("v")}))
    refs = {"shared": f"{shared['repository']}:{shared['tag']}"}
    with app.app_context():
        for key, owner in (("own", project["id"]), ("foreign", other["id"])):
            image = Image(repository=f"registry.local:5000/{key}/env", tag=unique("v"), project_id=owner)
            db.session.add(image)
            refs[key] = f"{image.repository}:{image.tag}"
        db.session.commit()
    return {"project": project, "pipeline": pipeline, "refs": refs}


def template_id(app, name: str) -> int:
    from myapp.extensions import db
    from myapp.models import JobTemplate

    with app.app_context():
        return db.session.scalar(sa.select(JobTemplate.id).filter_by(name=name))


def new_task(client, world, template: int, **fields):
    return client.post("/api/v1/task/", json={"pipeline_id": world["pipeline"]["id"], "name": unique("t"),
                                              "template_id": template, **fields})


def errors(resp) -> dict[str, str]:
    return {e["field"]: e["reason"] for e in resp.get_json()["errors"]}


def test_a_task_runs_the_catalogs_or_its_projects_image_in_every_container(app, user, world, catalog):
    from myapp.extensions import db
    from myapp.models import Task
    from myapp.pipelines.manifests import render_task

    for key in ("shared", "own"):
        task = created(new_task(user, world, catalog, image=world["refs"][key]))
        assert task["image"] == world["refs"][key]
        with app.app_context():
            (job,) = render_task(db.session.get(Task, task["id"]), 1)
        pod = job["spec"]["template"]["spec"]
        assert [c["image"] for c in pod["containers"] + pod.get("initContainers", [])] == [world["refs"][key]]
    plain = created(new_task(user, world, catalog))
    assert plain["image"] is None
    with app.app_context():
        (job,) = render_task(db.session.get(Task, plain["id"]), 1)
    assert job["spec"]["template"]["spec"]["containers"][0]["image"] == "ghcr.io/myapp-platform/python:1.0.0"
    # Back to the template's image, through PUT.
    task = created(new_task(user, world, catalog, image=world["refs"]["own"]))
    assert user.put(f"/api/v1/task/{task['id']}", json={"image": None}).get_json()["image"] is None


@pytest.mark.parametrize("image, status, words", [
    ("foreign", 404, "no image"),  # another project's environment is as unknown as one nobody built
    ("registry.local/nobody/env:1", 404, "no image"),
    ("no-tag-here", 404, "no image"),
    ("", 400, "Length"),
])
def test_an_image_the_project_cannot_see_is_refused_naming_the_field(user, world, catalog, image, status, words):
    resp = new_task(user, world, catalog, image=world["refs"].get(image, image))
    assert resp.status_code == status, resp.get_json()
    assert "image" in errors(resp) and words.lower() in errors(resp)["image"].lower(), errors(resp)


def test_the_platforms_own_steps_keep_their_image(app, user, world):
    resp = new_task(user, world, template_id(app, "model-register"), image=world["refs"]["shared"],
                    args={"model_name": "m", "model_uri": "s3://b/m"})
    assert resp.status_code == 400 and "platform's own step" in errors(resp)["image"], resp.get_json()


def test_the_graph_save_and_yaml_name_the_task_and_carry_the_image(app, user, world, catalog):
    pipeline_id, refs = world["pipeline"]["id"], world["refs"]
    bad = user.put(f"/api/v1/pipeline/{pipeline_id}/graph", json={"tasks": [
        {"key": "a", "name": "a", "template_id": catalog},
        {"key": "b", "name": "b", "template_id": catalog, "image": refs["foreign"]}], "edges": []})
    assert bad.status_code == 404 and "tasks[1].image" in errors(bad), bad.get_json()
    saved = user.put(f"/api/v1/pipeline/{pipeline_id}/graph", json={"tasks": [
        {"key": "a", "name": "a", "template_id": catalog},
        {"key": "b", "name": "b", "template_id": catalog, "image": refs["own"]}], "edges": []})
    assert saved.status_code == 200, saved.get_json()
    assert {t["name"]: t["image"] for t in saved.get_json()["tasks"]} == {"a": None, "b": refs["own"]}

    text = user.get(f"/api/v1/pipeline/{pipeline_id}/export").get_json()["yaml"]
    doc = yaml.safe_load(text)
    assert [t.get("image") for t in doc["tasks"]] == [None, refs["own"]]  # left out when it is the template's
    doc["name"] = "copy"
    copy = user.post("/api/v1/pipeline/import", json={"yaml": yaml.safe_dump(doc)})
    assert copy.status_code == 200, copy.get_json()
    assert user.get(f"/api/v1/pipeline/{copy.get_json()['id']}/export").get_json()["yaml"] == text.replace(
        f"name: {world['pipeline']['name']}", "name: copy", 1)
    doc["tasks"][1]["image"] = refs["foreign"]
    refused = user.post("/api/v1/pipeline/import", json={"yaml": yaml.safe_dump(doc)})
    assert "tasks[1] (b).image" in errors(refused), refused.get_json()

    clone = user.post(f"/api/v1/pipeline/{pipeline_id}/clone", json={"name": unique("clone")})
    tasks = user.get("/api/v1/task/", query_string={"pipeline_id": clone.get_json()["id"]}).get_json()["items"]
    assert {t["name"]: t["image"] for t in tasks} == {"a": None, "b": refs["own"]}


def test_a_removed_image_fails_the_attempt_saying_so(app, admin, user, world, catalog):
    from myapp.extensions import db
    from myapp.models import Image, Task
    from myapp.pipelines.manifests import render_task
    from myapp.rendering import ArgumentError

    task = created(new_task(user, world, catalog, image=world["refs"]["shared"]))
    repository, tag = world["refs"]["shared"].rsplit(":", 1)
    with app.app_context():
        image_id = db.session.scalar(sa.select(Image.id).filter_by(repository=repository, tag=tag))
    assert admin.delete(f"/api/v1/image/{image_id}").status_code == 200
    with app.app_context(), pytest.raises(ArgumentError, match="no longer in the catalog"):
        render_task(db.session.get(Task, task["id"]), 1)


def test_the_usage_of_a_built_image_lists_the_tasks_choosing_it(app, user, world, catalog):
    from myapp.extensions import db
    from myapp.models import BuildSource, ImageBuild, ServiceState

    task = created(new_task(user, world, catalog, image=world["refs"]["own"]))
    repository, tag = world["refs"]["own"].rsplit(":", 1)
    with app.app_context():
        build = ImageBuild(project_id=world["project"]["id"], repository=repository, tag=tag,
                           source=BuildSource.PACKAGES, packages=[], state=ServiceState.SUCCEEDED)
        db.session.add(build)
        db.session.commit()
        build_id = build.id
    usage = user.get(f"/api/v1/image_build/{build_id}/usage").get_json()
    assert [t["id"] for t in usage["tasks"]] == [task["id"]]


def test_the_editor_knows_the_same_templates_as_rendering():
    """The editor's copy of the rule (frontend/src/pages/editor/imageChoice.ts) lists the same names."""
    text = (ROOT / "frontend/src/pages/editor/imageChoice.ts").read_text()

    def names(constant: str) -> set[str]:
        body = re.search(rf"{constant}\s*=\s*new Set\(\[([^\]]*)\]\)", text)
        assert body, f"{constant} not found"
        return set(re.findall(r'"([a-z0-9-]+)"', body.group(1)))

    assert names("USER_CODE_KINDS") == USER_CODE_KINDS
    assert names("PLATFORM_STEPS") == PLATFORM_STEPS
