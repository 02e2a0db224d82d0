"""Deleting a project takes its services' rows with it; their servers are stopped by a worker from what
was read before the delete (myapp/serving/release.py), so none is orphaned."""
from __future__ import annotations

from myapp.backends.archive import FileLogArchive
from tests.fake_backend import FakeBackend
from tests.support import unique
from tests.world import created, data_file


def test_a_deleted_projects_services_are_stopped(app, user, monkeypatch, tmp_path):
    import myapp.api.pipelines
    from myapp.extensions import db
    from myapp.models import InferenceService, ModelVersion, Project
    from myapp.serving import controller, manifests, specs

    sent: list[tuple] = []
    monkeypatch.setattr(myapp.api.pipelines, "enqueue", lambda name, *args, **_: sent.append((name, *args)))
    project = created(user.post("/api/v1/project/", json={"name": unique("gone")}))
    version = created(user.post("/api/v1/model_version/", json={"project_id": project["id"], "name": "m",
                                                                "uri": data_file(app, project["id"])}))
    service = created(user.post("/api/v1/inference_service/", json={"project_id": project["id"], "name": "svc",
                                                                     "model_version_id": version["id"]}))
    backend = FakeBackend(script={"svc-v1": ["hang"], "svc-router": ["hang"]})
    with app.app_context():  # what a worker's passes would have started
        row = db.session.get(InferenceService, service["id"])
        spec = specs._spec(row, db.session.get(Project, project["id"]))
        server = backend.submit(manifests.model_server(spec, specs._version_spec(
            db.session.get(ModelVersion, version["id"]))))
        router = backend.submit(manifests.router(spec))
        row.jobs = {f"v{version['id']}": server.as_dict(), "router": router.as_dict()}
        db.session.commit()

    assert user.delete(f"/api/v1/project/{project['id']}").status_code == 200
    (item,) = [args[0] for name, *args in sent if name == "myapp.serving_release"]
    assert item["service_id"] == service["id"] and len(item["refs"]) == 2
    controller.release(item, backend, FileLogArchive(tmp_path))
    controller.release(item, backend, FileLogArchive(tmp_path))  # a second delivery is harmless
    assert backend.cancelled == {server.job_name, router.job_name}
