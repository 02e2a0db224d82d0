"""The serving controller with the real local backend (sandboxed processes): a service comes up behind
its router and answers on /serving/<project>/<service>/, a canary takes its share, promote retires
the old server, a fresh worker re-adopts everything, a job submitted by a worker that died before its
commit is found and stopped, and a delete leaves no process behind."""
from __future__ import annotations

import collections
import os
import shutil
from pathlib import Path

import pytest
import sqlalchemy as sa

from myapp.backends import BackendError, JobRef, JobState
from myapp.backends.archive import FileLogArchive
from tests.backends.local.support import Backends
from tests.serving.support import DIGITS_SIGNATURE, digits_models
from tests.support import unique, wait_until
from tests.world import created

pytestmark = pytest.mark.slow  # starts real model servers and routers (about 20 s)


@pytest.fixture()
def setup(app, make_user, tmp_path, monkeypatch):
    from myapp.extensions import db
    from myapp.models import Project
    from myapp.serving import local_uri
    from myapp.serving.controller import ServingController

    backends = Backends(tmp_path / "work")
    backend = backends()
    # The platform's local backend works in local_workdir(); this test's in its own folder, whose data
    # folders are then where a version's local uri may point.
    monkeypatch.setattr(local_uri, "local_workdir", lambda: tmp_path / "work")
    owner = make_user()
    project = created(owner.post("/api/v1/project/", json={"name": unique("srv")}))
    with app.app_context():
        namespace = db.session.get(Project, project["id"]).namespace
    data = backend.data_dir(namespace)
    data.mkdir(parents=True, exist_ok=True)
    first, second, images, _labels = digits_models(data)
    versions = [created(owner.post("/api/v1/model_version/", json={
        "project_id": project["id"], "name": "digits", "uri": str(path), "framework": "sklearn",
        "signature": DIGITS_SIGNATURE}))["id"] for path in (first, second)]
    service = created(owner.post("/api/v1/inference_service/", json={
        "project_id": project["id"], "name": "digits", "model_version_id": versions[0]}))

    def controller(on=backend):
        return ServingController(lambda _service: on, app.config["SECRET_KEY"], FileLogArchive(tmp_path / "logs"))

    try:
        yield {"owner": owner, "project": project, "versions": versions, "service": service, "images": images,
               "backend": backend, "backends": backends, "controller": controller}
    finally:
        backends.stop_all()
        shutil.rmtree(tmp_path / "work", ignore_errors=True)


def settle(app, controller, service_id: int, timeout: float = 90) -> None:
    def done() -> bool:
        with app.app_context():
            return controller.reconcile(service_id)
    wait_until(done, what=lambda: f"service {service_id} to settle: {row(app, service_id)}", timeout=timeout,
               interval=0.2)


def row(app, service_id: int):
    from myapp.extensions import db
    from myapp.models import InferenceService

    with app.app_context():
        service = db.session.get(InferenceService, service_id)
        if service is None:
            return None
        db.session.expunge(service)
        return service


def versions_answering(owner, path: str, images: list, n: int) -> collections.Counter:
    seen: collections.Counter[str] = collections.Counter()
    for i in range(n):
        answer = owner.post(path, json={"instances": [images[i % len(images)]]})
        assert answer.status_code == 200, answer.get_data(as_text=True)
        seen[answer.headers["X-Model-Version"]] += 1
    return seen


def alive(backend, entry: dict) -> bool:
    """The job still runs; one cleaned up (its folder deleted) does not."""
    try:
        state = backend.status(JobRef.from_dict(entry)).state
    except BackendError:
        return (backend.workdir / entry["namespace"] / entry["job_name"]).exists()
    return state not in (JobState.CANCELLED, JobState.FAILED, JobState.SUCCEEDED)


def processes_of(workdir: Path) -> list[str]:
    """Every process (supervisor, sandbox, server, router) working in or started on the workdir."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cwd = os.readlink(proc / "cwd")
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if cwd.startswith(str(workdir)) or str(workdir) in cmdline:
            found.append(f"{proc.name}: {cmdline[:200]}")
    return found


def test_deploy_canary_promote_readopt_and_delete_leave_nothing_behind(app, setup):
    owner, backend, controller = setup["owner"], setup["backend"], setup["controller"]
    first, second = setup["versions"]
    service_id = setup["service"]["id"]
    path = f"/serving/{setup['project']['name']}/digits/predict"

    settle(app, controller(), service_id)
    service = row(app, service_id)
    assert service.state.value == "running" and service.reason == "" and set(service.jobs) == {"router", f"v{first}"}
    assert versions_answering(owner, path, setup["images"], 5) == {"v1": 5}
    bad = owner.post(path, json={"instances": [[1, 2]]})
    assert bad.status_code == 400 and bad.get_json()["errors"][0]["field"] == "instances[0]"
    nested = owner.post(path, data=b'{"instances": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
                        content_type="application/json")  # once a 502: the server's thread died parsing it
    assert nested.status_code == 400 and nested.get_json()["errors"] == [
        {"field": "instances", "reason": "is nested too deeply"}]

    owner.post(f"/api/v1/inference_service/{service_id}/canary", json={"version_id": second, "weight": 30})
    settle(app, controller(), service_id)
    seen = versions_answering(owner, path, setup["images"], 100)
    assert abs(seen["v2"] - 30) <= 5, seen
    figures = owner.get(f"/api/v1/inference_service/{service_id}/metrics?window=60").get_json()
    assert figures["versions"]["v2"]["requests"] == seen["v2"]
    # One in ten sampled at random (30 canary requests may have none: 4 %), so the search is checked
    # against all the samples of 105 requests.
    sampled = owner.get(f"/api/v1/inference_service/{service_id}/logs").get_json()["items"]
    found = owner.get(f"/api/v1/inference_service/{service_id}/logs?q=v2").get_json()["items"]
    assert sampled and found == [entry for entry in sampled if entry["version"] == "v2"]

    # A worker restarted on the same machine: a new backend object and controller adopt what runs.
    jobs_before = row(app, service_id).jobs
    settle(app, controller(setup["backends"]()), service_id)
    assert row(app, service_id).jobs == jobs_before

    # Router and servers started before they passed the service's token (their entries unmarked): each is
    # started again (only a submit marks an entry), and the service answers through them.
    from myapp.extensions import db
    from myapp.models import InferenceService

    with app.app_context():
        svc = db.session.get(InferenceService, service_id)
        svc.jobs = {key: {k: v for k, v in entry.items() if k != "token"} for key, entry in svc.jobs.items()}
        db.session.commit()
    settle(app, controller(), service_id)
    assert {key: entry.get("token") for key, entry in row(app, service_id).jobs.items()} == {
        "router": True, f"v{first}": True, f"v{second}": True}
    assert set(versions_answering(owner, path, setup["images"], 20)) == {"v1", "v2"}

    old = row(app, service_id).jobs[f"v{first}"]
    owner.post(f"/api/v1/inference_service/{service_id}/promote", json={})
    settle(app, controller(), service_id)
    assert set(row(app, service_id).jobs) == {"router", f"v{second}"}
    assert not alive(backend, old)
    assert versions_answering(owner, path, setup["images"], 10) == {"v2": 10}

    # A worker that died between a submit and its commit: the key says "submitting", the job runs.
    from myapp.models import ModelVersion
    from myapp.serving import manifests, specs

    with app.app_context():
        svc = db.session.get(InferenceService, service_id)
        stray = backend.submit(manifests.model_server(specs._spec(svc, svc_project(svc)),
                                                      specs._version_spec(db.session.get(ModelVersion, first))))
        svc.jobs = {**svc.jobs, f"v{first}": {"submitting": True}}
        db.session.commit()
    settle(app, controller(), service_id)
    assert not alive(backend, stray.as_dict()) and f"v{first}" not in row(app, service_id).jobs

    held = dict(row(app, service_id).jobs)
    assert owner.delete(f"/api/v1/inference_service/{service_id}").status_code == 200
    settle(app, controller(), service_id)
    assert row(app, service_id) is None
    assert not [key for key, entry in held.items() if alive(backend, entry)]
    wait_until(lambda: not processes_of(backend.workdir),
               what=lambda: f"no process left: {processes_of(backend.workdir)}", timeout=15)
    with app.app_context():
        assert db.session.scalar(sa.select(sa.func.count()).select_from(InferenceService)
                                 .where(InferenceService.id == service_id)) == 0
    assert owner.post(path, json={"instances": [setup["images"][0]]}).status_code == 404


def svc_project(svc):
    from myapp.extensions import db
    from myapp.models import Project

    return db.session.get(Project, svc.project_id)
