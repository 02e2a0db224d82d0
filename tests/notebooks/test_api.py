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
