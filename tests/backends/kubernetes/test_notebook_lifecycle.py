"""The notebook lifecycle (myapp/notebooks/lifecycle.py) on the Kubernetes backend, against the API-server
double: the same submit / status / cancel / cleanup as locally; the token Secret and the five objects; states
from the pod (waiting, pulling, running, failed with its reason); a stop keeps the work folder and the log, a
start reuses it, a delete leaves nothing."""
from __future__ import annotations

import base64

import pytest

from myapp.backends.archive import FileLogArchive
from myapp.backends.base import JobRef
from tests.support import unique
from tests.world import created

NOTEBOOK = ("kubeflow.org/v1", "Notebook")


@pytest.fixture()
def world(app, admin, user, catalog):
    image = created(admin.post("/api/v1/image/", json={"repository": "registry.local/nb/lab", "tag": unique("v")}))
    project = created(user.post("/api/v1/project/", json={"name": unique("nbk")}))
    notebook = created(user.post("/api/v1/notebook/", json={
        "project_id": project["id"], "name": "lab", "image": f"{image['repository']}:{image['tag']}"}))
    return {"project": project, "notebook": notebook, "ns": project["namespace"]}


def reconcile(app, notebook_id, backend, tmp_path):
    from myapp.notebooks.lifecycle import Hooks
    from myapp.notebooks.lifecycle import reconcile as run

    with app.app_context():
        state = run(notebook_id, Hooks(backend_for=lambda _group: backend, archive=FileLogArchive(tmp_path),
                                       start_wait=0.2))
        return state.value if state is not None else None


def row(app, notebook_id):
    from myapp.extensions import db
    from myapp.models import Notebook
    from myapp.notebooks.states import jupyter_token

    with app.app_context():
        nb = db.session.get(Notebook, notebook_id)
        return None if nb is None else {"state": nb.state.value, "reason": nb.reason, "url": nb.url,
                                         "upstream": nb.upstream, "token": jupyter_token(nb),
                                         "stored": (nb.job or {}).get("token")}


def last_attempt(app, notebook_id) -> JobRef:
    from myapp.extensions import db
    from myapp.models import Notebook

    with app.app_context():
        return JobRef.from_dict(db.session.get(Notebook, notebook_id).job["last"])


def kinds(double, ns) -> set[str]:
    found = {kind for api, kind in [("security.istio.io/v1", "AuthorizationPolicy"), NOTEBOOK,
                                    ("v1", "Service"), ("networking.istio.io/v1", "VirtualService")]
             if double.list(api, kind, ns)}
    return found | {"PersistentVolumeClaim"} if double.get("v1", "PersistentVolumeClaim", ns, "lab-work") else found


def secret_token(double, ns) -> str | None:
    secret = double.get("v1", "Secret", ns, "lab-jupyter-token")
    return base64.b64decode(secret["data"]["token"]).decode() if secret else None


def test_a_notebook_lives_on_kubernetes(app, user, world, double, k8s_backend, tmp_path):
    nb_id, ns = world["notebook"]["id"], world["ns"]
    assert reconcile(app, nb_id, k8s_backend, tmp_path) == "pending"
    assert kinds(double, ns) == {"AuthorizationPolicy", "Notebook", "PersistentVolumeClaim", "Service",
                                 "VirtualService"}
    first = row(app, nb_id)
    assert first["reason"] == "waiting for the notebook controller"
    assert first["token"] and secret_token(double, ns) == first["token"]
    assert first["token"] not in first["stored"]  # sealed at rest
    claim_uid = double.get("v1", "PersistentVolumeClaim", ns, "lab-work")["metadata"]["uid"]

    labels = {"notebook-name": "lab", "statefulset": "lab"}
    unschedulable = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                     "message": "0/2 nodes: Insufficient cpu"}
    double.add_pod(ns, "lab-0", labels, containers=("lab",), phase="Pending", conditions=[unschedulable])
    assert reconcile(app, nb_id, k8s_backend, tmp_path) == "waiting"
    assert row(app, nb_id)["reason"] == "waiting for resources: lab-0: Unschedulable: 0/2 nodes: Insufficient cpu"
    # Scheduled, its image being pulled: "pulling", the image named.
    double.set_pod_status(ns, "lab-0", {"conditions": [{"type": "PodScheduled", "status": "True"}],
                                        "containerStatuses": [{"name": "lab", "ready": False, "imageID": "",
                                                               "restartCount": 0,
                                                               "state": {"waiting": {"reason": "ContainerCreating"}}}]})
    assert reconcile(app, nb_id, k8s_backend, tmp_path) == "pulling"
    assert row(app, nb_id)["reason"].startswith("pulling image ")

    double.set_pod_status(ns, "lab-0", {"phase": "Running", "conditions": [{"type": "PodScheduled", "status": "True"}],
                                        "containerStatuses": [{"name": "lab", "ready": True, "imageID": "sha256:1",
                                                               "restartCount": 0, "state": {"running": {}}}]})
    double.set_status(*NOTEBOOK, ns, "lab", {"readyReplicas": 1})
    assert reconcile(app, nb_id, k8s_backend, tmp_path) == "running"
    running = row(app, nb_id)
    assert running["url"] == f"/notebook/{world['project']['name']}/lab/lab"
    assert running["upstream"] == f"http://lab.{ns}.svc.cluster.local"

    double.append_log(ns, "lab-0", "[I ServerApp] Jupyter Server is running", "[I ServerApp] Kernel started")

    # Stop: the notebook and its routing go, the work folder stays, the token is gone, the log is kept.
    assert user.post(f"/api/v1/notebook/{nb_id}/stop").status_code == 200
    assert reconcile(app, nb_id, k8s_backend, tmp_path) == "stopped"
    assert kinds(double, ns) == {"PersistentVolumeClaim"} and secret_token(double, ns) is None
    assert double.get("v1", "Pod", ns, "lab-0") is None
    assert [line.line for line in FileLogArchive(tmp_path).read(last_attempt(app, nb_id))] == [
        "[I ServerApp] Jupyter Server is running", "[I ServerApp] Kernel started"]

    # Start again: the same claim, a new token; an image that cannot be pulled fails it with the pod's reason.
    assert user.post(f"/api/v1/notebook/{nb_id}/start").status_code == 200
    assert reconcile(app, nb_id, k8s_backend, tmp_path) == "pending"
    assert double.get("v1", "PersistentVolumeClaim", ns, "lab-work")["metadata"]["uid"] == claim_uid
    assert secret_token(double, ns) not in (None, first["token"])
    double.add_pod(ns, "lab-0", labels, containers=("lab",), phase="Pending", container_statuses=[
        {"name": "lab", "ready": False, "imageID": "", "restartCount": 0,
         "state": {"waiting": {"reason": "ImagePullBackOff", "message": 'Back-off pulling image "x"'}}}])
    assert reconcile(app, nb_id, k8s_backend, tmp_path) == "failed"
    assert row(app, nb_id)["reason"] == 'JupyterLab exited: ImagePullBackOff: Back-off pulling image "x"'
    assert kinds(double, ns) == {"PersistentVolumeClaim"}

    # Delete: nothing is left.
    assert user.delete(f"/api/v1/notebook/{nb_id}").status_code == 200
    assert reconcile(app, nb_id, k8s_backend, tmp_path) is None
    assert row(app, nb_id) is None and kinds(double, ns) == set() and secret_token(double, ns) is None
