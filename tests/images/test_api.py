"""The image-build API: what it stores and refuses, then a worker's build end to end (locally, for real)."""
from __future__ import annotations

import pytest

from myapp.images import environments
from tests.support import publish, unique
from tests.world import created


@pytest.fixture()
def project(user):
    return created(user.post("/api/v1/project/", json={"name": unique("imgs")}))


def ask(client, project, **body):
    return client.post("/api/v1/image_build/", json={"project_id": project["id"], "repository": "registry.local/t/env",
                                                      "tag": unique("v"), **body})


def drive(app, build_id):
    from myapp.images.drive import drive as run

    with app.app_context():
        return run(build_id)


def test_a_build_is_stored_pending_with_its_packages_normalized(user, project):
    build = created(ask(user, project, packages=["Six==1.17.0", "six==1.17.0"], requirements="attrs>=23 # x\n"))
    assert build["state"] == "pending" and build["source"] == "packages"
    assert build["packages"] == ["attrs>=23", "six==1.17.0"]
    listed = user.get(f"/api/v1/image_build/?project_id={project['id']}").get_json()
    assert [b["id"] for b in listed["items"]] == [build["id"]]


@pytest.mark.parametrize(("body", "field"), [
    ({"packages": ["six", "--index-url=http://evil"]}, "packages[1]"),
    ({"requirements": "six\n-e .\n"}, "requirements"),
    ({"packages": ["six"], "dockerfile": "FROM busybox"}, "packages"),
    ({"source": "dockerfile"}, "dockerfile"),
    ({"source": "notebook"}, "notebook_id"),
    ({}, "packages"),
    ({"apt_packages": ["curl; rm -rf /"]}, "apt_packages[0]"),
    ({"packages": ["six"], "base_image": "python:3.11 AS x"}, "base_image"),
])
def test_bad_input_names_the_field_and_stores_nothing(user, project, body, field):
    resp = ask(user, project, **body)
    assert resp.status_code == 400, resp.get_json()
    assert field in [e["field"] for e in resp.get_json()["errors"]], resp.get_json()
    assert user.get(f"/api/v1/image_build/?project_id={project['id']}").get_json()["count"] == 0


def test_other_projects_see_nothing_and_cannot_build_there(user, make_user, project):
    build = created(ask(user, project, packages=["six"]))
    stranger = make_user()
    assert stranger.get(f"/api/v1/image_build/{build['id']}").status_code == 404
    assert stranger.get(f"/api/v1/image_build/{build['id']}/log").status_code == 404
    assert ask(stranger, project, packages=["six"]).status_code == 404


def test_a_local_build_makes_an_environment_registers_the_image_and_keeps_its_log(app, user, project):
    build = created(ask(user, project, packages=["six==1.17.0"], tag="one"))
    assert ask(user, project, packages=["six"], tag="one").status_code == 409  # one build of a name at a time
    assert drive(app, build["id"]) == "succeeded"
    done = user.get(f"/api/v1/image_build/{build['id']}").get_json()
    assert done["state"] == "succeeded" and done["environment"] and done["image_id"] and done["finished_at"]
    log = user.get(f"/api/v1/image_build/{build['id']}/log").get_json()
    assert any("Successfully installed six-1.17.0" in item["line"] for item in log["items"]), log
    assert [i["seq"] for i in log["items"]] == list(range(1, len(log["items"]) + 1))
    tail = user.get(f"/api/v1/image_build/{build['id']}/log?after={len(log['items']) - 1}").get_json()
    assert [i["seq"] for i in tail["items"]] == [len(log["items"])]

    resp = user.get(f"/api/v1/image/{done['image_id']}")
    assert resp.status_code == 200, resp.get_json()
    image = resp.get_json()
    assert (image["repository"], image["tag"], image["project_id"]) == ("registry.local/t/env", "one", project["id"])
    assert image["environment"] == done["environment"]
    with app.app_context():
        env = environments.resolve("registry.local/t/env:one", project["namespace"])
    assert env is not None and env.hash == done["environment"] and env.python.exists()

    # The same packages again, under another tag: the cached environment, at once.
    again = created(ask(user, project, packages=["six==1.17.0"], tag="two"))
    assert drive(app, again["id"]) == "succeeded"
    again = user.get(f"/api/v1/image_build/{again['id']}").get_json()
    assert again["cached"] and again["environment"] == done["environment"]
    assert "(from the cache)" in again["reason"]


def test_deleting_a_project_image_forgets_its_environment(app, admin, user, project):
    """The index entry goes with the catalog entry; the environment once no image has its content."""
    base = "registry.local/forget/base:1"  # content of this test's own
    one, two = (created(ask(user, project, packages=["six==1.17.0"], base_image=base, tag=tag)) for tag in ("a", "b"))
    assert drive(app, one["id"]) == "succeeded" and drive(app, two["id"]) == "succeeded"
    one, two = (user.get(f"/api/v1/image_build/{b['id']}").get_json() for b in (one, two))
    assert one["environment"] == two["environment"]
    with app.app_context():
        root = environments.default_root()
    folder = root / one["environment"]

    assert user.delete(f"/api/v1/image/{one['image_id']}").status_code == 403  # the catalog is the admins'
    assert admin.delete(f"/api/v1/image/{one['image_id']}").status_code == 200
    with app.app_context():
        assert environments.resolve("registry.local/t/env:a", project["namespace"]) is None
        kept = environments.resolve("registry.local/t/env:b", project["namespace"])
    assert kept is not None and kept.python.exists()  # the other image of the same content keeps it

    assert admin.delete(f"/api/v1/image/{two['image_id']}").status_code == 200
    with app.app_context():
        assert environments.resolve("registry.local/t/env:b", project["namespace"]) is None
    assert not folder.exists()


def test_the_image_name_belongs_to_one_project(app, user, make_user, project):
    build = created(ask(user, project, packages=["six==1.17.0"], tag="mine"))
    assert drive(app, build["id"]) == "succeeded"
    other = make_user()
    theirs = created(other.post("/api/v1/project/", json={"name": unique("other")}))
    resp = ask(other, theirs, packages=["six"], tag="mine")
    assert resp.status_code == 409 and resp.get_json()["errors"][0]["field"] == "tag"
    # ... and its catalog entry is the project's: others neither list nor read it.
    image_id = user.get(f"/api/v1/image_build/{build['id']}").get_json()["image_id"]
    assert other.get(f"/api/v1/image/{image_id}").status_code == 404
    assert image_id not in [i["id"] for i in other.get("/api/v1/image/?page_size=100&order=-id").get_json()["items"]]


@pytest.mark.parametrize(("body", "reason"), [
    ({"dockerfile": "FROM python:3.11-slim\nRUN pip install six\n"},
     "no container engine: build this on Kubernetes, or use a package list"),
    ({"apt_packages": ["libgomp1"]}, "apt packages need a container engine"),
])
def test_what_needs_a_container_engine_fails_locally_with_the_reason(app, user, project, body, reason):
    build = created(ask(user, project, **body))
    assert drive(app, build["id"]) == "failed"
    done = user.get(f"/api/v1/image_build/{build['id']}").get_json()
    assert done["state"] == "failed" and done["reason"].startswith(reason), done
    assert done["image_id"] is None


def test_a_pip_failure_fails_the_build_with_pips_words(app, user, project):
    build = created(ask(user, project, packages=["myapp-no-such-package-xyz==1.0"]))
    assert drive(app, build["id"]) == "failed"
    done = user.get(f"/api/v1/image_build/{build['id']}").get_json()
    assert "No matching distribution found for myapp-no-such-package-xyz==1.0" in done["reason"], done
    assert user.delete(f"/api/v1/image_build/{build['id']}").status_code == 200


def test_a_local_build_stops_when_its_project_is_deleted(app, user, project, monkeypatch):
    """pip waits on a package index that never answers; the project's delete stops the build within
    seconds (not at the build's timeout), and the half-built environment is not left behind."""
    import socket
    import time

    from myapp.images.logs import log_path
    from tests.support import in_thread, wait_until

    silent = socket.socket()  # takes connections, never answers
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    monkeypatch.setenv("PIP_INDEX_URL", f"http://127.0.0.1:{silent.getsockname()[1]}/simple/")
    monkeypatch.setenv("PIP_DEFAULT_TIMEOUT", "600")
    try:
        build = created(ask(user, project, packages=["myapp-never-served==1.0"]))
        log = log_path(app.config["INSTANCE_PATH"], build["id"])
        thread, out = in_thread(drive, app, build["id"])
        wait_until(lambda: log.is_file() and "building environment" in log.read_text(), timeout=60,
                   what="the build to start")
        started = time.monotonic()
        assert user.delete(f"/api/v1/project/{project['id']}").status_code == 200
        thread.join(30)
        assert out == ["failed"], out
        assert time.monotonic() - started < 15
        assert "stopped: the project was deleted while its environment was being built" in log.read_text()
        with app.app_context():
            half_built = environments.default_root() / environments.content_hash(None, ["myapp-never-served==1.0"])
        assert not half_built.exists()
    finally:
        silent.close()


def test_a_build_still_going_cannot_be_deleted(user, project):
    build = created(ask(user, project, packages=["six"]))
    resp = user.delete(f"/api/v1/image_build/{build['id']}")
    assert resp.status_code == 409 and resp.get_json()["errors"][0]["field"] == "state"


def test_usage_lists_the_notebooks_and_tasks_naming_the_image(app, user, project):
    build = created(ask(user, project, packages=["six==1.17.0"], tag="used"))
    assert drive(app, build["id"]) == "succeeded"  # a notebook names an image that exists
    nb = user.post("/api/v1/notebook/", json={"project_id": project["id"], "name": "nb",
                                               "image": "registry.local/t/env:used"})
    assert nb.status_code == 201, nb.get_json()
    usage = user.get(f"/api/v1/image_build/{build['id']}/usage").get_json()
    assert usage == {"image": "registry.local/t/env:used", "templates": [], "tasks": [],
                     "notebooks": [{"id": nb.get_json()["id"], "name": "nb", "project_id": project["id"]}]}


def test_the_log_stream_sends_the_lines_then_the_end(app, user, project):
    build = created(ask(user, project, dockerfile="FROM busybox\n"))
    drive(app, build["id"])
    resp = user.get(f"/api/v1/image_build/{build['id']}/log_stream")
    assert resp.status_code == 200 and resp.mimetype == "text/event-stream"
    body = resp.get_data(as_text=True)
    assert "event: lines" in body and "no container engine" in body and "event: end" in body


def test_beat_asks_again_for_builds_nobody_drives(app, user, project):
    import datetime as dt

    from myapp.extensions import db
    from myapp.images.drive import stale_builds
    from myapp.models import ImageBuild, utcnow

    build = created(ask(user, project, packages=["six"]))
    with app.app_context():
        assert build["id"] not in stale_builds()  # just asked: its request is on its way
        row = db.session.get(ImageBuild, build["id"])
        row.updated_at = utcnow() - dt.timedelta(minutes=5)
        db.session.commit()
        assert build["id"] in stale_builds()
        assert build["id"] not in stale_builds()  # asked once per period, not on every tick


def test_a_notebook_snapshot_builds_from_the_notebooks_packages(app, user, project):
    from myapp.images import environments
    from myapp.images.drive import snapshot
    from tests.images.test_task_environment import PACKAGE, VERSION

    first = created(ask(user, project, packages=[f"{PACKAGE}=={VERSION}"], tag="nb-base"))
    assert drive(app, first["id"]) == "succeeded"
    nb = user.post("/api/v1/notebook/", json={"project_id": project["id"], "name": "snap",
                                              "image": "registry.local/t/env:nb-base"})
    assert nb.status_code == 201, nb.get_json()
    with app.app_context():
        assert snapshot(environments.resolve("registry.local/t/env:nb-base", project["namespace"])) == [
            f"{PACKAGE}=={VERSION}"]
    build = created(ask(user, project, notebook_id=nb.get_json()["id"], tag="nb-snap"))
    assert build["source"] == "notebook" and build["packages"] == []
    assert drive(app, build["id"]) == "succeeded"
    done = user.get(f"/api/v1/image_build/{build['id']}").get_json()
    assert done["packages"] == [f"{PACKAGE}=={VERSION}"] and done["base_image"] == "registry.local/t/env:nb-base"
    log = [i["line"] for i in user.get(f"/api/v1/image_build/{build['id']}/log").get_json()["items"]]
    assert log[0] == "snapshot of notebook snap (registry.local/t/env:nb-base): 1 package(s)", log


def test_a_local_notebook_snapshot_carries_what_was_pip_installed_in_the_notebook(app, user, project, pip_index,
                                                                                 tmp_path):
    """A local notebook's `pip install` goes to its own layer (a venv in its work folder): its snapshot lists
    those packages beside its environment's and the image built from it has them (both from the test's
    package index, as a user's would be from theirs: no network). A link in the layer fails the snapshot."""
    import subprocess
    import sys

    from myapp.backends.registry import local_workdir
    from myapp.rendering.kinds.notebook import work_claim_name
    from tests.images.test_task_environment import PACKAGE, VERSION

    base = created(ask(user, project, packages=[f"{PACKAGE}=={VERSION}"], tag="nb-layered"))
    assert drive(app, base["id"]) == "succeeded"
    nb = created(user.post("/api/v1/notebook/", json={"project_id": project["id"], "name": "layered",
                                                       "image": "registry.local/t/env:nb-layered"}))
    # What the notebook's terminal does: pip into its layer's site-packages (the venv its start makes).
    publish(pip_index, "nblayer", 1)  # where the snapshot's build will find it
    served = pip_index / "simple" / "nblayer"
    with app.app_context():
        layer = local_workdir() / "data" / project["namespace"] / "volumes" / work_claim_name("layered") / ".myapp-venv"
    site = layer / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-index", "--no-deps", "--quiet", "--target",
                    str(site), str(served / "nblayer-0.1-py3-none-any.whl")], check=True, timeout=120)

    build = created(ask(user, project, notebook_id=nb["id"], tag="nb-layered-snap"))
    assert drive(app, build["id"]) == "succeeded", user.get(f"/api/v1/image_build/{build['id']}").get_json()
    done = user.get(f"/api/v1/image_build/{build['id']}").get_json()
    assert done["packages"] == [f"{PACKAGE}=={VERSION}", "nblayer==0.1"], done
    log = [i["line"] for i in user.get(f"/api/v1/image_build/{build['id']}/log").get_json()["items"]]
    assert log[0] == ("snapshot of notebook layered (registry.local/t/env:nb-layered): 2 package(s), 1 of them "
                      "installed in the notebook's own layer (.myapp-venv): nblayer==0.1"), log
    with app.app_context():
        built = environments.resolve(f"registry.local/t/env:{done['tag']}", project["namespace"])
    probe = subprocess.run([str(built.python), "-c", "import nblayer, myapp_envprobe; print(nblayer.VALUE)"],
                           capture_output=True, text=True, timeout=60)
    assert probe.stdout.strip() == "1", probe.stderr

    # The notebook owns its work folder: a link there is refused, never followed (read by descriptor).
    elsewhere = tmp_path / "elsewhere" / "python3.99" / "site-packages" / "stolen-9.dist-info"
    elsewhere.mkdir(parents=True)
    (elsewhere / "METADATA").write_text("Metadata-Version: 2.1\nName: stolen\nVersion: 9\n")
    (layer / "lib").rename(layer / "lib-real")
    (layer / "lib").symlink_to(tmp_path / "elsewhere")
    linked = created(ask(user, project, notebook_id=nb["id"], tag="nb-linked-snap"))
    assert drive(app, linked["id"]) == "failed"
    reason = user.get(f"/api/v1/image_build/{linked['id']}").get_json()["reason"]
    assert reason.startswith("the notebook's own layer (.myapp-venv) cannot be read"), reason
