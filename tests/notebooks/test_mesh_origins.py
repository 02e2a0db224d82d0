"""A notebook's origin on Kubernetes, end to end but for Envoy: a stand-in sidecar (tests/notebooks/mesh.py,
install/istio's provider as configured) in front of JupyterLab started as start.sh starts it (the image's
jupyter_server_config.py, its own folders apart), asking the platform's ext-authz check. A browser enters by
the platform's code, which the check redeems in a denial that sets the origin's cookie; Jupyter's XSRF check
still applies to what the browser sends; another origin's request stops at the check."""
from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.notebooks import mesh
from tests.notebooks.origin_client import NAVIGATE, enter, platform_session
from tests.notebooks.test_handoff import run_notebook
from tests.support import free_port, unique, wait_until
from tests.world import created

pytestmark = pytest.mark.slow  # JupyterLab starts: about 10 s
CONFIG = Path(__file__).resolve().parents[2] / "job-templates" / "notebook" / "jupyter_server_config.py"


@pytest.fixture()
def pod(app, admin, user, catalog, tmp_path: Path) -> Iterator[dict]:
    """A notebook the platform believes running, and JupyterLab answering for it as its pod would."""
    image = created(admin.post("/api/v1/image/", json={"repository": "registry.local/nb/lab", "tag": unique("v")}))
    found = run_notebook(app, user, f"{image['repository']}:{image['tag']}")
    name = found["project"]["name"]
    home, private, port = tmp_path / "home", tmp_path / "jupyter", free_port()
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "JUPYTER_TOKEN": f"token-of-{name}", "NB_HOST": found["host"],
           "JUPYTER_CONFIG_DIR": str(private / "config"), "JUPYTER_DATA_DIR": str(private / "data"),
           "JUPYTER_RUNTIME_DIR": str(private / "runtime"), "PYTHONNOUSERSITE": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
                             "--ServerApp.password=", f"--ServerApp.base_url=/notebook/{name}/lab/",
                             f"--ServerApp.root_dir={home}", "--allow-root", f"--config={CONFIG}"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    jupyter = f"http://127.0.0.1:{port}"

    def answers() -> bool:
        try:
            return requests.get(f"{jupyter}/notebook/{name}/lab/api", timeout=2).status_code == 200
        except requests.RequestException:
            return False

    try:
        wait_until(answers, what="JupyterLab answering", timeout=90)
        yield found | {"jupyter": jupyter, "home": home, "private": private}
    finally:
        proc.terminate()
        proc.wait(20)


def test_a_browser_enters_by_the_handoff_and_jupyter_keeps_its_xsrf_check(app, user, web, pod):
    name = pod["project"]["name"]
    base = f"/notebook/{name}/lab/"
    with mesh.serving(web, pod["jupyter"]) as sidecar:
        member = enter(platform_session(web, user.username, user.password), web, sidecar, pod["host"], base + "lab")
        assert member.get(f"{base}api/status").status_code == 200
        lab = member.get(f"{base}lab")
        assert lab.status_code == 200 and "JupyterLab" in lab.text
        # A write as JupyterLab sends it (the _xsrf double-submit) passes; the same write forged does not,
        # though the check added the token: Jupyter refuses it itself.
        wrote = member.request("PUT", f"{base}api/contents/ok.txt", json={"type": "file", "format": "text",
                                                                        "content": "x"})
        assert wrote.status_code in (200, 201), wrote.text
        forged = member.request("PUT", f"{base}api/contents/forged.txt", xsrf=False,
                                json={"type": "file", "format": "text", "content": "x"})
        assert forged.status_code == 403 and "_xsrf" in forged.text
        assert (pod["home"] / "ok.txt").is_file() and not (pod["home"] / "forged.txt").exists()
        # Another origin's script: refused by the check, whatever cookies came along.
        sibling = member.request("POST", f"{base}api/contents", headers={"Origin": f"http://x.{name}.localhost"})
        assert sibling.status_code == 403
        # Jupyter's secret and runtime files: in its private folder, none in the work folder.
        assert list(pod["private"].rglob("jupyter_cookie_secret"))
        assert not [p for p in pod["home"].rglob("*") if "jupyter_cookie_secret" in p.name or "jpserver" in p.name]
        # A page load without the origin's cookie is sent to the platform's hand-off.
        fresh = requests.get(f"{sidecar}{base}lab", headers={"Host": pod["host"], **NAVIGATE}, allow_redirects=False,
                             timeout=10)
        assert fresh.status_code == 302 and "/notebook-open?" in fresh.headers["Location"]
