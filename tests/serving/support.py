"""Model servers and routers as the platform runs them (job-templates/deploy-service), started as plain
processes for the tests and benchmarks/serving.py; small models to serve."""
from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.support import free_port, wait_until

TEMPLATE = Path(__file__).resolve().parents[2] / "job-templates" / "deploy-service"
DIGITS_SIGNATURE = {"shape": [None, 64], "dtype": "float32"}
SERVICE_TOKEN = "service-test-token"  # the service's token: the router's and its model servers'


def _answers(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
        return True
    return False


@contextlib.contextmanager
def process(argv: list[str], port: int, env: dict[str, str] | None = None) -> Iterator[subprocess.Popen]:
    proc = subprocess.Popen([sys.executable, *argv], env={**os.environ, **(env or {})},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_until(lambda: _answers(port) or proc.poll() is not None, what=f"{argv[0]} on port {port}", timeout=60)
        if proc.poll() is not None:
            raise AssertionError(f"{argv} exited: {proc.stderr.read().decode() if proc.stderr else ''}")
        yield proc
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@contextlib.contextmanager
def model_server(model: Path, version: str, framework: str = "sklearn",
                 signature: dict | None = None, token: str = SERVICE_TOKEN) -> Iterator[str]:
    """A model server demanding `token` (X-Router-Token) of every caller but a probe (GET /healthz)."""
    port = free_port()
    argv = [str(TEMPLATE / "main.py"), "--model-path", str(model), "--framework", framework, "--version", version,
            "--signature", json.dumps(signature if signature is not None else DIGITS_SIGNATURE), "--port", str(port)]
    with process(argv, port, {"SERVING_TOKEN": token}):
        yield f"http://127.0.0.1:{port}"


@contextlib.contextmanager
def router(token: str, config: dict | None = None) -> Iterator[str]:
    with router_process(token, config) as (url, _):
        yield url


@contextlib.contextmanager
def router_process(token: str, config: dict | None = None, script: Path = TEMPLATE / "router.py",
                   log_sample: int = 1) -> Iterator[tuple[str, subprocess.Popen]]:
    """The template's router (or another version of it: benchmarks/serving.py --against): its URL, its process.
    Tests keep every request's log line (log_sample 1); the platform keeps one in ten."""
    port = free_port()
    env = {"ROUTER_TOKEN": token, "ROUTER_CONFIG": json.dumps(config or {}), "ROUTER_LOG_SAMPLE": str(log_sample)}
    with process([str(script), "--port", str(port)], port, env) as proc:
        yield f"http://127.0.0.1:{port}", proc


class Client:
    """One kept-alive HTTP connection (what a busy caller holds)."""

    def __init__(self, url: str, headers: dict[str, str] | None = None):
        host, port = url.removeprefix("http://").split(":")
        self.conn = http.client.HTTPConnection(host, int(port), timeout=30)
        self.headers = {"Content-Type": "application/json", **(headers or {})}

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, dict[str, str], Any]:
        data = json.dumps(body).encode() if body is not None else None
        self.conn.request(method, path, body=data, headers=self.headers)
        response = self.conn.getresponse()
        raw = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, json.loads(raw) if raw else None

    def close(self) -> None:
        self.conn.close()


def digits_models(folder: Path) -> tuple[Path, Path, list[list[float]], list[int]]:
    """Two scikit-learn classifiers of the digits (joblib; quick to fit and to ask), and 20 held-out images
    with their labels."""
    import joblib
    from sklearn.datasets import load_digits
    from sklearn.linear_model import RidgeClassifier

    digits = load_digits()
    x, y = digits.data, digits.target
    first, second = folder / "v1.joblib", folder / "v2.joblib"
    joblib.dump(RidgeClassifier().fit(x[:-20], y[:-20]), first)
    joblib.dump(RidgeClassifier(alpha=100.0).fit(x[:-20], y[:-20]), second)
    return first, second, x[-20:].tolist(), y[-20:].tolist()


def kubernetes_services(app: Any, owner: Any, k8s_backend: Any, tmp_path: Path, name: str, uri: str,
                        admin: Any = None, engine: str = "deployments", **cluster: Any) -> dict[str, Any]:
    """A project of `owner` with three versions of model "digits" (`uri` formatted with 1, 2, 3; a path is
    made a file of the project's data folder) and a
    serving controller on the Kubernetes backend. With `admin`: a Kubernetes cluster of that serving
    `engine` (and `cluster`'s other fields) and a resource group on it (`group`) for the services."""
    from myapp.backends.archive import FileLogArchive
    from myapp.extensions import db
    from myapp.models import Project
    from myapp.serving.controller import ServingController
    from tests.support import unique
    from tests.world import created, data_file

    group = cluster_id = None
    if admin is not None:
        cluster_id = created(admin.post("/api/v1/cluster/", json={
            "name": unique("k8s"), "kind": "kubernetes", "in_cluster": True, "serving_engine": engine,
            **cluster}))["id"]
        group = created(admin.post("/api/v1/resource_group/", json={"name": unique("serving"),
                                                                    "cluster_id": cluster_id}))["id"]
    project = created(owner.post("/api/v1/project/", json={"name": unique(name)}))
    with app.app_context():
        namespace = db.session.get(Project, project["id"]).namespace
    if uri.partition("://")[1]:
        uris = [uri.format(i) for i in (1, 2, 3)]
    else:  # a local path: files of the project's data folder, the only local place a version may name
        uris = [data_file(app, project["id"], uri.format(i).lstrip("/")) for i in (1, 2, 3)]
    versions = [created(owner.post("/api/v1/model_version/", json={
        "project_id": project["id"], "name": "digits", "uri": u, "framework": "sklearn"}))["id"] for u in uris]
    serving = ServingController(lambda _service: k8s_backend, app.config["SECRET_KEY"],
                                FileLogArchive(tmp_path / "logs"))
    return {"owner": owner, "pid": project["id"], "namespace": namespace, "versions": versions,
            "controller": serving, "group": group, "cluster": cluster_id}
