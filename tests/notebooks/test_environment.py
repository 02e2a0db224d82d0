"""A real notebook of the platform's default environment (what `myapp init` registers): its terminal and its
kernel run the same Python in the work folder, and what `pip install` (terminal) or `%pip install` (kernel)
adds lands in the notebook's own layer in its work folder: another notebook of the same environment does
not see it, and the shared environment's files are unchanged. No network: the packages are wheels the test
makes and installs from files."""
from __future__ import annotations

import ast
import asyncio
import base64
import json
from pathlib import Path

import pytest

from myapp.backends.local import LocalBackend
from myapp.models import NotebookState
from tests.notebooks.origin_client import enter, platform_session
from tests.notebooks.test_runtime import _reconcile, _run_cell
from tests.support import default_backend, wheel
from tests.world import created

pytestmark = pytest.mark.slow  # two JupyterLabs: about 30 s


async def terminal_run(base: str, headers: dict[str, str], command: str) -> str:
    """Run `command` in a new terminal; returns its output up to the end marker (printed, not typed)."""
    import aiohttp

    async with aiohttp.ClientSession() as session:
        async with session.post(f"{base}api/terminals", headers=headers, json={"cwd": ""}) as answer:
            assert answer.status == 200, await answer.text()
            name = (await answer.json())["name"]
        seen = ""
        async with session.ws_connect(f"{base.replace('http', 'ws', 1)}terminals/websocket/{name}",
                                      headers=headers) as ws:
            await ws.send_str(json.dumps(["stdin", f"{command}; echo END-$((40+2))\r"]))
            async with asyncio.timeout(120):
                async for message in ws:
                    kind, *rest = json.loads(message.data)
                    if kind == "stdout":
                        seen += rest[0]
                        if "END-42" in seen:
                            return seen
    raise AssertionError(f"the terminal did not finish: {seen!r}")


def tree(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_size for p in sorted(folder.rglob("*")) if not p.is_symlink()}


def test_terminal_and_kernel_share_one_python_and_installs_stay_in_the_notebook(
        app, user, notebook_world, web, proxy, tmp_path):
    from myapp.extensions import db
    from myapp.images.defaults import ensure_defaults
    from myapp.images.environments import resolve
    from myapp.models import Image

    environments = tmp_path / "environments"
    project = notebook_world["project"]
    with app.app_context():
        image = ensure_defaults(environments)[0]
        row = db.session.scalar(db.select(Image).filter_by(repository=image.rpartition(":")[0],
                                                              tag=image.rpartition(":")[2]))
        assert row.project_id is None and row.environment
        shared = resolve(image, project["namespace"], environments)
    assert shared is not None and shared.hash == row.environment
    before = tree(shared.path)

    backend = LocalBackend(tmp_path / "jobs", gpus=[], grace_period=3, environments=environments)
    with default_backend(app, backend):
        ids = {}
        for name in ("one", "two"):
            nb = created(user.post("/api/v1/notebook/", json={"project_id": project["id"], "name": name,
                                                               "image": image}))
            assert _reconcile(app, nb["id"], backend, tmp_path) == NotebookState.RUNNING
            ids[name] = nb["id"]
        try:
            _check(project, user, web, proxy, backend)
        finally:
            for notebook_id in ids.values():
                user.delete(f"/api/v1/notebook/{notebook_id}")
                _reconcile(app, notebook_id, backend, tmp_path)
    assert tree(shared.path) == before  # nothing was installed into the shared environment


def _check(project, user, web, proxy, backend) -> None:
    browser = platform_session(web, user.username, user.password)
    origins = {}
    for name in ("one", "two"):
        base = f"/notebook/{project['name']}/{name}/"
        origins[name] = (base, enter(browser, web, proxy, f"{name}.{project['name']}.localhost", base + "lab"))
    base, one = origins["one"]
    work = backend.volume_dir(project["namespace"], "one-work")
    for package, value in (("tinyterm", 7), ("tinykernel", 8)):
        saved = one.request("PUT", f"{base}api/contents/{package}-0.1-py3-none-any.whl", json={
            "type": "file", "format": "base64", "content": base64.b64encode(wheel(package, value)).decode()})
        assert saved.status_code in (200, 201), saved.text

    # The terminal: in the work folder, `python` and `pip` the notebook's own, VIRTUAL_ENV saying the same.
    out = asyncio.run(terminal_run(proxy + base, one.headers("POST"),
                                   "echo PWD=$(pwd); command -v python python3 pip; echo VENV=$VIRTUAL_ENV; "
                                   "pip install --no-index --no-deps ./tinyterm-0.1-py3-none-any.whl"))
    layer = work / ".myapp-venv"
    assert f"PWD={work}\r" in out, out
    for program in ("python", "python3", "pip"):
        assert f"{layer}/bin/{program}" in out, out
    assert f"VENV={layer}" in out and "Successfully installed tinyterm-0.1" in out, out

    # The kernel: the same interpreter, folder and VIRTUAL_ENV; it imports what the terminal installed, and
    # `%pip` installs into the same layer.
    seen = asyncio.run(_run_cell(proxy + base, one.headers("POST"), (
        "import os, sys, importlib, tinyterm\n"
        "get_ipython().run_line_magic('pip', 'install --no-index --no-deps ./tinykernel-0.1-py3-none-any.whl')\n"
        "importlib.invalidate_caches()\nimport tinykernel\n"
        "[sys.executable, os.environ['VIRTUAL_ENV'], os.getcwd(), tinyterm.__file__, tinykernel.VALUE]")))
    executable, venv, cwd, installed, value = ast.literal_eval(seen)  # the kernel's repr of a list
    assert (executable, venv, cwd, value) == (f"{layer}/bin/python", str(layer), str(work), 8)
    assert installed.startswith(f"{layer}/lib/") and (layer / "lib").is_dir()

    # Another notebook of the same environment sees neither package.
    base_two, two = origins["two"]
    missing = asyncio.run(_run_cell(proxy + base_two, two.headers("POST"),
                                    "import importlib.util\n[importlib.util.find_spec(m) is None "
                                    "for m in ('tinyterm', 'tinykernel')]"))
    assert missing == "[True, True]"


def test_a_layer_made_by_a_python_since_replaced_is_pointed_at_the_current_one(tmp_path):
    """The work folder outlives the platform's Python: at the next start the layer's `python` is made to name
    the current interpreter again, and what was installed in the layer stays."""
    import importlib.util
    import os
    import subprocess
    import sys
    import sysconfig

    spec = importlib.util.spec_from_file_location("local_start", Path(__file__).parents[2] / "job-templates" /
                                                  "notebook" / "local_start.py")
    local_start = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(local_start)
    layer, sites = tmp_path / ".myapp-venv", [sysconfig.get_paths()["purelib"]]
    local_start.make_layer(layer, sites)
    (local_start.site_packages(layer) / "kept.py").write_text("VALUE = 3\n")
    python = layer / "bin" / "python"
    target = os.readlink(python)
    python.unlink()
    python.symlink_to(tmp_path / "gone" / "python3")  # the interpreter the layer was made with is gone
    local_start.make_layer(layer, sites)
    assert python.exists() and os.path.realpath(python) == os.path.realpath(layer / "bin" / target)
    seen = subprocess.run([str(python), "-c", "import kept, yaml, sys; print(kept.VALUE, sys.prefix)"],
                          capture_output=True, text=True, env={}, timeout=60)
    assert seen.stdout.split() == ["3", str(layer)], seen.stderr
    pip = subprocess.run([str(layer / "bin" / "pip"), "--version"], capture_output=True, text=True, env={}, timeout=60)
    assert pip.returncode == 0 and f"python {sys.version_info[0]}.{sys.version_info[1]}" in pip.stdout, pip.stderr
