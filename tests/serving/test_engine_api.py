"""The serving engine of a cluster, set by admins: validated (400 naming `serving_engine`), `deployments` by
default or `kserve` where MYAPP_SERVING_KSERVE says so for new Kubernetes clusters; changing it asks for a
look at the cluster's services now; a resource group a service runs on cannot be deleted; a service's
resource group is fixed once created."""
from __future__ import annotations

import datetime as dt

import sqlalchemy as sa

from tests.support import unique
from tests.world import created


def errors(resp) -> dict[str, str]:
    return {e["field"]: e["reason"] for e in resp.get_json().get("errors", [])}


def test_the_serving_engine_is_validated_and_defaults_by_the_platform_setting(app, admin, user):
    resp = admin.post("/api/v1/cluster/", json={"name": unique("k8s"), "kind": "kubernetes",
                                                "serving_engine": "knative"})
    assert resp.status_code == 400 and "serving_engine" in errors(resp)
    resp = admin.post("/api/v1/cluster/", json={"name": unique("local"), "kind": "local", "serving_engine": "kserve"})
    assert resp.status_code == 400 and "kubernetes" in errors(resp)["serving_engine"]
    plain = created(admin.post("/api/v1/cluster/", json={"name": unique("k8s"), "kind": "kubernetes"}))
    assert plain["serving_engine"] == "deployments"
    before = app.config["MYAPP_SERVING_KSERVE"]
    app.config["MYAPP_SERVING_KSERVE"] = True
    try:
        kserve = created(admin.post("/api/v1/cluster/", json={"name": unique("k8s"), "kind": "kubernetes"}))
        local = created(admin.post("/api/v1/cluster/", json={"name": unique("local"), "kind": "local"}))
    finally:
        app.config["MYAPP_SERVING_KSERVE"] = before
    assert (kserve["serving_engine"], local["serving_engine"]) == ("kserve", "deployments")
    # Admins only.
    assert user.put(f"/api/v1/cluster/{plain['id']}", json={"serving_engine": "kserve"}).status_code == 403
    assert admin.get(f"/api/v1/cluster/{plain['id']}").get_json()["serving_engine"] == "deployments"


def test_changing_the_engine_asks_for_the_services_and_their_group_stays(app, admin, user):
    from myapp.extensions import db
    from myapp.models import InferenceService

    cluster = created(admin.post("/api/v1/cluster/", json={"name": unique("k8s"), "kind": "kubernetes"}))
    group = created(admin.post("/api/v1/resource_group/", json={"name": unique("rg"), "cluster_id": cluster["id"]}))
    other = created(admin.post("/api/v1/resource_group/", json={"name": unique("rg"), "cluster_id": cluster["id"]}))
    project = created(user.post("/api/v1/project/", json={"name": unique("engine")}))
    version = created(user.post("/api/v1/model_version/", json={
        "project_id": project["id"], "name": "m", "uri": "s3://models/m.joblib"}))
    service = created(user.post("/api/v1/inference_service/", json={
        "project_id": project["id"], "name": "svc", "model_version_id": version["id"],
        "resource_group_id": group["id"]}))
    resp = user.post("/api/v1/inference_service/", json={
        "project_id": project["id"], "name": "svc2", "model_version_id": version["id"], "resource_group_id": 999999})
    assert resp.status_code == 404 and "resource group" in resp.get_json()["message"]
    resp = user.put(f"/api/v1/inference_service/{service['id']}", json={"resource_group_id": other["id"]})
    assert resp.status_code == 400 and "resource_group_id" in errors(resp)

    with app.app_context():  # settled: its next look half an hour away
        db.session.execute(sa.update(InferenceService).where(InferenceService.id == service["id"])
                           .values(next_check_at=dt.datetime.now(dt.UTC) + dt.timedelta(minutes=30)))
        db.session.commit()
    assert admin.put(f"/api/v1/cluster/{cluster['id']}", json={"serving_engine": "kserve"}).status_code == 200
    with app.app_context():
        assert db.session.get(InferenceService, service["id"]).next_check_at is None

    resp = admin.delete(f"/api/v1/resource_group/{group['id']}")
    assert resp.status_code == 409 and "inference services" in resp.get_json()["message"]
