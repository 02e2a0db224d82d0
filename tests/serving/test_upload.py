"""Uploading a model file to the registry (multipart): kept in the project's model store, registered as
the next version like the API and the CLI do; bad input names the field and keeps nothing."""
from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from tests.world import add_member, build_catalog, build_project, created

MODEL = b"\x80\x04model bytes, as joblib would write them"


@pytest.fixture()
def world(app, make_user, admin):
    owner = make_user()
    world = build_project(owner, build_catalog(admin), app)
    return {"owner": owner, "pid": world.ids["project"], "app": app}


def form(pid: int, **extra) -> dict:
    return {"project_id": str(pid), "name": "iris", "framework": "sklearn",
            "signature": json.dumps({"shape": [None, 4], "dtype": "float32"}),
            "metrics": json.dumps({"accuracy": 0.96}), "description": "uploaded",
            "file": (io.BytesIO(MODEL), "../model.joblib"), **extra}


def upload(client, data: dict):
    return client.post("/api/v1/model_version/upload", data=data, content_type="multipart/form-data")


def store_of(app) -> Path:
    return Path(app.config["INSTANCE_PATH"]) / "jobs" / "data"


def kept_files(world) -> list[Path]:
    """The files in the project's model store (the instance folder is shared by the session's tests)."""
    namespace = world["owner"].get(f"/api/v1/project/{world['pid']}").get_json()["namespace"]
    return sorted(p for p in (store_of(world["app"]) / namespace / "models").rglob("*") if p.is_file())


def errors_of(resp) -> dict[str, str]:
    return {e["field"]: e["reason"] for e in resp.get_json().get("errors", [])}


def test_an_upload_is_stored_and_registered_as_the_next_version(world):
    owner, pid, app = world["owner"], world["pid"], world["app"]
    first = upload(owner, form(pid))
    assert first.status_code == 201, first.get_json()
    v1 = first.get_json()
    assert (v1["name"], v1["version"], v1["framework"], v1["description"]) == ("iris", 1, "sklearn", "uploaded")
    assert v1["signature"] == {"shape": [None, 4], "dtype": "float32"} and v1["metrics"] == {"accuracy": 0.96}
    path = Path(v1["uri"])
    # In the project's data folder (where local model servers read), never where the file name points.
    namespace = owner.get(f"/api/v1/project/{pid}").get_json()["namespace"]
    assert path.is_relative_to(store_of(app) / namespace / "models" / "iris")
    assert path.name == "model.joblib" and path.read_bytes() == MODEL
    assert v1["files"] == [{"path": "model.joblib", "size": len(MODEL)}]
    v2 = created(upload(owner, form(pid)))
    assert v2["version"] == 2 and Path(v2["uri"]) != path and path.read_bytes() == MODEL
    assert [v["id"] for v in owner.get("/api/v1/model_version/", query_string={"name": "iris"}).get_json()["items"]] \
        == [v2["id"], v1["id"]]


@pytest.mark.parametrize(("change", "field"), [
    ({"signature": "{not json"}, "signature"),
    ({"signature": json.dumps({"shape": [], "dtype": "complex"})}, "signature.shape"),
    ({"metrics": json.dumps({"accuracy": "high"})}, "metrics.accuracy.value"),
    ({"metrics": "NaN"}, "metrics"),
    ({"framework": "cobol"}, "framework"),
    ({"name": "Not A Label"}, "name"),
    ({"project_id": "x"}, "project_id"),
    ({"colour": "blue"}, "colour"),
    ({"file": (io.BytesIO(b""), "empty.joblib")}, "file"),
])
def test_bad_input_names_the_field_and_keeps_nothing(world, change, field):
    owner, pid = world["owner"], world["pid"]
    resp = upload(owner, form(pid, **change))
    assert resp.status_code == 400, resp.get_json()
    assert field in errors_of(resp), resp.get_json()
    assert owner.get("/api/v1/model_version/", query_string={"name": "iris"}).get_json()["count"] == 0
    assert kept_files(world) == []


def test_a_missing_file_is_refused(world):
    data = form(world["pid"])
    del data["file"]
    resp = upload(world["owner"], data)
    assert resp.status_code == 400 and "file" in errors_of(resp)


def test_only_developers_of_the_project_upload(world, make_user):
    owner, pid = world["owner"], world["pid"]
    viewer, outsider = make_user(), make_user()
    add_member(owner, pid, viewer.username, "viewer")
    assert upload(viewer, form(pid)).status_code == 403
    assert upload(outsider, form(pid)).status_code == 404
    assert upload(owner, form(999_999)).status_code == 404
    assert kept_files(world) == []


def test_the_model_size_is_bounded_and_larger_than_any_json_body(world):
    owner, pid, app = world["owner"], world["pid"], world["app"]
    app.config["MYAPP_MAX_MODEL_BYTES"] = 3 * app.config["MAX_CONTENT_LENGTH"]
    big = b"x" * (2 * app.config["MAX_CONTENT_LENGTH"])
    assert created(upload(owner, form(pid, file=(io.BytesIO(big), "big.joblib"))))["files"][0]["size"] == len(big)
    too_big = b"x" * (3 * app.config["MAX_CONTENT_LENGTH"] + 1)
    assert upload(owner, form(pid, file=(io.BytesIO(too_big), "huge.joblib"))).status_code == 413
    assert len(kept_files(world)) == 1
    # Every other body keeps the small limit.
    resp = owner.post("/api/v1/model_version/", json={"project_id": pid, "name": "iris", "uri": "/m",
                                                       "description": "x" * app.config["MAX_CONTENT_LENGTH"]})
    assert resp.status_code == 413


def test_the_file_is_readable_by_the_project_s_jobs_and_never_written_through_a_link(world, tmp_path):
    owner, pid, app = world["owner"], world["pid"], world["app"]
    before = os.umask(0o077)  # as `myapp run` sets it
    try:
        path = Path(created(upload(owner, form(pid, name="private")))["uri"])
    finally:
        os.umask(before)
    # The model server runs as the project's uid: it reads what the platform made.
    assert path.stat().st_mode & 0o777 == 0o644 and path.parent.stat().st_mode & 0o777 == 0o755
    # A job owns the data folder: a link it planted where the store goes is refused, nothing written there.
    namespace = owner.get(f"/api/v1/project/{pid}").get_json()["namespace"]
    planted = store_of(app) / namespace / "models" / "planted"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    planted.symlink_to(elsewhere)
    resp = upload(owner, form(pid, name="planted"))
    assert resp.status_code == 409 and "name" in errors_of(resp), resp.get_json()
    assert list(elsewhere.iterdir()) == []
    assert owner.get("/api/v1/model_version/", query_string={"name": "planted"}).get_json()["count"] == 0
