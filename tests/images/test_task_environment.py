"""A python task that chose its project's environment runs in it on the local backend: the environment is built
from a wheel this test makes and serves from a package index on 127.0.0.1 (no network), the task is saved
through the API with `image`, and the run's script imports the wheel's module with the environment's Python."""
from __future__ import annotations

import base64
import hashlib
import http.server
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.images.test_pipeline import drive_and_read
from tests.support import unique
from tests.world import created

PACKAGE, VERSION = "myapp-envprobe", "1.0.0"
PROBE = "import sys, myapp_envprobe\nprint(myapp_envprobe.WORD, sys.prefix)\n"


def make_wheel(folder: Path) -> Path:
    """A pure-Python wheel of module myapp_envprobe, written as the wheel format says (PEP 427): the module,
    METADATA, WHEEL and a RECORD of their hashes."""
    dist = f"myapp_envprobe-{VERSION}"
    files = {
        "myapp_envprobe/__init__.py": b"WORD = 'from-the-wheel'\n",
        f"{dist}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {PACKAGE}\nVersion: {VERSION}\n".encode(),
        f"{dist}.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }

    def digest(data: bytes) -> str:
        return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()

    record = "".join(f"{name},sha256={digest(data)},{len(data)}\n" for name, data in files.items())
    files[f"{dist}.dist-info/RECORD"] = (record + f"{dist}.dist-info/RECORD,,\n").encode()
    path = folder / f"{dist}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for name, data in files.items():
            wheel.writestr(name, data)
    return path


@pytest.fixture()
def package_index(tmp_path, monkeypatch) -> Iterator[str]:
    """A PEP 503 index of the one wheel (http.server's folder listing is the project page pip reads), and
    PIP_INDEX_URL pointing the build at it."""
    project = tmp_path / "index" / "simple" / PACKAGE
    project.mkdir(parents=True)
    make_wheel(project)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(tmp_path / "index"), **kwargs)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/simple/"
    monkeypatch.setenv("PIP_INDEX_URL", url)
    yield url
    server.shutdown()
    server.server_close()


def test_a_python_task_choosing_its_projects_environment_imports_its_package(app, user, catalog, package_index,
                                                                            tmp_path):
    from myapp.backends.local import LocalBackend
    from myapp.extensions import db
    from myapp.images.drive import drive
    from myapp.models import PipelineRun

    project = created(user.post("/api/v1/project/", json={"name": unique("envs")}))
    repository, tag = "registry.local/envs/probe", unique("v")
    build = created(user.post("/api/v1/image_build/", json={
        "project_id": project["id"], "repository": repository, "tag": tag, "packages": [f"{PACKAGE}=={VERSION}"]}))
    with app.app_context():
        assert drive(build["id"]) == "succeeded", user.get(f"/api/v1/image_build/{build['id']}/log").get_json()
    environment = user.get(f"/api/v1/image_build/{build['id']}").get_json()["environment"]
    pipeline = created(user.post("/api/v1/pipeline/", json={"project_id": project["id"], "name": "probe"}))
    created(user.post("/api/v1/task/", json={"pipeline_id": pipeline["id"], "name": "probe", "template_id": catalog,
                                             "image": f"{repository}:{tag}", "args": {"script": PROBE}}))
    with app.app_context():
        run = PipelineRun(project_id=project["id"], pipeline_id=pipeline["id"], run_key=unique("k"))
        db.session.add(run)
        db.session.commit()
        run_id = run.id

    backend = LocalBackend(tmp_path / "jobs", gpus=[], environments=Path(app.config["INSTANCE_PATH"]) / "environments")
    lines = drive_and_read(app, run_id, backend)
    env_path = Path(app.config["INSTANCE_PATH"]) / "environments" / environment
    assert lines == [f"from-the-wheel {env_path}"]
