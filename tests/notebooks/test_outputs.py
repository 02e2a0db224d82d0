"""A notebook reads its project's task outputs where tasks see them (/myapp/outputs), read-only, and
nothing of another project's: a real JupyterLab in the job sandbox, a kernel through the proxy."""
from __future__ import annotations

import ast
import asyncio
import json
from pathlib import Path

import pytest

from tests.notebooks.origin_client import enter, platform_session
from tests.notebooks.test_runtime import _reconcile, _run_cell
from tests.world import created

pytestmark = pytest.mark.slow  # JupyterLab starts: about 10 s


def _write(root: Path, relative: str, text: str) -> Path:
    """A file as an attempt leaves it, readable by whatever uid the sandbox gives the project."""
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    for made in [root, *root.rglob("*")]:
        made.chmod(0o755 if made.is_dir() else 0o644)
    return path


def test_a_notebook_reads_its_projects_outputs_only(app, user, notebook_world, local_backend, web, proxy, tmp_path):
    project = notebook_world["project"]
    own = local_backend.outputs_dir(project["namespace"])
    _write(own, "7/make/1/data.csv", "x,y\n1,2\n")
    other = _write(local_backend.outputs_dir("someone-else"), "9/train/1/secret.txt", "not yours\n")
    nb = created(user.post("/api/v1/notebook/", json={"project_id": project["id"], "name": "reader",
                                                       "image": notebook_world["image"]}))
    from myapp.models import NotebookState

    assert _reconcile(app, nb["id"], local_backend, tmp_path) == NotebookState.RUNNING
    # A task that ends after the notebook started: its folder shows up without a restart.
    _write(own, "8/make/1/late.txt", "later\n")
    code = f"""
import json, os
seen = {{"runs": sorted(os.listdir("/myapp/outputs")), "data": open("/myapp/outputs/7/make/1/data.csv").read(),
        "late": open("/myapp/outputs/8/make/1/late.txt").read()}}
for name, path, mode in (("write", "/myapp/outputs/7/make/1/data.csv", "a"), ("new", "/myapp/outputs/new.txt", "w"),
                         ("other", {str(other)!r}, "r")):
    try:
        open(path, mode).close()
        seen[name] = "opened"
    except OSError as exc:
        seen[name] = type(exc).__name__
json.dumps(seen)
"""
    base = f"/notebook/{project['name']}/reader/"
    member = enter(platform_session(web, user.username, user.password), web, proxy,
                   f"reader.{project['name']}.localhost", base + "lab")
    seen = json.loads(ast.literal_eval(asyncio.run(_run_cell(proxy + base, member.headers("POST"), code))))
    assert seen["runs"] == ["7", "8"] and seen["data"] == "x,y\n1,2\n" and seen["late"] == "later\n", seen
    assert seen["write"] != "opened" and seen["new"] != "opened", seen  # read-only
    assert seen["other"] != "opened", seen  # another project's outputs: not in its view at all
    assert (own / "7" / "make" / "1" / "data.csv").read_text() == "x,y\n1,2\n"
    assert user.delete(f"/api/v1/notebook/{nb['id']}").status_code == 200
    assert _reconcile(app, nb["id"], local_backend, tmp_path) is None
    assert (own / "7" / "make" / "1" / "data.csv").is_file()  # deleting the notebook leaves the outputs
