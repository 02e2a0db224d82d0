"""A model a task wrote to its outputs, served as it is: registered by the path jobs see
(/myapp/outputs/<run>/<task>/<attempt>/<file>, only for a run of the same project), read by a real
sandboxed model server that gets that one attempt's folder read-only, and nothing else of the volume."""
from __future__ import annotations

import json
import shutil

import pytest

from myapp.backends.archive import FileLogArchive
from tests.backends.local.support import Backends
from tests.pipelines.support import make_pipeline
from tests.serving.support import DIGITS_SIGNATURE, digits_models
from tests.serving.test_lifecycle import row, settle
from tests.support import unique
from tests.world import created

pytestmark = pytest.mark.slow  # a real model server and router (about 10 s)


def test_a_model_in_a_tasks_outputs_is_registered_and_served(app, make_user, tmp_path):
    from myapp.extensions import db
    from myapp.models import Project
    from myapp.serving.controller import ServingController

    backends = Backends(tmp_path / "work")
    backend = backends()
    owner = make_user()
    project = created(owner.post("/api/v1/project/", json={"name": unique("srv")}))
    other = created(owner.post("/api/v1/project/", json={"name": unique("srv")}))
    with app.app_context():
        namespace = db.session.get(Project, project["id"]).namespace
    run_id, _ = make_pipeline(app, None, {}, [], project_id=project["id"])
    other_run, _ = make_pipeline(app, None, {}, [], project_id=other["id"])
    root = backend.outputs_dir(namespace)
    attempt = root / str(run_id) / "train" / "1"
    attempt.mkdir(parents=True)
    model, _second, images, labels = digits_models(attempt)
    (root / str(run_id) / "other" / "1").mkdir(parents=True)
    (root / str(run_id) / "other" / "1" / "secret.txt").write_text("not for the server")
    for made in [root, *root.rglob("*")]:  # as the project's uid would own them: readable in any sandbox mode
        made.chmod(0o755 if made.is_dir() else 0o644)
    uri = f"/myapp/outputs/{run_id}/train/1/{model.name}"

    def register(path: str, project_id: int = project["id"]):
        return owner.post("/api/v1/model_version/", json={
            "project_id": project_id, "name": "digits", "uri": path, "framework": "sklearn",
            "signature": DIGITS_SIGNATURE})

    # Registration: a run of this project, a well-formed path; else 400 naming uri, nothing stored.
    for bad in (f"/myapp/outputs/{other_run}/train/1/{model.name}", f"/myapp/outputs/{run_id}/train/{model.name}",
                f"/myapp/outputs/{run_id}/train/1/../../x", f"/myapp/outputs/{run_id}/Train/1/m.joblib",
                "/myapp/outputs"):
        refused = register(bad)
        assert refused.status_code == 400 and refused.get_json()["errors"][0]["field"] == "uri", (bad, refused.json)
    assert owner.get(f"/api/v1/model_version/?project_id={project['id']}").get_json()["count"] == 0
    version = created(register(uri))
    service = created(owner.post("/api/v1/inference_service/", json={
        "project_id": project["id"], "name": "digits", "model_version_id": version["id"]}))
    try:
        settle(app, ServingController(lambda _s: backend, app.config["SECRET_KEY"],
                                      FileLogArchive(tmp_path / "logs")), service["id"])
        assert row(app, service["id"]).state.value == "running"
        answer = owner.post(f"/serving/{project['name']}/digits/predict", json={"instances": images[:5]})
        assert answer.status_code == 200, answer.get_data(as_text=True)
        predictions = answer.get_json()["predictions"]
        assert sum(p == label for p, label in zip(predictions, labels[:5], strict=True)) >= 4, predictions
        # The server's sandbox shows that attempt's folder, read-only, and nothing else of the volume.
        (spec,) = [json.loads(p.read_text()) for p in backend.workdir.glob(f"{namespace}/*/.myapp/spec.json")
                   if f"/myapp/outputs/{run_id}/train/1" in p.read_text()]
        args = spec["sandbox"]["args"]
        binds = [args[i:i + 3] for i, a in enumerate(args) if a in ("--bind", "--ro-bind")]
        outputs = [b for b in binds if b[2].startswith("/myapp/outputs")]
        assert outputs == [["--ro-bind", str(attempt), f"/myapp/outputs/{run_id}/train/1"]], outputs
    finally:
        backends.stop_all()
        shutil.rmtree(tmp_path / "work", ignore_errors=True)
