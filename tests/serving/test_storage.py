"""Model versions stored outside the platform (s3://, gs://, pvc://, https://): checked at registration
(400 naming ``uri``), refused for a service that runs locally (nothing fetches them there), and on plain
Deployments fetched by an init container into an emptyDir (S3 credentials from the project's Secret, never
in the manifest) or mounted from the claim; each rendering validated like any manifest."""
from __future__ import annotations

import pytest

from myapp.serving import manifests, storage
from tests.support import unique
from tests.world import created, data_file

SERVICE = manifests.ServiceSpec(id=7, name="digits", project="demo", namespace="demo-ns", service_account="demo-sa")


def errors(resp) -> dict[str, str]:
    return {e["field"]: e["reason"] for e in resp.get_json().get("errors", [])}


@pytest.mark.parametrize("uri, reason", [
    ("ftp://host/model.joblib", "ftp:// is not supported"),
    ("http://host/model.joblib", "http:// is not supported"),
    ("s3://models/", "must name one file"),
    ("s3://models/a/../b.joblib", "must name one file"),
    ("gs://Bad_Bucket/model.joblib", "not a bucket name"),
    ("pvc://Not_A_Claim/model.joblib", "not a claim name"),
    ("https://user@host/model.joblib", "without credentials"),
])
def test_registration_refuses_an_unsupported_or_malformed_uri(app, user, uri, reason):
    project = created(user.post("/api/v1/project/", json={"name": unique("storage-bad")}))
    resp = user.post("/api/v1/model_version/", json={"project_id": project["id"], "name": "m", "uri": uri})
    assert resp.status_code == 400 and reason in errors(resp)["uri"]
    assert user.get(f"/api/v1/model_version/?project_id={project['id']}").get_json()["count"] == 0


def test_a_local_service_refuses_a_remote_version_naming_uri(app, user):
    project = created(user.post("/api/v1/project/", json={"name": unique("storage-local")}))
    local = created(user.post("/api/v1/model_version/", json={"project_id": project["id"], "name": "m",
                                                              "uri": data_file(app, project["id"])}))
    remote = created(user.post("/api/v1/model_version/", json={
        "project_id": project["id"], "name": "m", "uri": "https://models.example.com/m.joblib"}))
    resp = user.post("/api/v1/inference_service/", json={
        "project_id": project["id"], "name": "svc", "model_version_id": remote["id"]})
    assert resp.status_code == 400 and "runs locally" in errors(resp)["uri"]
    service = created(user.post("/api/v1/inference_service/", json={
        "project_id": project["id"], "name": "svc", "model_version_id": local["id"]}))
    path = f"/api/v1/inference_service/{service['id']}"
    for resp in (user.post(f"{path}/canary", json={"version_id": remote["id"], "weight": 30}),
                 user.put(path, json={"shadow_version_id": remote["id"]})):
        assert resp.status_code == 400 and "https://" in errors(resp)["uri"]
    after = user.get(path).get_json()
    assert after["traffic"] == {str(local["id"]): 100} and after["shadow_version_id"] is None


def _pod(objs: list[dict]) -> dict:
    (deployment,) = [o for o in objs if o["kind"] == "Deployment"]
    return deployment["spec"]["template"]["spec"]


def _version(uri: str) -> manifests.VersionSpec:
    return manifests.VersionSpec(id=1, version=1, framework="sklearn", uri=uri)


def test_deployments_fetch_s3_with_the_project_s_secret_never_clear_credentials(app, monkeypatch):
    monkeypatch.setenv("MYAPP_OUTPUTS_S3_BUCKET", "platform")
    monkeypatch.setenv("MYAPP_OUTPUTS_S3_URL", "http://minio.storage:9000")
    monkeypatch.setenv("MYAPP_OUTPUTS_S3_ACCESS_KEY_ID", "platform-key-id")
    monkeypatch.setenv("MYAPP_OUTPUTS_S3_SECRET_ACCESS_KEY", "platform-secret-value")
    with app.app_context():
        objs = manifests.model_server(SERVICE, _version("s3://models/digits/model.joblib"))
    pod = _pod(objs)
    (init,) = pod["initContainers"]
    env = {e["name"]: e for e in init["env"]}
    assert env["MODEL_URI"]["value"] == "s3://models/digits/model.joblib"
    assert env["MODEL_DEST"]["value"] == "/mnt/models/model.joblib"
    assert env["AWS_ENDPOINT_URL"]["value"] == "http://minio.storage:9000"
    assert env["AWS_SECRET_ACCESS_KEY"]["valueFrom"]["secretKeyRef"] == {"name": "myapp-outputs-s3",
                                                                         "key": "AWS_SECRET_ACCESS_KEY"}
    assert "platform-secret-value" not in repr(objs) and "platform-key-id" not in repr(objs)
    assert init["command"] == ["sh", "-c", storage.SCRIPTS["s3"]]  # the uri only as data
    assert {"name": storage.VOLUME, "emptyDir": {}} in pod["volumes"]
    (server,) = pod["containers"]
    assert server["args"][server["args"].index("--model-path") + 1] == "/mnt/models/model.joblib"
    assert {"name": storage.VOLUME, "mountPath": "/mnt/models", "readOnly": True} in server["volumeMounts"]
    assert init["securityContext"] == server["securityContext"]


def test_deployments_fetch_https_with_the_server_image_and_mount_a_claim_read_only(app):
    with app.app_context():
        pod = _pod(manifests.model_server(SERVICE, _version("https://models.example.com/v1/model.onnx")))
        (init,) = pod["initContainers"]
        assert init["image"] == pod["containers"][0]["image"] and init["command"][:2] == ["python", "-c"]
        assert {e["name"]: e.get("value") for e in init["env"]}["MODEL_URI"] == "https://models.example.com/v1/model.onnx"

        pod = _pod(manifests.model_server(SERVICE, _version("pvc://team-models/digits/v1/model.joblib")))
    assert "initContainers" not in pod
    assert {"name": storage.VOLUME, "persistentVolumeClaim": {"claimName": "team-models", "readOnly": True}} \
        in pod["volumes"]
    assert {"name": storage.VOLUME, "mountPath": "/mnt/models", "readOnly": True, "subPath": "digits/v1"} \
        in pod["containers"][0]["volumeMounts"]


def test_kserve_hands_the_uri_to_its_storage_initializer(app):
    with app.app_context():
        (isvc,) = manifests.kserve(SERVICE, _version("gs://models-bucket/digits/model.joblib"))
        (local,) = manifests.kserve(SERVICE, _version("/models/digits.joblib"))
    assert isvc["spec"]["predictor"]["storageUris"] == [{"uri": "gs://models-bucket/digits/model.joblib",
                                                        "mountPath": "/mnt/models"}]
    assert "initContainers" not in isvc["spec"]["predictor"]
    assert "storageUris" not in local["spec"]["predictor"]
