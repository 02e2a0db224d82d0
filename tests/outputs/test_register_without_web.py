"""`myapp pipeline run --wait` with no web server running: a task that calls the platform (model-register)
still reaches its API (the command serves it while it drives the run), and registers the model file the
upstream task wrote, named by an output reference."""
from __future__ import annotations

import json
import subprocess

import pytest

from tests.support import MYAPP, free_port

pytestmark = pytest.mark.slow  # `myapp init` and real jobs in subprocesses

PIPELINE = """
name: train-and-register
project: demo
tasks:
  - name: train
    template: python
    args:
      outputs: [model.pt]
      script: |
        import os
        open(os.path.join(os.environ["MYAPP_OUTPUT_DIR"], "model.pt"), "wb").write(b"weights")
  - name: register
    template: model-register
    depends_on: [train]
    args:
      model_name: tiny
      model_path: "{{ tasks.train.outputs.model.pt }}"
"""


def test_register_reaches_the_api_when_no_web_server_runs(tmp_path, platform_env):
    env = platform_env(tmp_path / "home") | {"MYAPP_BASE_URL": f"http://127.0.0.1:{free_port()}"}  # nobody there
    assert subprocess.run([*MYAPP, "init"], env=env, capture_output=True, timeout=180).returncode == 0
    spec = tmp_path / "p.yaml"
    spec.write_text(PIPELINE)
    applied = subprocess.run([*MYAPP, "pipeline", "apply", str(spec)], env=env, capture_output=True, text=True,
                             timeout=120)
    assert applied.returncode == 0, applied.stderr
    ran = subprocess.run([*MYAPP, "pipeline", "run", "train-and-register", "--wait"], env=env, capture_output=True,
                         text=True, timeout=300)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "registered tiny version 1" in ran.stdout
    assert "/myapp/outputs/" in ran.stdout and "/train/1/model.pt" in ran.stdout
    listed = subprocess.run([*MYAPP, "run", "list", "--pipeline", "train-and-register", "--json"], env=env,
                            capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr
    (run,) = json.loads(listed.stdout)  # no login: in-process, on this machine's database
    assert run["state"] == "succeeded"
