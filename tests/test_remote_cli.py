"""The platform from code: `myapp` in another working directory, knowing nothing but a URL and a token
(`myapp login`), drives a platform started here: apply a pipeline whose second task reads the first's
output by reference, run it with a parameter and wait, list, read logs, export, rerun, list models."""
from __future__ import annotations

import datetime as dt
import json
import os
import stat
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import MYAPP, free_port, healthy, platform_environment, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.backends]  # starts `myapp run` and real jobs

PIPELINE = """
name: {name}
project: demo
parameters: {{greeting: hi}}
tasks:
  - name: make
    template: python
    args:
      outputs: [data.csv]
      script: |
        import os
        open(os.path.join(os.environ["MYAPP_OUTPUT_DIR"], "data.csv"), "w").write("a,b\\n1,2\\n3,4\\n")
        print("{{{{ params.greeting }}}} on {{{{ ds }}}}")
  - name: use
    template: python
    depends_on: [make]
    args:
      script: |
        rows = open("{{{{ tasks.make.outputs.data.csv }}}}").read().splitlines()
        print("use read", len(rows), "rows")
"""


@pytest.fixture(scope="module")
def platform(tmp_path_factory) -> Iterator[tuple[str, str]]:
    home = tmp_path_factory.mktemp("remote-home")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    password = uuid.uuid4().hex
    with platform_environment(home) as services:
        # The public URL says another port: jobs must still reach the platform where it listens.
        env = services | {"MYAPP_BASE_URL": f"http://127.0.0.1:{free_port()}", "MYAPP_TICK_SECONDS": "1",
                          "MYAPP_ADMIN_PASSWORD": password}
        init = subprocess.run([*MYAPP, "init"], env=env, capture_output=True, text=True, timeout=180)
        assert init.returncode == 0, init.stderr
        with open(home / "platform.log", "w") as log:
            proc = subprocess.Popen([*MYAPP, "run", "--port", str(port), "--notebook-port", str(free_port()),
                                     "--web-workers", "1"], env=env, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)
            try:
                wait_until(lambda: healthy(base), timeout=90, interval=0.5, what=f"{base}/health")
                yield base, password
            finally:
                proc.terminate()
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()


def test_the_remote_cli_drives_a_platform_with_a_url_and_a_token(platform, tmp_path):
    base, password = platform
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    config = tmp_path / "config" / "client.json"
    # Nothing of the platform: no MYAPP_HOME, no database, no secret key; only where to keep the login.
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "MYAPP_CLIENT_CONFIG": str(config),
           "LANG": "C.UTF-8"}

    def myapp(*args: str, ok: bool = True) -> subprocess.CompletedProcess:
        done = subprocess.run([*MYAPP, *args], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=180)
        if ok:
            assert done.returncode == 0, (args, done.stdout, done.stderr)
        return done

    login = myapp("login", base, "--username", "admin", "--password", password)
    assert f"logged in to {base} as admin" in login.stdout
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    assert json.loads(config.read_text())["url"] == base

    name = f"remote-{uuid.uuid4().hex[:6]}"
    spec = elsewhere / "pipeline.yaml"
    spec.write_text(PIPELINE.format(name=name))
    applied = json.loads(myapp("pipeline", "apply", str(spec), "--json").stdout)
    assert applied["name"] == name

    bad = myapp("pipeline", "run", name, "--param", "greting=x", ok=False)
    assert bad.returncode == 2 and "parameters.greting" in bad.stderr

    ran = myapp("pipeline", "run", name, "--param", "greeting=hello", "--wait", "--json", ok=False)
    run = json.loads(ran.stdout)
    logs = myapp("pipeline", "logs", str(run["id"])).stdout
    assert ran.returncode == 0 and run["state"] == "succeeded", (run, logs)
    assert run["parameters"] == {"greeting": "hello"}
    today = dt.datetime.now(dt.UTC).date().isoformat()
    assert run["logical_date"] in (today, (dt.date.fromisoformat(today) - dt.timedelta(days=1)).isoformat())
    assert f"hello on {run['logical_date']}" in logs  # a manual run's {{ ds }} is its start date
    assert "use read 3 rows" in logs

    listed = json.loads(myapp("run", "list", "--pipeline", name, "--json").stdout)
    assert [r["id"] for r in listed] == [run["id"]]
    exported = myapp("pipeline", "export", name).stdout
    assert "{{ tasks.make.outputs.data.csv }}" in exported and "greeting: hi" in exported
    rerun = json.loads(myapp("run", "rerun", str(run["id"]), "--json").stdout)
    assert rerun["id"] != run["id"] and rerun["parameters"] == {"greeting": "hello"}
    assert isinstance(json.loads(myapp("model", "list", "--json").stdout), list)

    config.write_text(json.dumps({"url": base, "token": "not-a-token"}))
    refused = myapp("run", "list", ok=False)
    assert refused.returncode == 2 and "401" in refused.stderr


def test_the_client_in_python(platform):
    from myapp.client import Client, ClientError

    base, password = platform
    client = Client.login(base, "admin", password)
    assert client.project("demo")["name"] == "demo"
    with pytest.raises(ClientError) as missing:
        client.pipeline("no-such-pipeline", "demo")
    assert missing.value.status == 404
    assert Path  # typed helpers need nothing but the URL


SLEEPER = """
name: {name}
project: demo
tasks:
  - name: train
    template: python
    args:
      script: "import time; time.sleep(120)"
"""


def test_a_job_reports_metrics_through_the_client(platform, monkeypatch):
    """What a task does with Client.from_job(): finds its own attempt from the contract's environment
    and reports metrics while it runs; the run view's outputs answer charts them."""
    from myapp.client import Client, ClientError

    base, password = platform
    person = Client.login(base, "admin", password)
    name = f"metrics-{uuid.uuid4().hex[:6]}"
    pipeline = person.apply_pipeline(SLEEPER.format(name=name))
    run = person.run_pipeline(pipeline["id"])
    try:
        attempt = wait_until(lambda: next(iter(person.task_runs(run["id"])), None), timeout=60, interval=0.5,
                             what="the attempt")
        monkeypatch.delenv("PLATFORM_API_TOKEN", raising=False)
        with pytest.raises(ClientError, match="PLATFORM_API_TOKEN"):
            Client.from_job()
        # As in the job (an admin's token stands in for the run's, which only the platform holds).
        for key, value in {"PLATFORM_API_URL": base, "PLATFORM_API_TOKEN": person.token,
                           "MYAPP_RUN_ID": str(run["id"]), "MYAPP_TASK": "train", "MYAPP_ATTEMPT": "1"}.items():
            monkeypatch.setenv(key, value)
        job = Client.from_job()
        assert job.this_task_run() == attempt["id"]
        assert job.report_metrics(0, {"loss": 0.75}) == 1
        assert job.report_metrics(1, {"loss": 0.5, "accuracy": 0.9}) == 3
        assert person.outputs(attempt["id"])["metrics"] == [
            {"step": 0, "name": "loss", "value": 0.75}, {"step": 1, "name": "accuracy", "value": 0.9},
            {"step": 1, "name": "loss", "value": 0.5}]
        with pytest.raises(ClientError) as bad:
            job.report_metrics(2, {"loss": float("nan")})
        assert bad.value.status == 400
    finally:
        person.cancel_run(run["id"])
