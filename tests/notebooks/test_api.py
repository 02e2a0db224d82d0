"""The notebook API: what it refuses (naming the field), intent stored and handed to a worker."""
from __future__ import annotations

from tests.world import created


def test_create_stores_intent_and_refuses_bad_input(app, user, make_user, notebook_world):
    pid, image = notebook_world["project"]["id"], notebook_world["image"]
    nb = created(user.post("/api/v1/notebook/", json={"project_id": pid, "name": "lab", "image": image}))
    assert nb["state"] == "pending" and nb["desired"] == "running" and nb["url"] is None
    assert "job" not in nb and "upstream" not in nb  # the token and where Jupyter listens stay inside

    again = user.post("/api/v1/notebook/", json={"project_id": pid, "name": "lab", "image": image})
    assert again.status_code == 409 and again.get_json()["errors"][0]["field"] == "name"
    unknown = user.post("/api/v1/notebook/", json={"project_id": pid, "name": "lab2", "image": "nope/x:1"})
    assert unknown.status_code == 400 and unknown.get_json()["errors"][0]["field"] == "image"
    big = user.post("/api/v1/notebook/", json={"project_id": pid, "name": "lab3", "image": image,
                                                "resources": {"cpu": "64"}})
    assert big.status_code == 400 and big.get_json()["errors"][0]["field"] == "resources.cpu"
    assert "maximum" in big.get_json()["errors"][0]["reason"]
    bad_name = user.post("/api/v1/notebook/", json={"project_id": pid, "name": "9lab", "image": image})
    assert bad_name.status_code == 400 and bad_name.get_json()["errors"][0]["field"] == "name"

    stranger = make_user()
    assert stranger.get(f"/api/v1/notebook/{nb['id']}").status_code == 404
    assert stranger.post(f"/api/v1/notebook/{nb['id']}/stop").status_code == 404

    stopped = user.post(f"/api/v1/notebook/{nb['id']}/stop").get_json()
    assert stopped["state"] == "stopping" and stopped["desired"] == "stopped"
    assert user.put(f"/api/v1/notebook/{nb['id']}", json={"image": "nope/x:2"}).status_code == 400


def test_quota_of_the_resource_group_bounds_resources(app, admin, user, notebook_world):
    pid, image = notebook_world["project"]["id"], notebook_world["image"]
    cluster = created(admin.post("/api/v1/cluster/", json={"name": "nbc-" + image[-8:], "kind": "local"}))
    group = created(admin.post("/api/v1/resource_group/", json={
        "name": "nbg-" + image[-8:], "cluster_id": cluster["id"], "cpu": "16", "memory": "64Gi", "gpus": 0}))
    created(admin.post("/api/v1/quota/", json={"project_id": pid, "resource_group_id": group["id"],
                                                "cpu": "1", "memory": "4Gi", "gpus": 0}))
    over = user.post("/api/v1/notebook/", json={"project_id": pid, "name": "lab", "image": image,
                                                 "resource_group_id": group["id"], "resources": {"cpu": "2"}})
    assert over.status_code == 400, over.get_json()
    assert over.get_json()["errors"][0]["field"] == "resources.cpu" and "quota" in over.get_json()["message"]
    assert user.get(f"/api/v1/notebook/?project_id={pid}").get_json()["count"] == 0  # nothing stored


def test_authz_answers_only_the_proxy(app, user, notebook_world):
    pid, image = notebook_world["project"]["id"], notebook_world["image"]
    created(user.post("/api/v1/notebook/", json={"project_id": pid, "name": "lab", "image": image}))
    host = f"lab.{notebook_world['project']['name']}.localhost"
    for asked in (user.get(f"/api/v1/notebook/authz?host={host}&path=/"),  # a user asking never sees the token
                  user.post("/api/v1/notebook/handoff", json={"code": "x", "host": host})):
        assert asked.status_code == 403 and "token" not in asked.get_data(as_text=True)


def test_image_choices_offer_the_platforms_defaults_first_then_the_projects_then_the_catalog(
        app, admin, user, make_user, notebook_world):
    from myapp.extensions import db
    from myapp.models import Image
    from tests.world import unique

    pid = notebook_world["project"]["id"]
    other = created(make_user().post("/api/v1/project/", json={"name": unique("nbo")}))
    with app.app_context():
        local, kubernetes = app.config["MYAPP_LOCAL_ENVIRONMENT"], app.config["MYAPP_NOTEBOOK_IMAGE"]
        for name, project_id, env in ((kubernetes, None, None), (local, None, "a" * 32),
                                      (f"myapp/env/mine:{unique('t')}", pid, "b" * 32),
                                      (f"myapp/env/theirs:{unique('t')}", other["id"], "c" * 32)):
            repository, _, tag = name.rpartition(":")
            if db.session.scalar(db.select(Image.id).filter_by(repository=repository, tag=tag)) is None:
                db.session.add(Image(repository=repository, tag=tag, project_id=project_id, environment=env))
        db.session.commit()
    answer = user.get(f"/api/v1/notebook/project/{pid}/images")
    assert answer.status_code == 200, answer.get_json()
    items = answer.get_json()["items"]
    assert [i["image"] for i in items[:2]] == [local, kubernetes]
    assert [i["group"] for i in items[:2]] == ["default", "default"] and items[0]["environment"]
    groups = [i["group"] for i in items]
    assert groups == sorted(groups, key=["default", "project", "catalog"].index)  # defaults, own, catalog
    assert [i["image"].split(":")[0] for i in items if i["group"] == "project"] == ["myapp/env/mine"]
    assert notebook_world["image"] in [i["image"] for i in items if i["group"] == "catalog"]
    assert not any(i["image"].startswith("myapp/env/theirs") for i in items)  # another project's stays its own
    assert answer.get_json()["only_defaults"] is False
    assert make_user().get(f"/api/v1/notebook/project/{pid}/images").status_code == 404


def test_a_kubernetes_install_registers_the_jupyterlab_image_and_no_local_environment(app, tmp_path):
    """`myapp init` with MYAPP_BACKEND=kubernetes (the install's init Job): no venv is made, no image that no
    cluster can pull is offered; the JupyterLab image of MYAPP_NOTEBOOK_IMAGE is, without an environment."""
    from myapp.extensions import db
    from myapp.images.defaults import ensure_defaults
    from myapp.models import Image

    with app.app_context():
        assert ensure_defaults(tmp_path / "environments", local_backend=False) == [app.config["MYAPP_NOTEBOOK_IMAGE"]]
        repository, _, tag = app.config["MYAPP_NOTEBOOK_IMAGE"].rpartition(":")
        row = db.session.scalar(db.select(Image).filter_by(repository=repository, tag=tag))
        assert row is not None and row.project_id is None and row.environment is None
    assert not (tmp_path / "environments").exists()
