"""A project never gets a reserved Kubernetes namespace: the API refuses it (400 naming
`namespace`), and a row written some other way still cannot render into one."""
from __future__ import annotations

import pytest

from myapp.rendering import ContextError
from tests.support import unique
from tests.world import created


def refused(user, body) -> dict:
    resp = user.post("/api/v1/project/", json=body)
    assert resp.status_code == 400, resp.get_json()
    errors = resp.get_json()["errors"]
    assert [e["field"] for e in errors] == ["namespace"], errors
    return errors[0]


@pytest.mark.parametrize("namespace", ["kube-system", "kube-public", "default", "istio-system", "istio-gateways",
                                       "volcano-system", "kubeflow", "cert-manager", "knative-serving", "kserve"])
def test_reserved_namespaces_are_refused(user, namespace):
    name = unique("p")
    error = refused(user, {"name": name, "namespace": namespace})
    assert repr(namespace) in error["reason"] and "choose another namespace" in error["reason"]
    names = [p["name"] for p in user.get("/api/v1/project/?page_size=100").get_json()["items"]]
    assert name not in names


@pytest.mark.parametrize("name", ["default", "kubeflow", "kube-system"])
def test_a_namespace_defaulted_from_the_name_is_checked_too(user, name):
    refused(user, {"name": name})


def test_the_platform_namespace_is_refused(user, monkeypatch):
    monkeypatch.delenv("MYAPP_NAMESPACE", raising=False)
    refused(user, {"name": unique("p"), "namespace": "myapp"})
    monkeypatch.setenv("MYAPP_NAMESPACE", "myapp-system")  # install/ sets it to the pod's namespace
    assert "platform's own" in refused(user, {"name": unique("p"), "namespace": "myapp-system"})["reason"]


def test_ordinary_namespaces_are_accepted(user):
    namespace = unique("kubeflow-user")  # Kubeflow's per-user profile namespaces are fine
    project = created(user.post("/api/v1/project/", json={"name": unique("p"), "namespace": namespace}))
    assert project["namespace"] == namespace


def test_a_row_written_around_the_api_does_not_render(app, user, catalog):
    from myapp.extensions import db
    from myapp.models import Project, Task
    from myapp.pipelines.manifests import render_task

    project = created(user.post("/api/v1/project/", json={"name": unique("p")}))
    pipeline = created(user.post("/api/v1/pipeline/", json={"project_id": project["id"], "name": "p"}))
    task = created(user.post("/api/v1/task/", json={"pipeline_id": pipeline["id"], "name": "t",
                                                    "template_id": catalog}))
    with app.app_context():
        row = db.session.get(Task, task["id"])
        assert render_task(row, 1)[0]["metadata"]["namespace"] == project["namespace"]
        db.session.get(Project, project["id"]).namespace = "kube-system"
        db.session.flush()
        with pytest.raises(ContextError) as info:
            render_task(row, 1)
        db.session.rollback()
    assert info.value.field == "namespace" and "'kube-system'" in info.value.reason
