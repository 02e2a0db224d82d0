"""Caps per project (myapp/projects/caps.py): objects of each kind (409 naming MYAPP_PROJECT_MAX_OBJECTS, from
every create path: the API, a YAML import, a clone), and the bytes its data and outputs folders take (new runs
409 and uploads 413 naming MYAPP_PROJECT_MAX_STORAGE_BYTES; a scheduled run is not made)."""
from __future__ import annotations

import datetime as dt
import io
import os
from pathlib import Path

import pytest
import yaml

from tests.support import unique
from tests.world import created, data_file


@pytest.fixture()
def caps(app, monkeypatch):
    from myapp.projects import caps as project_caps

    def set_caps(objects: int = 0, storage: int = 0) -> None:
        monkeypatch.setitem(app.config, "MYAPP_PROJECT_MAX_OBJECTS", objects)
        monkeypatch.setitem(app.config, "MYAPP_PROJECT_MAX_STORAGE_BYTES", storage)
        project_caps.forget()

    yield set_caps
    project_caps.forget()


def conflict_naming(answer, cap: str) -> str:
    assert answer.status_code == 409, (answer.status_code, answer.get_json())
    message = answer.get_json()["message"]
    assert cap in message and answer.get_json()["errors"][0]["field"] == "project_id", message
    return message


def pipelines(user, pid: int) -> list[str]:
    return sorted(p["name"] for p in user.get(f"/api/v1/pipeline/?project_id={pid}&page_size=100").get_json()["items"])


def test_each_kind_is_capped_per_project_on_every_create_path(caps, make_user, catalog):
    caps(objects=3)
    user, other = make_user(), make_user()
    project = created(user.post("/api/v1/project/", json={"name": unique("capped")}))
    pid = project["id"]
    first = created(user.post("/api/v1/pipeline/", json={"project_id": pid, "name": "p1"}))
    for name in ("p2", "p3"):
        created(user.post("/api/v1/pipeline/", json={"project_id": pid, "name": name}))
    message = conflict_naming(user.post("/api/v1/pipeline/", json={"project_id": pid, "name": "p4"}),
                              "MYAPP_PROJECT_MAX_OBJECTS")
    assert "holds 3 pipelines: at most 3 per project" in message
    conflict_naming(user.post(f"/api/v1/pipeline/{first['id']}/clone", json={"name": "copy"}),
                    "MYAPP_PROJECT_MAX_OBJECTS")
    doc = {"name": "imported", "project": project["name"], "tasks": [{"name": "t", "template": "python"}]}
    conflict_naming(user.post("/api/v1/pipeline/import", json={"yaml": yaml.safe_dump(doc)}),
                    "MYAPP_PROJECT_MAX_OBJECTS")
    assert pipelines(user, pid) == ["p1", "p2", "p3"]  # nothing of the refused ones
    # Tasks count on their own: four in one import are refused whole (nothing of it kept), three fit.
    user.delete(f"/api/v1/pipeline/{first['id']}")
    many = {**doc, "tasks": [{"name": f"t{i}", "template": "python"} for i in range(4)]}
    refused = user.post("/api/v1/pipeline/import", json={"yaml": yaml.safe_dump(many)})
    assert "tasks: at most 3" in conflict_naming(refused, "MYAPP_PROJECT_MAX_OBJECTS")
    many["tasks"] = many["tasks"][:3]
    assert user.post("/api/v1/pipeline/import", json={"yaml": yaml.safe_dump(many)}).status_code == 200
    # Model versions, through the API and an upload.
    for i in range(3):
        created(user.post("/api/v1/model_version/", json={"project_id": pid, "name": "m",
                                                          "uri": f"s3://models/m-{i}.joblib"}))
    conflict_naming(user.post("/api/v1/model_version/", json={"project_id": pid, "name": "m", "uri": "s3://models/x.joblib"}),
                    "MYAPP_PROJECT_MAX_OBJECTS")
    upload = user.post("/api/v1/model_version/upload", content_type="multipart/form-data", data={
        "project_id": str(pid), "name": "m", "file": (io.BytesIO(b"model"), "m.joblib")})
    conflict_naming(upload, "MYAPP_PROJECT_MAX_OBJECTS")
    # Another project's count is its own.
    theirs = created(other.post("/api/v1/project/", json={"name": unique("free")}))["id"]
    created(other.post("/api/v1/pipeline/", json={"project_id": theirs, "name": "p1"}))
    caps(objects=0)  # 0: no cap
    created(user.post("/api/v1/pipeline/", json={"project_id": pid, "name": "p9"}))


def test_over_its_storage_cap_a_project_starts_no_run_and_takes_no_upload(caps, make_user, app):
    from myapp.extensions import db
    from myapp.models import Pipeline, Project
    from myapp.pipelines.scheduling import schedule_due
    from myapp.projects import caps as project_caps

    caps(storage=64 * 1024)
    user = make_user()
    pid = created(user.post("/api/v1/project/", json={"name": unique("full")}))["id"]
    pipeline = created(user.post("/api/v1/pipeline/", json={"project_id": pid, "name": "p"}))
    form = {"project_id": str(pid), "name": "m"}
    # Under the cap: an upload larger than the room left is 413, nothing kept.
    big = user.post("/api/v1/model_version/upload", content_type="multipart/form-data",
                    data={**form, "file": (io.BytesIO(b"x" * 100 * 1024), "big.joblib")})
    assert big.status_code == 413 and big.get_json()["errors"][0]["field"] == "file"
    assert "MYAPP_PROJECT_MAX_STORAGE_BYTES" in big.get_json()["message"]
    assert created(user.post("/api/v1/pipeline_run/", json={"pipeline_id": pipeline["id"]}))
    # A job filled its data folder: over the cap (measured at the next walk).
    filler = Path(data_file(app, pid, "results/filler.bin", os.urandom(128 * 1024)))
    (filler.parent / "to-elsewhere").symlink_to("/usr", target_is_directory=True)  # a link is not walked into
    project_caps.forget()
    with app.app_context():
        namespace = db.session.get(Project, pid).namespace
        assert 128 * 1024 <= project_caps.storage_used(namespace) < 1024 * 1024
    conflict_naming(user.post("/api/v1/pipeline_run/", json={"pipeline_id": pipeline["id"]}),
                    "MYAPP_PROJECT_MAX_STORAGE_BYTES")
    small = user.post("/api/v1/model_version/upload", content_type="multipart/form-data",
                      data={**form, "file": (io.BytesIO(b"x"), "small.joblib")})
    assert small.status_code == 413 and "MYAPP_PROJECT_MAX_STORAGE_BYTES" in small.get_json()["message"]
    assert user.get(f"/api/v1/model_version/?project_id={pid}").get_json()["count"] == 0
    # The scheduler makes no run for it, and goes on with the others.
    user.put(f"/api/v1/pipeline/{pipeline['id']}", json={"schedule": "* * * * *"})
    with app.app_context():
        row = db.session.get(Pipeline, pipeline["id"])
        row.created_at = row.created_at - dt.timedelta(hours=1)
        db.session.commit()
        created_runs = schedule_due(dt.datetime.now(dt.UTC))
        assert all(db.session.get(Pipeline, pipeline["id"]).id != r for r in created_runs)
    runs = user.get(f"/api/v1/pipeline_run/?pipeline_id={pipeline['id']}").get_json()["items"]
    assert [r["trigger"] for r in runs] == ["manual"]
    # Room again: runs start.
    filler.unlink()
    project_caps.forget()
    assert user.post("/api/v1/pipeline_run/", json={"pipeline_id": pipeline["id"]}).status_code == 201
