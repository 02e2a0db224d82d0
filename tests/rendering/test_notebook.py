"""The notebook's Kubernetes objects: strict-valid, reachable only through the platform's member check on a
host of its own, JupyterLab never open (a token from a Secret, no cross-origin access, XSRF kept for browsers,
its own folders out of the work folder), a work folder per notebook."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest

from myapp.rendering import render, validate_manifest, validate_manifests
from myapp.rendering.errors import ContextError, ManifestError
from myapp.rendering.kinds.notebook import settings, token_secret_name, url_prefix, work_claim_name
from myapp.rendering.security import RESTRICTED_CONTAINER
from tests.rendering.support import GANG_CTX, PLAIN_CTX, catalog

START_SCRIPT = Path(__file__).resolve().parents[2] / "job-templates" / "notebook" / "start.sh"


def objects(**args) -> dict[str, dict]:
    """By kind; the project's outputs claim (myapp/outputs/declarations.py) apart, as "OutputsClaim"."""
    manifests = render(catalog()["notebook"], {"name": "nb1", **args}, PLAIN_CTX)
    return {("OutputsClaim" if m["metadata"]["name"] == "myapp-outputs" else m["kind"]): m for m in manifests}


def container(notebook: dict) -> dict:
    return notebook["spec"]["template"]["spec"]["containers"][0]


def test_five_objects_in_order_all_strict_valid():
    manifests = render(catalog()["notebook"], {"name": "nb1", "volume_claim": "shared"}, GANG_CTX, {"gpu": 1})
    assert [(m["kind"], m["metadata"]["name"]) for m in manifests] == [
        ("AuthorizationPolicy", "notebook-nb1"), ("Notebook", "nb1"), ("PersistentVolumeClaim", "nb1-work"),
        ("Service", "nb1"), ("VirtualService", "notebook-nb1"), ("PersistentVolumeClaim", "myapp-outputs")]
    validate_manifests(manifests)  # render did too; the set is what the backend submits
    assert {m["metadata"]["namespace"] for m in manifests} == {"proj-vision"}
    assert all(m["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "myapp" for m in manifests)
    assert all(m["kind"] != "PodGroup" for m in manifests)  # never ganged


def test_only_members_reach_it_the_policy_asks_the_platform_about_every_request():
    policy = objects()["AuthorizationPolicy"]
    assert policy["apiVersion"] == "security.istio.io/v1"
    assert policy["spec"] == {"selector": {"matchLabels": {"statefulset": "nb1"}}, "action": "CUSTOM",
                              "provider": {"name": "myapp-notebook-authz"}, "rules": [{}]}


def test_route_on_the_platform_gateway_for_the_notebooks_own_host(monkeypatch):
    monkeypatch.setenv("MYAPP_NOTEBOOK_DOMAIN", "notebooks.example.com")
    found = objects()
    assert url_prefix("vision", "nb1") == "/notebook/vision/nb1/"
    route = found["VirtualService"]["spec"]
    # One host per notebook, never "*": a page of one notebook is another origin than every other's.
    assert route["gateways"] == ["kubeflow/kubeflow-gateway"] and route["hosts"] == ["nb1.vision.notebooks.example.com"]
    pod = {"host": "nb1.proj-vision.svc.cluster.local", "port": {"number": 80}}
    by_name = {r["name"]: r for r in route["http"]}
    assert by_name["notebook"]["match"] == [{"uri": {"prefix": "/notebook/vision/nb1/"}}]
    assert by_name["notebook"]["route"][0]["destination"] == pod
    assert "timeout" not in by_name["notebook"]  # it would cut kernels' and terminals' websockets
    # The platform's one-time code goes to the pod, whose ext-authz check redeems it; the root to JupyterLab.
    assert by_name["handoff"]["match"] == [{"uri": {"exact": "/_myapp/handoff"}}]
    assert by_name["handoff"]["route"][0]["destination"] == pod
    assert by_name["root"] == {"name": "root", "match": [{"uri": {"exact": "/"}}],
                               "redirect": {"uri": "/notebook/vision/nb1/lab"}}
    assert found["Service"]["spec"]["selector"] == {"statefulset": "nb1"}
    env = {e["name"]: e for e in container(found["Notebook"])["env"]}
    assert env["NB_PREFIX"]["value"] == "/notebook/vision/nb1"
    assert env["NB_HOST"]["value"] == "nb1.vision.notebooks.example.com"  # Jupyter's own origin check
    monkeypatch.delenv("MYAPP_NOTEBOOK_DOMAIN")
    assert objects()["VirtualService"]["spec"]["hosts"] == ["nb1.vision.localhost"]


def test_jupyter_token_from_the_notebooks_own_secret():
    env = {e["name"]: e for e in container(objects()["Notebook"])["env"]}
    assert env["JUPYTER_TOKEN"] == {"name": "JUPYTER_TOKEN", "valueFrom": {"secretKeyRef": {
        "name": token_secret_name("nb1"), "key": "token"}}}
    assert token_secret_name("nb1") == "nb1-jupyter-token"


@pytest.mark.parametrize(("change", "path", "words"), [
    (lambda c: c.__setitem__("env", [e for e in c["env"] if e["name"] != "JUPYTER_TOKEN"]), "env", "JUPYTER_TOKEN"),
    (lambda c: c["env"].append({"name": "JUPYTER_TOKEN", "value": "x"}), "env", "JUPYTER_TOKEN"),
    (lambda c: c.__setitem__("args", ["--ServerApp.token="]), "args[0]", "empty token"),
    (lambda c: c.__setitem__("args", ["--ServerApp.token=''"]), "args[0]", "empty token"),
    (lambda c: c.__setitem__("args", ["--ServerApp.allow_origin='*'"]), "args[0]", "any origin"),
    (lambda c: c.__setitem__("command", ["jupyter", "lab", "--NotebookApp.allow_origin=*"]), "command[2]",
     "any origin"),
    (lambda c: c.__setitem__("args", ["--ServerApp.allow_origin_pat=.*"]), "args[0]", "any origin"),
])
def test_an_open_jupyter_is_refused(change, path, words):
    notebook = copy.deepcopy(objects()["Notebook"])
    change(container(notebook))
    with pytest.raises(ManifestError) as info:
        validate_manifest(notebook)
    assert info.value.path == f"spec.template.spec.containers[0].{path}" and words in info.value.reason


def test_the_image_start_script_sets_no_empty_token_and_no_origin():
    script = START_SCRIPT.read_text()
    assert "allow_origin" not in script and "token=''" not in script and "token=\"\"" not in script
    assert 'if [ -z "${JUPYTER_TOKEN:-}" ]' in script  # refuses to start without one
    # Jupyter's own folders (its cookie secret, runtime files, config) in the pod's emptyDir, not the work
    # folder; the platform's settings (XSRF kept for browser requests) from the image.
    for variable in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR"):
        assert f'{variable}="$private/' in script
    assert "--config=" in script and "PYTHONNOUSERSITE=1" in script
    dockerfile = (START_SCRIPT.parent / "Dockerfile").read_text()
    assert "jupyter_server_config.py /usr/local/etc/myapp/jupyter_server_config.py" in dockerfile


def test_ext_authz_policy_rules_of_istio():
    policy = copy.deepcopy(objects()["AuthorizationPolicy"])
    del policy["spec"]["provider"]
    with pytest.raises(ManifestError, match="provider"):
        validate_manifest(policy)
    policy = copy.deepcopy(objects()["AuthorizationPolicy"])
    policy["spec"]["action"] = "ALLOW"
    with pytest.raises(ManifestError, match="only a CUSTOM action takes a provider"):
        validate_manifest(policy)
    policy = copy.deepcopy(objects()["AuthorizationPolicy"])
    policy["spec"]["provider"]["url"] = "http://elsewhere"  # strict schema: no such field
    with pytest.raises(ManifestError, match="url"):
        validate_manifest(policy)


def test_work_folder_claim_mounted_as_home_and_writable_by_the_jupyter_group():
    found = objects(volume_claim="shared")
    claim = found["PersistentVolumeClaim"]
    assert claim["metadata"]["name"] == work_claim_name("nb1") == "nb1-work"
    assert claim["spec"] == {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}}
    pod = found["Notebook"]["spec"]["template"]["spec"]
    assert container(found["Notebook"])["volumeMounts"] == [{"name": "work", "mountPath": "/home/jovyan"},
                                                            {"name": "jupyter", "mountPath": "/myapp/jupyter"},
                                                            {"name": "volume", "mountPath": "/home/jovyan/volume"},
                                                            {"name": "myapp-outputs", "mountPath": "/myapp/outputs",
                                                             "readOnly": True}]
    assert pod["volumes"] == [{"name": "work", "persistentVolumeClaim": {"claimName": "nb1-work"}},
                              {"name": "jupyter", "emptyDir": {}},  # Jupyter's own folders: the pod's alone
                              {"name": "volume", "persistentVolumeClaim": {"claimName": "shared"}},
                              {"name": "myapp-outputs",
                               "persistentVolumeClaim": {"claimName": "myapp-outputs", "readOnly": True}}]
    # The project's task outputs, where tasks see them, read-only (the claim itself: the tasks' own).
    assert found["OutputsClaim"]["spec"]["accessModes"] == ["ReadWriteMany"]
    assert pod["securityContext"] == {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"},
                                      "fsGroup": 100}
    assert pod["automountServiceAccountToken"] is False
    assert {k: container(found["Notebook"])["securityContext"][k] for k in RESTRICTED_CONTAINER} == RESTRICTED_CONTAINER


def test_cluster_settings_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("MYAPP_NOTEBOOK_STORAGE_CLASS", "fast-ssd")
    monkeypatch.setenv("MYAPP_NOTEBOOK_VOLUME_SIZE", "50Gi")
    monkeypatch.setenv("MYAPP_NOTEBOOK_GATEWAY", "myapp-system/myapp-gateway")
    monkeypatch.setenv("MYAPP_NOTEBOOK_AUTHZ_PROVIDER", "team-authz")
    found = objects()
    assert found["PersistentVolumeClaim"]["spec"]["storageClassName"] == "fast-ssd"
    assert found["PersistentVolumeClaim"]["spec"]["resources"]["requests"]["storage"] == "50Gi"
    assert found["VirtualService"]["spec"]["gateways"] == ["myapp-system/myapp-gateway"]
    assert found["AuthorizationPolicy"]["spec"]["provider"] == {"name": "team-authz"}


@pytest.mark.parametrize(("variable", "value"), [
    ("MYAPP_NOTEBOOK_STORAGE_CLASS", "Fast SSD"), ("MYAPP_NOTEBOOK_VOLUME_SIZE", "lots"),
    ("MYAPP_NOTEBOOK_VOLUME_SIZE", "0"), ("MYAPP_NOTEBOOK_GATEWAY", "a/b/c"),
    ("MYAPP_NOTEBOOK_AUTHZ_PROVIDER", "not a name"), ("MYAPP_NOTEBOOK_DOMAIN", "*.example.com"),
    ("MYAPP_NOTEBOOK_DOMAIN", "example.com:8443"),
])
def test_a_bad_setting_is_named(monkeypatch, variable, value):
    monkeypatch.setenv(variable, value)
    with pytest.raises(ContextError) as info:
        settings()
    assert info.value.field == variable
