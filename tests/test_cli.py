"""The CLI as a new user runs it: `myapp init` then `myapp run`, and Ctrl-C stops everything."""
from __future__ import annotations

import pwd
import re
import signal
import subprocess
import sys

import psutil
import pytest
import requests
import yaml

from tests.support import MYAPP, free_port, healthy, wait_until

pytestmark = pytest.mark.slow  # every test starts `myapp` processes


def test_init_then_run_then_ctrl_c(tmp_path, platform_env):
    env = platform_env(tmp_path)
    first = subprocess.run([*MYAPP, "init"], env=env, capture_output=True, text=True, timeout=180)
    assert first.returncode == 0, first.stderr
    assert not first.stderr, first.stderr  # a first start says what it made and nothing else (no FAB warnings)
    password = re.search(r"Created admin user 'admin' with password: (\S+)", first.stdout).group(1)
    assert len(password) >= 12
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0  # generated, private
    again = subprocess.run([*MYAPP, "init"], env=env, capture_output=True, text=True, timeout=180)
    assert again.returncode == 0 and "password" not in again.stdout  # idempotent; shown once
    assert not again.stderr, again.stderr
    # The platform's default notebook environment: made by the first init, found again by the second.
    assert "notebook environments: myapp/python-ml:" in again.stdout, again.stdout
    made = [p for p in (tmp_path / "environments").iterdir() if (p / ".myapp-environment.json").is_file()]
    assert len(made) == 1, made

    port = free_port()
    proc = subprocess.Popen([*MYAPP, "run", "--port", str(port), "--notebook-port", str(free_port()),
                             "--web-workers", "1"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: healthy(base), timeout=90, interval=0.5, what=f"the platform to answer {base}/health")
        children = psutil.Process(proc.pid).children(recursive=True)
        assert len(children) >= 3  # web, worker, beat
        # Started as root, they run as the platform user (myapp/host/launch.py): not one of them is root.
        platform = [c for c in children if {"gunicorn", "celery", "myapp.notebooks.proxy"} & set(c.cmdline())
                    and "myapp.host.launch" not in c.cmdline()]  # the launchers map the namespace, then wait
        assert len(platform) >= 4 and {c.uids().real for c in platform} == {pwd.getpwnam("myapp").pw_uid}
        token = requests.post(f"{base}/api/v1/security/login", timeout=10, json={
            "username": "admin", "password": password, "provider": "db"}).json()["access_token"]
        auth = {"Authorization": f"Bearer {token}"}
        projects = requests.get(f"{base}/api/v1/project/", headers=auth, timeout=10).json()["items"]
        assert [p["name"] for p in projects] == ["demo"]
        templates = requests.get(f"{base}/api/v1/job_template/?page_size=100", headers=auth, timeout=10).json()
        assert {"python", "pytorch-ddp"} <= {t["name"] for t in templates["items"]}
        images = requests.get(f"{base}/api/v1/image/?page_size=100", headers=auth, timeout=10).json()["items"]
        assert sorted(f"{i['repository']}:{i['tag']}" for i in images if i["project_id"] is None) == [
            "ghcr.io/myapp-platform/notebook:1.0.0", f"myapp/python-ml:{sys.version_info[0]}.{sys.version_info[1]}"]
        if "DATABASE_URL" in env:  # the PostgreSQL pass: the platform is on PostgreSQL and Redis too
            import redis

            from myapp.config import ACTIONS_QUEUE

            assert not (tmp_path / "myapp.sqlite").exists()
            broker = redis.Redis.from_url(env["REDIS_URL"])
            wait_until(lambda: any(ACTIONS_QUEUE.encode() in member for key in broker.keys("_kombu.binding.*")
                                   for member in broker.smembers(key)), timeout=60, interval=0.5,
                       what="the worker to bind its actions queue in Redis (once it has started)")
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0, out
        assert "stopped web, worker and beat" in out
        assert "Web, worker and beat run as myapp" in out and "superuser privileges" not in out  # no Celery warning
        assert f"The platform is running at {base}/" in out  # said once the web answers, however long that takes
        assert "Booting worker" not in out  # gunicorn's info lines are not the platform's (MYAPP_LOG_LEVEL=info)
        assert "No hostname was supplied" not in out  # the embedded broker is a file (myapp/shared/broker.py)
        assert not [c for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]
    finally:
        if proc.poll() is None:
            proc.kill()


def test_children_stop_when_run_is_killed(tmp_path, platform_env):
    """Even SIGKILL on `myapp run` leaves no web, worker or beat behind."""
    env = platform_env(tmp_path)
    assert subprocess.run([*MYAPP, "db", "upgrade"], env=env, capture_output=True, timeout=120).returncode == 0
    proc = subprocess.Popen([*MYAPP, "run", "--port", str(free_port()), "--notebook-port", str(free_port()),
                             "--web-workers", "1"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    children = wait_until(lambda: len(found := psutil.Process(proc.pid).children()) >= 4 and found,
                          timeout=30, interval=0.5, what="`myapp run` to start web, worker, beat, notebook proxy")
    assert len(children) == 4
    proc.kill()
    proc.wait()
    _, alive = psutil.wait_procs(children, timeout=30)
    for child in alive:
        child.kill()
    assert not alive


def test_pipeline_apply_and_export(tmp_path, platform_env):
    env = platform_env(tmp_path / "home")
    assert subprocess.run([*MYAPP, "init"], env=env, capture_output=True, timeout=180).returncode == 0
    spec = tmp_path / "nightly.yaml"
    spec.write_text(
        "name: nightly-train\nproject: demo\nschedule: '0 2 * * *'\ntasks:\n"
        "  - name: prepare\n    template: python\n    args: {command: 'echo {{ ds }}'}\n"
        "  - name: train\n    template: python\n    depends_on: [prepare]\n    retries: 2\n")
    applied = subprocess.run([*MYAPP, "pipeline", "apply", str(spec)], env=env, capture_output=True, text=True,
                             timeout=120)
    assert applied.returncode == 0, applied.stderr
    assert "demo/nightly-train applied (2 tasks)" in applied.stdout
    exported = subprocess.run([*MYAPP, "pipeline", "export", "nightly-train"], env=env, capture_output=True,
                              text=True, timeout=120)
    assert exported.returncode == 0, exported.stderr
    doc = yaml.safe_load(exported.stdout)
    assert doc["schedule"] == "0 2 * * *"
    assert [(t["name"], t.get("depends_on")) for t in doc["tasks"]] == [("prepare", None), ("train", ["prepare"])]
    assert doc["tasks"][0]["args"] == {"command": "echo {{ ds }}"}
    spec.write_text(spec.read_text().replace("depends_on: [prepare]", "depends_on: [prep]"))
    bad = subprocess.run([*MYAPP, "pipeline", "apply", str(spec)], env=env, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "tasks[1] (train).depends_on: unknown task 'prep'" in bad.stderr


def test_pipeline_run_wait_drives_in_process_and_follows_logs(tmp_path, platform_env):
    """No platform running: `run --wait` drives the run itself on the local backend."""
    env = platform_env(tmp_path / "home")
    assert subprocess.run([*MYAPP, "init"], env=env, capture_output=True, timeout=180).returncode == 0
    spec = tmp_path / "hello.yaml"
    spec.write_text("name: hello\nproject: demo\ntasks:\n"
                    "  - name: greet\n    template: python\n    args: {command: 'echo hello from {{ pipeline }}'}\n"
                    "  - name: fail\n    template: python\n    depends_on: [greet]\n    args: {command: 'exit 3'}\n")
    assert subprocess.run([*MYAPP, "pipeline", "apply", str(spec)], env=env, capture_output=True,
                          timeout=120).returncode == 0
    done = subprocess.run([*MYAPP, "pipeline", "run", "hello", "--wait", "--poll", "0.2"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert "[greet/" in done.stdout and "hello from hello" in done.stdout, done.stdout + done.stderr
    assert done.returncode == 1 and "failed" in done.stdout.splitlines()[-1]
