"""Jobs run sealed off from the platform: each escape a job in a user's project could try, tried by
real jobs on the local backend (and through `myapp run`'s worker), must fail while the job runs.

The platform's layout is reproduced in a temporary MYAPP_HOME (secret key, database, queues,
archived logs, the jobs folder with another project's job, secrets and data), and the platform's
environment carries a marker (as MYAPP_ADMIN_PASSWORD, SECRET_KEY and DATABASE_URL) that no job
may ever see.
"""
from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import psutil
import pytest

from myapp.backends.base import BackendError, JobRef, JobState
from myapp.backends.local import LocalBackend, sandbox
from tests.backends.local.support import (
    Backends,
    host_pid,
    lines_of,
    make_ctx,
    pid_alive,
    render_template,
    set_command,
)
from tests.support import MYAPP, free_port, healthy, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.backends]

MARKER = "platform-only-3b9f0c1e"
ATTACKER, VICTIM = "proj-attacker", "proj-victim"

# Tries to read, write or signal what it is given in targets.json (written into its folder by the
# test once the targets exist) and prints one JSON line: what each attempt raised, or "ESCAPED: ..."
# when it worked; and what it sees when it lists folders (the sandbox's skeleton shows the folders
# above its own, empty but for what leads to its own folders).
PROBE = textwrap.dedent("""
    import json, os, signal, time
    while not os.path.exists("targets.json"):
        time.sleep(0.02)
    targets = json.load(open("targets.json"))
    out = {}
    def attempt(name, action):
        try:
            out[name] = "ESCAPED: " + repr(action())[:120]
        except Exception as exc:
            out[name] = type(exc).__name__
    def write(path):
        with open(path, "w") as fh:
            fh.write("forged")
    for pid in targets["environ"]:
        attempt(f"environ {pid}", lambda pid=pid: open(f"/proc/{pid}/environ", "rb").read())
    for pid in targets["probe"]:
        attempt(f"signal-0 {pid}", lambda pid=pid: os.kill(pid, 0))
    for pid in targets["kill"]:
        attempt(f"kill {pid}", lambda pid=pid: os.kill(pid, signal.SIGKILL))
    for path in targets["read"]:
        attempt(f"read {path}", lambda path=path: open(path, "rb").read(64))
    for path in targets["list"]:
        try:
            out[f"list {path}"] = sorted(os.listdir(path))
        except OSError as exc:
            out[f"list {path}"] = type(exc).__name__
    for path in targets["write"]:
        attempt(f"write {path}", lambda path=path: write(path))
    attempt("rename .myapp", lambda: os.rename(".myapp", "not-the-control-folder"))
    leaked = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if targets["marker"].encode() in open(f"/proc/{entry}/environ", "rb").read():
                    leaked.append(int(entry))
            except OSError:
                pass
    out["visible pids"] = sorted(int(e) for e in os.listdir("/proc") if e.isdigit())
    out["marker in a visible environ"] = leaked
    out["marker in own env"] = any(targets["marker"] in v for v in os.environ.values())
    out["uid"] = os.getuid()
    print("PROBE " + json.dumps(out, sort_keys=True), flush=True)
    print("normal output", flush=True)
""")

VICTIM_JOB = ("import os, time; open('pid', 'w').write(str(os.getpid())); print('victim up', flush=True); "
              "time.sleep(300)")


@pytest.fixture()
def home(tmp_path: Path) -> Path:
    """A MYAPP_HOME as the platform leaves it: secret key, database, queues, archived logs."""
    home = tmp_path / "home"
    for name, text in {"secret_key": MARKER, "myapp.sqlite": f"SQLite format 3 {MARKER}",
                       "celery/queue/1.msg": MARKER, "logs/demo/run-1.jsonl": MARKER}.items():
        path = home / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return home


@pytest.fixture()
def platform_marker(monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker that submits jobs has the platform's secrets in its environment."""
    for name in ("MYAPP_ADMIN_PASSWORD", "SECRET_KEY"):
        monkeypatch.setenv(name, MARKER)
    monkeypatch.setenv("DATABASE_URL", f"postgresql://myapp:{MARKER}@127.0.0.1/myapp")


@pytest.fixture()
def jobs(home: Path, platform_marker: None) -> Iterator[Backends]:
    factory = Backends(home / "jobs")
    try:
        yield factory
    finally:
        factory.stop_all()


def python_job(script: str, namespace: str, task: str = "job") -> list[dict[str, Any]]:
    return render_template("python", {"script": script}, ctx=make_ctx(task, namespace=namespace))


def supervisor_pid(backend: LocalBackend, ref: JobRef) -> int:
    return json.loads((backend.job_dir(ref) / ".myapp" / "supervisor.json").read_text())["pid"]


def probe_result(backend: LocalBackend, ref: JobRef) -> dict[str, Any]:
    line = next(line for line in lines_of(backend, ref) if line.startswith("PROBE "))
    return json.loads(line[len("PROBE "):])


def start_victim(backend: LocalBackend) -> tuple[JobRef, int]:
    """Another project's job, running, with a file in its folder, a secret and data of its own."""
    secret = backend.workdir / "secrets" / VICTIM / "db-password" / "password"
    secret.parent.mkdir(parents=True)
    secret.write_text(MARKER)
    ref = backend.submit(python_job(VICTIM_JOB, VICTIM, "victim"))
    folder = backend.job_dir(ref)
    wait_until(lambda: (folder / "pid").exists() and (folder / "pid").read_text(), what="the victim")
    (backend.data_dir(VICTIM) / "model.pt").write_text(MARKER)
    return ref, host_pid(backend, ref, "job-0", int((folder / "pid").read_text()))


def test_a_job_reaches_nothing_of_the_platform_nor_of_other_projects(jobs: Backends, home: Path):
    backend = jobs(grace_period=1.0)
    victim, victim_pid = start_victim(backend)
    victim_supervisor = supervisor_pid(backend, victim)

    attacker = backend.submit(python_job(PROBE, ATTACKER, "probe"))
    folder = backend.job_dir(attacker)
    platform = [os.getpid(), os.getppid(), supervisor_pid(backend, attacker), victim_supervisor, victim_pid]
    targets = {
        "marker": MARKER,
        "environ": platform,
        "probe": platform,
        "kill": [victim_pid, victim_supervisor],
        "read": [str(home / "secret_key"), str(home / "myapp.sqlite"), str(home / "celery/queue/1.msg"),
                 str(home / "logs/demo/run-1.jsonl"), str(backend.job_dir(victim) / "pid"),
                 str(backend.workdir / "secrets" / VICTIM / "db-password" / "password"),
                 str(backend.data_dir(VICTIM) / "model.pt"), str(folder / ".myapp" / "spec.json"),
                 str(backend.workdir / "uids.json"), str(backend.workdir / "gpus.json")],
        "list": [str(home), str(backend.workdir), str(backend.workdir / ATTACKER), str(backend.workdir / VICTIM),
                 str(backend.workdir / "secrets"), str(backend.data_dir(VICTIM)), str(folder / ".myapp")],
        "write": [str(folder / ".myapp" / "state.json"), str(home / "secret_key"), "/usr/lib/forged",
                  str(backend.data_dir(VICTIM) / "forged")],
    }
    (folder / "targets.json").write_text(json.dumps(targets))
    status = backend.wait(attacker, timeout=60)

    assert status.state is JobState.SUCCEEDED, status.reason
    assert lines_of(backend, attacker)[-1] == "normal output"  # the job itself ran normally
    result = probe_result(backend, attacker)
    attempts = {k: v for k, v in result.items() if k.split()[0] in
                ("environ", "signal-0", "kill", "read", "write", "rename")}
    assert len(attempts) == 2 * len(platform) + 2 + len(targets["read"]) + len(targets["write"]) + 1
    assert {k: v for k, v in attempts.items() if v.startswith("ESCAPED")} == {}
    # Listing MYAPP_HOME shows only the way to the job's own folders: no key, database, queue, archive,
    # other project, secrets or control files.
    listed = {path.removeprefix("list "): names for path, names in result.items() if path.startswith("list ")}
    assert listed == {str(home): ["jobs"], str(backend.workdir): ["data", ATTACKER],
                      str(backend.workdir / ATTACKER): [attacker.job_name],
                      str(backend.workdir / VICTIM): "FileNotFoundError",
                      str(backend.workdir / "secrets"): "FileNotFoundError",
                      str(backend.data_dir(VICTIM)): "FileNotFoundError", str(folder / ".myapp"): []}
    # Own PID namespace: only bwrap's init (1) and the job's own processes, none of the platform's.
    assert not set(result["visible pids"]) & {os.getpid(), os.getppid(), victim_pid, victim_supervisor}
    assert max(result["visible pids"]) < 100
    assert result["marker in a visible environ"] == [] and result["marker in own env"] is False
    # The other project's job survived every signal sent its way.
    assert pid_alive(victim_pid) and backend.status(victim).state is JobState.RUNNING
    assert lines_of(backend, victim) == ["victim up"]
    assert (folder / ".myapp" / "state.json").exists() and not (folder / "not-the-control-folder").exists()
    if sandbox.detect().mode == sandbox.UID:  # root: a uid of the project's own, never root
        uids = json.loads((backend.workdir / "uids.json").read_text())
        assert result["uid"] == uids[ATTACKER] != uids[VICTIM]
        assert result["uid"] >= sandbox.uid_base()


def test_the_supervisor_starts_with_a_clean_environment(jobs: Backends):
    backend = jobs()
    ref = backend.submit(python_job("import time; print('up', flush=True); time.sleep(300)", ATTACKER))
    wait_until(lambda: lines_of(backend, ref) == ["up"], what="the job")
    environ = Path(f"/proc/{supervisor_pid(backend, ref)}/environ").read_bytes()
    names = {entry.split(b"=", 1)[0].decode() for entry in environ.split(b"\0") if entry}
    assert MARKER.encode() not in environ
    assert not names & {"MYAPP_ADMIN_PASSWORD", "SECRET_KEY", "DATABASE_URL", "MYAPP_HOME"}
    assert "PYTHONPATH" in names  # what it does need
    backend.cancel(ref)


def test_cancel_stops_the_sandbox_and_everything_in_it(jobs: Backends):
    """Nothing is orphaned: the replica, what it started (even escaped with setsid) and bwrap itself."""
    backend = jobs(grace_period=0.5)
    script = ("import os, subprocess, sys, time\n"
              "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'], start_new_session=True)\n"
              "subprocess.Popen(['sleep', '300'])\nprint('started', flush=True)\ntime.sleep(300)")
    ref = backend.submit(python_job(script, ATTACKER))
    wait_until(lambda: lines_of(backend, ref) == ["started"], what="the tree")
    supervisor = psutil.Process(supervisor_pid(backend, ref))
    tree = wait_until(lambda: (t := supervisor.children(recursive=True)) and len(t) >= 5 and t, what="5 processes")
    assert {p.name() for p in tree} >= {"bwrap", "python", "sleep"}
    backend.cancel(ref)
    assert backend.status(ref).state is JobState.CANCELLED
    wait_until(lambda: not any(pid_alive(p.pid) for p in tree), timeout=5, what="the whole sandbox to die")


def test_killing_the_supervisor_kills_its_sandboxes(jobs: Backends):
    backend = jobs()
    ref = backend.submit(python_job("import time; print('up', flush=True); time.sleep(300)", ATTACKER))
    wait_until(lambda: lines_of(backend, ref) == ["up"], what="the job")
    supervisor = psutil.Process(supervisor_pid(backend, ref))
    tree = supervisor.children(recursive=True)
    supervisor.kill()
    supervisor.wait(5)
    wait_until(lambda: not any(pid_alive(p.pid) for p in tree), timeout=5, what="the sandbox to die with it")
    assert backend.status(ref).state is JobState.FAILED


def test_metrics_sample_the_job_through_its_pid_namespace(jobs: Backends):
    backend = jobs(metrics_interval=0.25)
    burn = "import time\nblob = bytearray(60 * 2**20)\nend = time.time() + 30\nwhile time.time() < end: pass"
    ref = backend.submit(python_job(burn, ATTACKER))
    samples = wait_until(lambda: [s for s in backend.metrics(ref)
                                  if s.cpu_cores > 0.5 and s.memory_bytes > 60 * 2**20], what="a busy sample")
    assert samples[0].replica == "job-0"
    backend.cancel(ref)


def test_metrics_count_the_job_not_bubblewrap(jobs: Backends):
    backend = jobs(metrics_interval=0.25)
    manifests = python_job("", ATTACKER)
    set_command(manifests, ["sleep", "30"])  # one small process (about 2 MB); each bwrap is about as big
    ref = backend.submit(manifests)
    samples = wait_until(lambda: len(m := backend.metrics(ref)) >= 4 and m, what="samples of the running job")
    assert 2**20 < samples[-1].memory_bytes < 3 * 2**20
    backend.cancel(ref)


def test_folders_belong_to_the_platform_or_to_the_projects_uid(jobs: Backends):
    backend = jobs()
    ref = backend.submit(python_job("open('out', 'w').write('x')", ATTACKER))
    assert backend.wait(ref, timeout=30).state is JobState.SUCCEEDED
    folder, meta = backend.job_dir(ref), backend.job_dir(ref) / ".myapp"
    private = [backend.workdir, backend.workdir / ATTACKER, meta, meta / "logs", backend.workdir / "data"]
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o700 and p.stat().st_uid == os.geteuid() for p in private)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(backend.data_dir(ATTACKER).stat().st_mode) == 0o700
    if sandbox.detect().mode == sandbox.UID:
        uid = json.loads((backend.workdir / "uids.json").read_text())[ATTACKER]
        assert folder.stat().st_uid == uid and (folder / "out").stat().st_uid == uid
        assert backend.data_dir(ATTACKER).stat().st_uid == uid
        again = jobs()  # another worker: the project keeps its uid
        ref = again.submit(python_job("import os; print(os.getuid())", ATTACKER, "again"))
        assert again.wait(ref, timeout=30).state is JobState.SUCCEEDED
        assert lines_of(again, ref) == [str(uid)]


def test_a_project_reads_only_its_own_secrets(jobs: Backends):
    backend = jobs()
    theirs = backend.workdir / "secrets" / VICTIM / "myapp-api-token" / "token"
    theirs.parent.mkdir(parents=True)
    theirs.write_text(MARKER)
    manifests = render_template("model-register", {"model_name": "digits", "model_version": "1",
                                                   "model_path": "/tmp/model.pt"}, ctx=make_ctx(namespace=ATTACKER))
    status = backend.wait(backend.submit(manifests), timeout=30)
    assert status.state is JobState.FAILED  # the other project's token is not this project's
    assert str(backend.workdir / "secrets" / ATTACKER / "myapp-api-token" / "token") in status.reason


def test_submit_refuses_jobs_where_they_cannot_be_isolated(jobs: Backends, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch):
    empty = tmp_path / "no-bwrap"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # a machine without bubblewrap
    backend = jobs()
    with pytest.raises(BackendError, match=r"bubblewrap \(bwrap\) is not installed.*apt-get install -y bubblewrap"):
        backend.submit(python_job("print('never')", ATTACKER))
    assert not (backend.workdir / ATTACKER).exists()  # nothing started, nothing written


def test_the_opt_out_is_explicit_and_runs_unisolated(jobs: Backends, home: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(sandbox.OPT_OUT, "1")
    assert sandbox.detect().mode == sandbox.NONE and "OFF" in sandbox.detect().reason
    backend = jobs()
    ref = backend.submit(python_job(f"print(open({str(home / 'secret_key')!r}).read())", ATTACKER))
    assert backend.wait(ref, timeout=30).state is JobState.SUCCEEDED
    assert lines_of(backend, ref) == [MARKER]  # what isolation exists to prevent
    assert json.loads((backend.job_dir(ref) / ".myapp" / "spec.json").read_text())["sandbox"] is None


class Output(threading.Thread):
    """Reads a process's output to the end (so it never blocks on a full pipe), line by line."""

    def __init__(self, stream: IO[str]):
        super().__init__(daemon=True)
        self.stream, self.lines = stream, []

    def run(self) -> None:
        for line in self.stream:
            self.lines.append(line.rstrip("\n"))

    def first(self, prefix: str, timeout: float = 60) -> str:
        return wait_until(lambda: next((x for x in self.lines if x.startswith(prefix)), None), timeout=timeout,
                          what=lambda: f"a line starting {prefix!r} in {self.lines[:20]}")


def test_myapp_run_says_when_jobs_cannot_be_isolated(tmp_path: Path, platform_env):
    empty = tmp_path / "no-bwrap"
    empty.mkdir()
    env = platform_env(tmp_path / "home") | {"PATH": str(empty)}
    proc = subprocess.Popen([*MYAPP, "run", "--port", str(free_port()), "--notebook-port", str(free_port()),
                             "--web-workers", "1"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output = Output(proc.stdout)
    output.start()
    try:
        line = output.first("Local jobs will be refused")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(60)
    assert line == ("Local jobs will be refused: local jobs cannot run isolated: bubblewrap (bwrap) is not installed; "
                    "install bubblewrap (apt-get install -y bubblewrap), or set MYAPP_UNSAFE_NO_JOB_ISOLATION=1 to run "
                    "jobs unisolated, where they can read the platform's secrets.")


PIPELINE_PROBE = textwrap.dedent("""
    import json, os
    out = {}
    for pid in PIDS:
        try:
            out[f"environ {pid}"] = "ESCAPED" if b"MARKER" in open(f"/proc/{pid}/environ", "rb").read() else "other"
        except OSError as exc:
            out[f"environ {pid}"] = type(exc).__name__
    for path in PATHS:
        try:
            open(path, "rb").read(16)
            out[f"read {path}"] = "ESCAPED"
        except OSError as exc:
            out[f"read {path}"] = type(exc).__name__
    leaked = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            if b"MARKER" in open(f"/proc/{entry}/environ", "rb").read():
                leaked.append(entry)
        except OSError:
            pass
    out["leaked"] = leaked
    print("PROBE " + json.dumps(out, sort_keys=True), flush=True)
""")


def test_through_myapp_run_a_job_cannot_read_the_platform(tmp_path: Path, platform_env):
    """The original hole, end to end: a task of a user's pipeline, run by `myapp run`'s worker,
    reads the environment of the platform's processes and the secret key to forge an admin JWT."""
    import requests

    home = tmp_path / "home"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = platform_env(home) | {"MYAPP_BASE_URL": base, "MYAPP_TICK_SECONDS": "1", "MYAPP_ADMIN_PASSWORD": MARKER}
    init = subprocess.run([*MYAPP, "init"], env=env, capture_output=True, text=True, timeout=180)
    assert init.returncode == 0, init.stderr
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    platform = subprocess.Popen([*MYAPP, "run", "--port", str(port), "--notebook-port", str(free_port()),
                                 "--web-workers", "1"], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output = Output(platform.stdout)
    output.start()
    try:
        output.first("Local jobs run isolated: bubblewrap")
        wait_until(lambda: healthy(base), timeout=90, interval=0.5, what=f"the platform to answer {base}/health")
        pids = [platform.pid, *(p.pid for p in psutil.Process(platform.pid).children(recursive=True))]
        assert len(pids) >= 4  # myapp run, web, worker, beat (and their children)
        paths = [str(home / "secret_key"), str(home / "myapp.sqlite"), str(home / "jobs" / "uids.json"),
                 str(home / "jobs" / "secrets" / "demo" / "myapp-api-token" / "token")]
        script = PIPELINE_PROBE.replace("PIDS", repr(pids)).replace("PATHS", repr(paths)).replace("MARKER", MARKER)
        spec = tmp_path / "probe.yaml"
        spec.write_text(json.dumps({"name": "probe", "project": "demo",
                                    "tasks": [{"name": "probe", "template": "python", "args": {"script": script}}]}))
        applied = subprocess.run([*MYAPP, "pipeline", "apply", str(spec)], env=env, capture_output=True, text=True,
                                 timeout=120)
        assert applied.returncode == 0, applied.stderr
        token = requests.post(f"{base}/api/v1/security/login", timeout=10, json={
            "username": "admin", "password": MARKER, "provider": "db"}).json()["access_token"]
        api = requests.Session()
        api.headers["Authorization"] = f"Bearer {token}"
        pipeline = api.get(f"{base}/api/v1/pipeline/", params={"name": "probe"}).json()["items"][0]
        run = api.post(f"{base}/api/v1/pipeline_run/", json={"pipeline_id": pipeline["id"]}).json()
        state = wait_until(lambda: (s := api.get(f"{base}/api/v1/pipeline_run/{run['id']}").json())["state"]
                           in ("succeeded", "failed", "cancelled") and s, timeout=120, interval=0.5, what="the run")
        task_run = api.get(f"{base}/api/v1/task_run/", params={"pipeline_run_id": run["id"]}).json()["items"][0]
        assert state["state"] == "succeeded", task_run["reason"]
        lines = [item["line"] for item in api.get(f"{base}/api/v1/task_run/{task_run['id']}/logs").json()["items"]]
    finally:
        platform.send_signal(signal.SIGINT)
        platform.wait(60)
    result = json.loads(next(line for line in lines if line.startswith("PROBE "))[len("PROBE "):])
    assert result.pop("leaked") == []
    assert len(result) == len(pids) + len(paths)
    assert {k: v for k, v in result.items() if not re.fullmatch(r"FileNotFoundError|PermissionError", v)} == {}


def test_a_read_only_folder_around_myapp_home_does_not_reveal_it(jobs: Backends, home: Path, tmp_path: Path):
    """An admin shares a folder that happens to contain MYAPP_HOME: the folder is readable, MYAPP_HOME is not."""
    (tmp_path / "dataset.csv").write_text("x,y\n")
    os.chmod(tmp_path, 0o755)  # pytest's own folder is private; a shared one is not
    backend = jobs(read_only_paths=[tmp_path])
    script = (f"print(open({str(tmp_path / 'dataset.csv')!r}).read().strip())\n"
              f"import os; print(sorted(os.listdir({str(home)!r})))\n"
              f"open({str(home / 'secret_key')!r})")
    ref = backend.submit(python_job(script, ATTACKER))
    status = backend.wait(ref, timeout=30)
    assert status.state is JobState.FAILED
    assert status.reason.endswith(f"No such file or directory: '{home / 'secret_key'}'")
    assert lines_of(backend, ref)[:2] == ["x,y", "['jobs']"]  # the share, and of MYAPP_HOME the way to its folder


def test_cancel_stops_a_job_gracefully_through_the_sandbox(jobs: Backends):
    """SIGTERM reaches the job (not only bwrap), which gets its grace period to clean up."""
    backend = jobs(grace_period=5.0)
    script = ("import signal, sys, time\n"
              "def stop(*_):\n    print('cleaned up', flush=True)\n    sys.exit(0)\n"
              "signal.signal(signal.SIGTERM, stop)\nprint('up', flush=True)\ntime.sleep(300)")
    ref = backend.submit(python_job(script, ATTACKER))
    wait_until(lambda: lines_of(backend, ref) == ["up"], what="the job")
    backend.cancel(ref)
    assert backend.status(ref).state is JobState.CANCELLED
    assert lines_of(backend, ref) == ["up", "cleaned up"]
    state = json.loads((backend.job_dir(ref) / ".myapp" / "state.json").read_text())
    assert state["replicas"]["job-0"]["exit_code"] == 0  # its own exit, not bwrap's


USERNS_PLATFORM = textwrap.dedent("""
    import json, os, sys
    from pathlib import Path
    from myapp.backends.local import LocalBackend, sandbox
    from tests.backends.local.support import lines_of, make_ctx, render_template
    home, targets, probe = Path(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
    backend = LocalBackend(home / "jobs", gpus=[])
    ref = backend.submit(render_template("python", {"script": probe}, ctx=make_ctx("probe", namespace="proj-attacker")))
    supervisor = json.loads((backend.job_dir(ref) / ".myapp" / "supervisor.json").read_text())["pid"]
    targets["environ"] += [os.getpid(), supervisor]
    (backend.job_dir(ref) / "targets.json").write_text(json.dumps(targets))
    status = backend.wait(ref, timeout=60)
    print(json.dumps({"mode": sandbox.detect().mode, "state": status.state.value, "lines": lines_of(backend, ref)}))
""")


def test_not_root_bubblewrap_alone_still_isolates(home: Path, platform_marker: None):
    """The platform as an ordinary user (here: uid 1000 in a user namespace): the `userns` mode."""
    targets = {"marker": MARKER, "environ": [os.getpid(), os.getppid()], "probe": [os.getpid()], "kill": [],
               "read": [str(home / "secret_key"), str(home / "myapp.sqlite")], "list": [str(home)], "write": []}
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))  # the repository: tests.backends...
    done = subprocess.run(["unshare", "--user", "--map-user=1000", "--map-group=1000", sys.executable, "-c",
                           USERNS_PLATFORM, str(home), json.dumps(targets), PROBE], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout.splitlines()[-1])
    assert (outcome["mode"], outcome["state"]) == ("userns", "succeeded"), outcome
    result = json.loads(next(line for line in outcome["lines"] if line.startswith("PROBE "))[len("PROBE "):])
    assert result["uid"] == 1000  # the platform's own uid: namespaces, not permissions, keep the job out
    assert [k for k, v in result.items() if isinstance(v, str) and v.startswith("ESCAPED")] == []
    assert len([k for k in result if k.startswith("environ ")]) == 4
    assert result[f"list {home}"] == ["jobs"]
    assert result["marker in a visible environ"] == [] and result["marker in own env"] is False
    assert max(result["visible pids"]) < 100
