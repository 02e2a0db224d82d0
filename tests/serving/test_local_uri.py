"""A model version's local uri names a file of its own project (myapp/serving/local_uri.py): a regular
file in the project's data folder (its model store included), reached without a link, or a task output of
its own runs. Another project's folder, the platform's own files and links a job planted are 400 naming
uri, and nothing is stored."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support import unique
from tests.world import build_catalog, build_project, created, data_file


@pytest.fixture()
def projects(app, make_user, admin):
    owner = make_user()
    catalog = build_catalog(admin)
    mine, theirs = build_project(owner, catalog, app), build_project(make_user(), catalog, app)
    return {"owner": owner, "pid": mine.ids["project"], "run": mine.ids["pipeline_run"],
            "other_run": theirs.ids["pipeline_run"], "other": theirs.ids["project"]}


def register(owner, pid: int, uri: str):
    return owner.post("/api/v1/model_version/", json={"project_id": pid, "name": unique("m"), "uri": uri})


def refused_naming_uri(owner, pid: int, uri: str) -> str:
    before = owner.get(f"/api/v1/model_version/?project_id={pid}").get_json()["count"]
    answer = register(owner, pid, uri)
    assert answer.status_code == 400, (uri, answer.status_code, answer.get_json())
    (error,) = answer.get_json()["errors"]
    assert error["field"] == "uri", (uri, error)
    assert owner.get(f"/api/v1/model_version/?project_id={pid}").get_json()["count"] == before
    return error["reason"]


def test_a_file_of_the_projects_own_data_folder_or_outputs_is_accepted(app, projects):
    owner, pid = projects["owner"], projects["pid"]
    model = data_file(app, pid, "trained/model.pt")
    stored = data_file(app, pid, "models/digits/0123abcd/model.joblib")  # where an upload is kept
    for uri in (model, "file://" + model, stored, f"/myapp/outputs/{projects['run']}/fit/1/model.pt"):
        assert register(owner, pid, uri).status_code == 201, uri
    for uri in ("s3://models/m.joblib", "https://models.example.com/m.onnx"):  # remote ones as before
        assert register(owner, pid, uri).status_code == 201, uri


def test_another_projects_folder_and_the_platforms_own_files_are_refused(app, projects):
    owner, pid = projects["owner"], projects["pid"]
    theirs = data_file(app, projects["other"], "secret-model.pt")
    mine = Path(data_file(app, pid, "model.pt"))
    secret_key = Path(app.config["INSTANCE_PATH"]) / "secret_key"
    for uri in (theirs, "file://" + theirs, str(secret_key), "file://" + str(secret_key), "/etc/passwd",
                str(mine.parent / ".." / Path(theirs).parent.name / "secret-model.pt"),
                f"{mine.parent}/./model.pt", f"{mine.parent}//model.pt", "model.pt", "./model.pt",
                f"/myapp/outputs/{projects['other_run']}/fit/1/model.pt"):
        refused_naming_uri(owner, pid, uri)
    assert "no file" in refused_naming_uri(owner, pid, str(mine.parent / "missing.pt"))
    assert "data folder itself" in refused_naming_uri(owner, pid, str(mine.parent))
    refused_naming_uri(owner, pid, str(mine.parent) + "/")


def test_links_a_job_planted_in_the_data_folder_are_not_followed(app, projects):
    """The data folder is the jobs': a link to another project's file, or a linked folder on the way to
    one, must not make the uri "the project's"."""
    owner, pid = projects["owner"], projects["pid"]
    theirs = Path(data_file(app, projects["other"], "deep/secret-model.pt"))
    mine = Path(data_file(app, pid, "model.pt")).parent
    (mine / "linked.pt").symlink_to(theirs)
    (mine / "linked-folder").symlink_to(theirs.parent, target_is_directory=True)
    (mine / "real-folder").mkdir()
    (mine / "real-folder" / "to-secret").symlink_to(Path(app.config["INSTANCE_PATH"]) / "secret_key")
    assert "without links" in refused_naming_uri(owner, pid, str(mine / "linked.pt"))
    assert "without links" in refused_naming_uri(owner, pid, str(mine / "linked-folder" / "secret-model.pt"))
    assert "without links" in refused_naming_uri(owner, pid, str(mine / "real-folder" / "to-secret"))
    attempt = mine.parent.parent / "outputs" / mine.name / str(projects["run"]) / "fit" / "1"
    attempt.mkdir(parents=True)
    (attempt / "model.pt").write_bytes(b"model")
    (attempt / "to-secret").symlink_to(Path(app.config["INSTANCE_PATH"]) / "secret_key")
    assert register(owner, pid, f"/myapp/outputs/{projects['run']}/fit/1/model.pt").status_code == 201
    assert "without links" in refused_naming_uri(owner, pid, f"/myapp/outputs/{projects['run']}/fit/1/to-secret")
    os.mkfifo(mine / "pipe")  # not a regular file (and opening it must not hang)
    assert "not a regular file" in refused_naming_uri(owner, pid, str(mine / "pipe"))
    assert "not a regular file" in refused_naming_uri(owner, pid, str(mine / "real-folder"))


def test_an_upload_lands_where_a_uri_may_point(app, projects):
    import io

    owner, pid = projects["owner"], projects["pid"]
    answer = owner.post("/api/v1/model_version/upload", content_type="multipart/form-data", data={
        "project_id": str(pid), "name": "iris", "file": (io.BytesIO(b"model"), "model.joblib")})
    version = created(answer)
    assert register(owner, pid, version["uri"]).status_code == 201  # the store is in the data folder
