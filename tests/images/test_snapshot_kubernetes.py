"""A snapshot build of a notebook on Kubernetes: the worker asks the running notebook's own kernel for its
packages through the notebook's sidecar (a stand-in for Envoy asking the platform's ext-authz check, with
the worker's credential), then builds a Kaniko Job FROM the notebook's image plus those packages; a
notebook that does not answer fails the build with that reason, in bounded time."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.k8s_double import make_pod, terminated_state
from tests.notebooks import mesh
from tests.support import free_port, unique, wait_until, wsgi_server
from tests.world import created

pytestmark = pytest.mark.slow  # JupyterLab starts: a few seconds

TOKEN = "jupyter-token-of-the-notebook"
ONLY_IN_THE_NOTEBOOK = ("snapshot-only-pkg", "1.2.3")
JUPYTER_CONFIG = Path(__file__).resolve().parents[2] / "job-templates" / "notebook" / "jupyter_server_config.py"


@pytest.fixture()
def web(app) -> Iterator[str]:
    """The platform over real HTTP, as Envoy reaches its ext-authz check."""
    with wsgi_server(app) as url:
        yield url


@pytest.fixture()
def world(app, admin, user, catalog, kubernetes_group):
    image = created(admin.post("/api/v1/image/", json={"repository": "registry.example.com/nb/lab",
                                                       "tag": unique("v")}))
    project = created(user.post("/api/v1/project/", json={"name": unique("snapk")}))
    nb = created(user.post("/api/v1/notebook/", json={"project_id": project["id"], "name": "snap",
                                                       "image": f"{image['repository']}:{image['tag']}"}))
    return {"project": project, "notebook": nb, "group": kubernetes_group,
            "image": f"{image['repository']}:{image['tag']}"}


def serving_on_kubernetes(app, world, upstream: str) -> None:
    """What the notebook's reconcile leaves once its pod answers: running on the group, its sealed token,
    its Service as upstream (here the sidecar stand-in)."""
    from myapp.extensions import db
    from myapp.models import Notebook, NotebookState
    from myapp.notebooks.states import seal_token

    with app.app_context():
        row = db.session.get(Notebook, world["notebook"]["id"])
        row.resource_group_id, row.state, row.reason = world["group"], NotebookState.RUNNING, None
        row.job = {"ref": None, "token": seal_token(TOKEN)}
        row.upstream = upstream
        db.session.commit()


@pytest.fixture()
def jupyter(world, tmp_path: Path) -> Iterator[str]:
    """JupyterLab standing in for the notebook's pod: its token, its prefix, and one package (a bare
    dist-info on its PYTHONPATH) that only its kernels see, not the worker."""
    site = tmp_path / "site"
    dist = site / f"{ONLY_IN_THE_NOTEBOOK[0].replace('-', '_')}-{ONLY_IN_THE_NOTEBOOK[1]}.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {ONLY_IN_THE_NOTEBOOK[0]}\n"
                                   f"Version: {ONLY_IN_THE_NOTEBOOK[1]}\n")
    home = tmp_path / "home"
    home.mkdir()
    port = free_port()
    prefix = f"/notebook/{world['project']['name']}/snap/"
    private = tmp_path / "jupyter"  # what start.sh does with the pod's emptyDir, with the image's settings
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(site), "JUPYTER_CONFIG_DIR": str(private / "config"),
           "JUPYTER_DATA_DIR": str(private / "data"), "JUPYTER_RUNTIME_DIR": str(private / "runtime"),
           "NB_HOST": f"snap.{world['project']['name']}.localhost"}
    proc = subprocess.Popen([sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
                             f"--ServerApp.token={TOKEN}", "--ServerApp.password=", f"--ServerApp.base_url={prefix}",
                             f"--ServerApp.root_dir={home}", "--allow-root", f"--config={JUPYTER_CONFIG}"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"

    def answers() -> bool:
        try:
            return requests.get(f"{base}{prefix}api", timeout=2).status_code == 200
        except requests.RequestException:
            return False

    try:
        wait_until(answers, what="JupyterLab answering", timeout=60)
        yield base
    finally:
        proc.terminate()
        proc.wait(20)


def kubelet_running_the_build(double, namespace: str, build_id: int):
    seen = []

    def kubelet(_seconds):
        job = double.get("batch/v1", "Job", namespace, f"image-build-build-{build_id}-1")
        seen.append(job)
        pod = f"{job['metadata']['name']}-x1"
        manifest = make_pod(namespace, pod, job["spec"]["template"]["metadata"]["labels"], containers=("push",),
                            phase="Succeeded")
        manifest["status"]["containerStatuses"][0]["state"] = terminated_state(0)
        double.put(manifest)
        double.set_status("batch/v1", "Job", namespace, job["metadata"]["name"], {
            "succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]})

    return kubelet, seen


def ask_snapshot(user, world) -> dict:
    return created(user.post("/api/v1/image_build/", json={
        "project_id": world["project"]["id"], "repository": "registry.example.com/nb/snap", "tag": unique("s"),
        "notebook_id": world["notebook"]["id"], "resource_group_id": world["group"]}))


def test_a_snapshot_on_kubernetes_builds_from_the_running_notebooks_packages(app, user, double, world, web,
                                                                             jupyter):
    from importlib.metadata import version

    from myapp.images.drive import drive

    with mesh.serving(web, jupyter) as sidecar:
        # The sidecar lets nobody in without the check: no cookie, no credential, the token alone is not enough.
        prefix = f"{sidecar}/notebook/{world['project']['name']}/snap/"
        serving_on_kubernetes(app, world, sidecar)
        assert requests.get(f"{prefix}api/kernels", headers={"Authorization": f"token {TOKEN}"},
                            timeout=10).status_code in (401, 404)  # 404: the sidecar's address is no notebook's
        build = ask_snapshot(user, world)
        kubelet, jobs = kubelet_running_the_build(double, world["project"]["namespace"], build["id"])
        with app.app_context():
            assert drive(build["id"], poll_seconds=0.01, sleep=kubelet) == "succeeded"
        # Idle culling's activity poll gets past the sidecar the same way (a member's cookie it has not).
        from myapp.notebooks.activity import fetcher, last_activity

        with app.app_context():
            _latest, busy = last_activity(sidecar, f"/notebook/{world['project']['name']}/snap/", TOKEN,
                                          fetcher(world["project"]["name"], "snap"))
        assert busy is False
        kernels = requests.get(f"{jupyter}/notebook/{world['project']['name']}/snap/api/kernels",
                               headers={"Authorization": f"token {TOKEN}"}, timeout=10).json()
    assert kernels == []  # the kernel the worker started is gone
    done = user.get(f"/api/v1/image_build/{build['id']}").get_json()
    assert done["state"] == "succeeded", done
    assert done["base_image"] == world["image"]
    assert "==".join(ONLY_IN_THE_NOTEBOOK) in done["packages"]  # the notebook's kernel's, not the worker's
    assert f"jupyterlab=={version('jupyterlab')}" in done["packages"]
    assert not any(p.startswith(("pip==", "setuptools==")) for p in done["packages"])
    prepare = jobs[0]["spec"]["template"]["spec"]["initContainers"][0]
    dockerfile = prepare["args"][prepare["args"].index("--dockerfile") + 1]
    assert dockerfile.startswith(f"FROM {world['image']}\nRUN pip install --no-cache-dir ")
    assert "==".join(ONLY_IN_THE_NOTEBOOK) in dockerfile
    log = [i["line"] for i in user.get(f"/api/v1/image_build/{build['id']}/log").get_json()["items"]]
    assert log[0] == f"snapshot of notebook snap ({world['image']}): {len(done['packages'])} package(s)", log


def test_a_notebook_that_does_not_answer_fails_the_snapshot_in_bounded_time(app, user, double, world,
                                                                              monkeypatch):
    from myapp.images.drive import drive

    silent = socket.socket()  # accepts connections, never answers
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    app.config["MYAPP_NOTEBOOK_SNAPSHOT_TIMEOUT"] = 1
    try:
        serving_on_kubernetes(app, world, f"http://127.0.0.1:{silent.getsockname()[1]}")
        build = ask_snapshot(user, world)
        with app.app_context():
            assert drive(build["id"], poll_seconds=0.01, sleep=lambda _s: None) == "failed"
    finally:
        app.config.pop("MYAPP_NOTEBOOK_SNAPSHOT_TIMEOUT")
        silent.close()
    done = user.get(f"/api/v1/image_build/{build['id']}").get_json()
    assert done["reason"] == "cannot read the packages of notebook snap: the notebook did not answer within 1 s"
    assert double.get("batch/v1", "Job", world["project"]["namespace"], f"image-build-build-{build['id']}-1") is None

    # A notebook that is not running cannot be snapshot: said so, nothing submitted.
    from myapp.extensions import db
    from myapp.models import Notebook, NotebookState

    with app.app_context():
        db.session.get(Notebook, world["notebook"]["id"]).state = NotebookState.STOPPED
        db.session.commit()
    again = ask_snapshot(user, world)
    with app.app_context():
        assert drive(again["id"], poll_seconds=0.01, sleep=lambda _s: None) == "failed"
    reason = user.get(f"/api/v1/image_build/{again['id']}").get_json()["reason"]
    assert reason.startswith("the notebook must be running to snapshot it (notebook snap is stopped"), reason
