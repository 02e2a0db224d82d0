"""LocalBackend lifecycle: idempotent submit, restart policies, backoff, cancel, adoption, kinds."""
from __future__ import annotations

import itertools
import json
import signal
import textwrap
import time
import urllib.error
import urllib.request

import psutil
import pytest

from myapp.backends.base import Backend, BackendError, JobState, UnsupportedKind
from tests.backends.local.support import (
    finished,
    host_pid,
    lines_of,
    pid_alive,
    python_script,
    render_template,
    running,
    set_command,
    workload,
)
from tests.support import wait_until

COUNT_STARTS = "open('starts', 'a').write('x'); n = len(open('starts').read())\n"


def test_implements_the_backend_protocol(backend):
    assert isinstance(backend, Backend) and backend.name == "local"


@pytest.mark.slow
def test_submit_twice_starts_nothing_new(backends):
    first = backends()
    manifests = render_template("python", {"script": COUNT_STARTS + "import time; time.sleep(1.0); print('run', n)"})
    ref = first.submit(manifests)
    assert first.submit(manifests) == ref
    second = backends()  # e.g. a restarted worker, retrying its submit
    assert second.submit(manifests) == ref
    assert finished(second, ref).state is JobState.SUCCEEDED
    assert lines_of(first, ref) == ["run 1"]
    assert (first.job_dir(ref) / "starts").read_text() == "x"


@pytest.mark.slow
def test_failing_twice_then_succeeding_within_backoff_limit(backend):
    script = COUNT_STARTS + "import sys\nif n < 3: sys.exit(f'attempt {n} failed')\nprint('succeeded on', n)"
    ref = backend.submit(render_template("python", {"script": script, "backoff_limit": 2}))
    status = finished(backend, ref)
    assert status.state is JobState.SUCCEEDED, status.reason
    assert status.replicas["Job"] == {"active": 0, "succeeded": 1, "failed": 0, "restarts": 2}
    assert lines_of(backend, ref) == ["attempt 1 failed", "attempt 2 failed", "succeeded on 3"]


@pytest.mark.slow
def test_exhausted_backoff_limit_fails_with_reason(backend):
    script = COUNT_STARTS + "print('working'); raise ValueError(f'boom {n}')"
    ref = backend.submit(render_template("python", {"script": script, "backoff_limit": 2}))
    status = finished(backend, ref)
    assert status.state is JobState.FAILED
    assert status.reason == "BackoffLimitExceeded: job-0 exited with code 1 after 2 restarts: ValueError: boom 3"
    assert status.exit_code == 1


@pytest.mark.slow
def test_restart_delay_grows_exponentially(backends):
    backend = backends(restart_delay=0.4)
    script = "import time; open('times', 'a').write(f'{time.time()}\\n'); raise SystemExit(1)"
    ref = backend.submit(render_template("python", {"script": script, "backoff_limit": 3}))
    assert finished(backend, ref).state is JobState.FAILED
    times = [float(t) for t in (backend.job_dir(ref) / "times").read_text().split()]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert len(gaps) == 3
    assert 0.35 < gaps[0] < gaps[1] < gaps[2]
    assert gaps[2] > 1.5  # 0.4, 0.8, 1.6


@pytest.mark.slow
def test_deadline_exceeded(backend):
    ref = backend.submit(render_template("python", {"script": "import time; time.sleep(60)", "timeout_seconds": 1}))
    status = finished(backend, ref)
    assert status.state is JobState.FAILED and status.reason.startswith("DeadlineExceeded")


def _leader_waits_for_worker() -> str:
    return "import os, time\nwhile not os.path.exists('worker-done'): time.sleep(0.02)\nprint('master done')"


@pytest.mark.slow
def test_training_replica_failure_fails_the_job_and_stops_the_rest(backend):
    manifests = render_template("pytorch-ddp", {"workers": 1})
    python_script(manifests, "import time; open('master-pid', 'w').write(str(__import__('os').getpid()));"
                             " time.sleep(60)", "Master")
    python_script(manifests, "import os, sys, time\nwhile not os.path.exists('go'): time.sleep(0.02)\n"
                             "print('bad data', file=sys.stderr); sys.exit(2)", "Worker")
    ref = backend.submit(manifests)
    folder = backend.job_dir(ref)
    wait_until(lambda: (folder / "master-pid").exists() and (folder / "master-pid").read_text(), what="the master")
    master = host_pid(backend, ref, "master-0", int((folder / "master-pid").read_text()))
    (folder / "go").touch()
    status = finished(backend, ref)
    assert status.state is JobState.FAILED
    assert status.reason == "worker-0 exited with code 2: bad data"  # restartPolicy Never: no restart
    assert not pid_alive(master)


@pytest.mark.slow
def test_training_on_failure_restarts_within_run_policy_backoff_limit(backend):
    manifests = render_template("pytorch-ddp", {"workers": 1})
    job = workload(manifests)
    job["spec"]["runPolicy"]["backoffLimit"] = 1
    job["spec"]["pytorchReplicaSpecs"]["Worker"]["restartPolicy"] = "OnFailure"
    python_script(manifests, _leader_waits_for_worker(), "Master")
    python_script(manifests, COUNT_STARTS + "import sys\nif n == 1: sys.exit('flaky')\n"
                                            "open('worker-done', 'w').close()", "Worker")
    ref = backend.submit(manifests)
    status = finished(backend, ref)
    assert status.state is JobState.SUCCEEDED, status.reason  # the Master's success is the job's
    assert status.replicas["Worker"]["restarts"] == 1


@pytest.mark.slow
def test_training_backoff_limit_counts_restarts_of_all_replicas(backend):
    manifests = render_template("pytorch-ddp", {"workers": 1})
    job = workload(manifests)
    job["spec"]["runPolicy"]["backoffLimit"] = 2
    job["spec"]["pytorchReplicaSpecs"]["Worker"]["restartPolicy"] = "OnFailure"
    python_script(manifests, _leader_waits_for_worker(), "Master")
    python_script(manifests, COUNT_STARTS + "raise SystemExit(f'worker failure {n}')", "Worker")
    status = finished(backend, backend.submit(manifests))
    assert status.state is JobState.FAILED
    assert status.reason == "BackoffLimitExceeded: worker-0 exited with code 1 after 2 restarts: worker failure 3"


@pytest.mark.slow
def test_exit_code_policy_retries_signals_only(backend):
    manifests = render_template("pytorch-ddp", {"workers": 1})
    workload(manifests)["spec"]["runPolicy"]["backoffLimit"] = 5
    workload(manifests)["spec"]["pytorchReplicaSpecs"]["Worker"]["restartPolicy"] = "ExitCode"
    python_script(manifests, _leader_waits_for_worker(), "Master")
    python_script(manifests, COUNT_STARTS + textwrap.dedent("""
        import os, signal, sys
        if n == 1:
            os.kill(os.getpid(), signal.SIGKILL)  # exit 137: retryable
        sys.exit('permanent error')  # exit 1: not retried
    """), "Worker")
    status = finished(backend, backend.submit(manifests))
    assert status.state is JobState.FAILED
    assert status.reason == "worker-0 exited with code 1 after 1 restart: permanent error"


def _spawn_tree() -> str:
    """Child and grandchild in the replica's group, plus one that escapes with setsid; all ignore
    SIGTERM... except the replica itself."""
    return textwrap.dedent("""
        import os, subprocess, sys, time
        grandchild = "import os, signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); " \\
                     "open('pid-grandchild', 'w').write(str(os.getpid())); time.sleep(300)"
        child = ("import subprocess, sys, os, time; open('pid-child', 'w').write(str(os.getpid())); "
                 f"subprocess.Popen([sys.executable, '-c', {grandchild!r}]); time.sleep(300)")
        subprocess.Popen([sys.executable, '-c', child])
        escaped = "import os, time; open('pid-escaped', 'w').write(str(os.getpid())); time.sleep(300)"
        subprocess.Popen([sys.executable, '-c', escaped], start_new_session=True)
        print('tree started', flush=True)
        time.sleep(300)
    """)


@pytest.mark.slow
def test_cancel_kills_the_whole_process_tree(backends):
    backend = backends(grace_period=0.5)
    ref = backend.submit(render_template("python", {"script": _spawn_tree()}))
    folder = backend.job_dir(ref)
    wait_until(lambda: all((folder / f"pid-{n}").exists() and (folder / f"pid-{n}").read_text()
                           for n in ("child", "grandchild", "escaped")), what="the process tree")
    pids = [host_pid(backend, ref, "job-0", int((folder / f"pid-{n}").read_text()))
            for n in ("child", "grandchild", "escaped")]
    assert all(pid_alive(pid) for pid in pids)
    assert backend.status(ref).state is JobState.RUNNING
    backend.cancel(ref)
    status = backend.status(ref)
    assert status.state is JobState.CANCELLED and status.reason == "cancelled"
    wait_until(lambda: not any(pid_alive(pid) for pid in pids), timeout=5, what="the tree to die")
    backend.cancel(ref)  # idempotent
    assert backend.status(ref).state is JobState.CANCELLED


@pytest.mark.slow
def test_a_new_backend_instance_answers_for_running_jobs(backends):
    first = backends()
    manifests = render_template("python", {"script": COUNT_STARTS + "import time\nprint('up', flush=True)\n"
                                                                    "time.sleep(300)"})
    ref = first.submit(manifests)
    wait_until(lambda: lines_of(first, ref) == ["up"], what="the job to print")
    second = backends()  # as in a restarted worker: it started nothing of this job
    assert second.status(ref).state is JobState.RUNNING
    assert second.submit(manifests) == ref
    assert lines_of(second, ref) == ["up"]
    second.cancel(ref)
    assert second.status(ref).state is JobState.CANCELLED
    assert (second.job_dir(ref) / "starts").read_text() == "x"


@pytest.mark.slow
def test_dead_supervisor_is_reported_and_its_replicas_stopped(backend):
    ref = backend.submit(render_template("python", {"script": "import os, time; "
                                                              "open('pid', 'w').write(str(os.getpid())); "
                                                              "time.sleep(300)"}))
    folder = backend.job_dir(ref)
    wait_until(lambda: (folder / "pid").exists() and (folder / "pid").read_text(), what="the replica")
    replica = host_pid(backend, ref, "job-0", int((folder / "pid").read_text()))
    supervisor = psutil.Process(int(__import__("json").loads((folder / ".myapp/supervisor.json").read_text())["pid"]))
    supervisor.kill()
    supervisor.wait(5)
    status = backend.status(ref)
    assert status.state is JobState.FAILED and "supervisor" in status.reason and "died" in status.reason
    wait_until(lambda: not pid_alive(replica), timeout=5, what="the orphaned replica to be stopped")


def test_unknown_job_raises(backend):
    from myapp.backends.base import JobRef, ObjectRef

    ref = JobRef("local", "nowhere", "nothing-1-1", ObjectRef("batch/v1", "Job", "nowhere", "nothing-1-1"))
    with pytest.raises(BackendError):
        backend.status(ref)
    backend.cancel(ref)  # nothing to do


def test_kaniko_image_build_is_unsupported(backend):
    manifests = render_template("image-build", {"destination": "registry.example.com/team/app:1.0"})
    with pytest.raises(UnsupportedKind, match="Kaniko"):
        backend.submit(manifests)


def test_volcano_job_is_unsupported(backend):
    with pytest.raises(UnsupportedKind, match="Volcano"):
        backend.submit(render_template("volcano-job"))


def test_mpijob_without_mpirun_is_unsupported(backend, monkeypatch):
    from myapp.backends.local import sandbox

    sandbox.detect()  # found (and kept) before `which` finds nothing: bubblewrap is not what this test removes
    monkeypatch.setattr("myapp.backends.local.plan.shutil.which", lambda *a, **k: None)
    with pytest.raises(UnsupportedKind, match="mpirun"):
        backend.submit(render_template("horovod-mpi"))


def test_command_only_inside_the_image_is_refused(backend):
    manifests = render_template("python")
    set_command(manifests, ["python", "/opt/not-in-any-template/main.py"])
    with pytest.raises(BackendError, match=r"/opt/not-in-any-template/main\.py is inside the image"):
        backend.submit(manifests)


@pytest.mark.slow
def test_service_runs_with_a_local_url_and_crash_loops_visibly(backend):
    server = ("import http.server, sys\n"
              "port = int(sys.argv[sys.argv.index('--port') + 1])\n"
              "print('listening', port, flush=True)\n"
              "http.server.HTTPServer(('127.0.0.1', port), http.server.SimpleHTTPRequestHandler).serve_forever()")
    manifests = render_template("deploy-service", {"service_name": "echo", "version": "v1", "port": 8080})
    container = workload(manifests)["spec"]["template"]["spec"]["containers"][0]
    container["command"] = ["python", "-c", server]  # keeps the rendered args: --model-path ... --port 8080
    ref = backend.submit(manifests)
    status = running(backend, ref)
    assert status.state is JobState.RUNNING and status.url.startswith("http://127.0.0.1:")
    assert not status.url.endswith(":8080")  # the containerPort is remapped to a free host port
    with urllib.request.urlopen(status.url + "/", timeout=5) as response:
        assert response.status == 200
    assert lines_of(backend, ref)[0] == f"listening {status.url.rsplit(':', 1)[1]}"
    backend.cancel(ref)

    crashing = render_template("deploy-service", {"service_name": "crash", "version": "v1"})
    python_script(crashing, "import sys; sys.exit('no model')")
    ref = backend.submit(crashing)
    status = backend.wait(ref, timeout=20, until=lambda s: "restart 2" in s.reason)
    assert status.state is JobState.PENDING and status.url is None
    assert status.reason.startswith("CrashLoopBackOff: deployment-0 exited with code 1")
    assert status.reason.endswith(": no model")
    backend.cancel(ref)


def _fake_jupyter(tmp_path, module: str):
    """A stand-in JupyterLab: `<base_url>api` answers anyone (the readiness probe), the rest only
    `Authorization: token <JUPYTER_TOKEN>`."""
    package = tmp_path / "fake-jupyter" / module
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text(textwrap.dedent("""
        import http.server, os, sys
        opts = dict(a[2:].split('=', 1) for a in sys.argv[1:] if '=' in a)
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                base = opts['ServerApp.base_url']
                token = self.headers.get('Authorization') == 'token ' + os.environ['JUPYTER_TOKEN']
                ok = self.path.startswith(base) and (self.path == base + 'api' or token)
                self.send_response(200 if ok else 403)
                self.end_headers()
        http.server.HTTPServer((opts['ip'], int(opts['port'])), Handler).serve_forever()
    """))
    return package.parent


@pytest.mark.slow
def test_notebook_runs_a_local_jupyter_with_a_token(backends, tmp_path):
    """The token comes from the notebook's Secret (rendering names it) into Jupyter's environment: never
    in its argv nor in the URL; its root is the work claim's folder, which outlives the attempt."""
    from myapp.backends.base import JobRef
    from myapp.rendering.kinds.notebook import token_secret_name, work_claim_name

    path = _fake_jupyter(tmp_path, "jupyterlab")
    backend = backends(extra_env={"PYTHONPATH": str(path)}, read_only_paths=[path])  # visible to the sandbox
    manifests = render_template("notebook", {"name": "alice"})
    namespace = workload(manifests)["metadata"].get("namespace") or "default"
    backend.put_secret(namespace, token_secret_name("alice"), {"token": "s3cret-t0ken"})
    ref = backend.submit(manifests)
    status = running(backend, ref)
    assert status.state is JobState.RUNNING
    assert status.url.startswith("http://127.0.0.1:") and status.url.endswith("/alice/lab")
    assert "token" not in status.url
    with pytest.raises(urllib.error.HTTPError, match="403"):
        urllib.request.urlopen(status.url, timeout=5)
    request = urllib.request.Request(status.url, headers={"Authorization": "token s3cret-t0ken"})
    with urllib.request.urlopen(request, timeout=5) as response:
        assert response.status == 200
    spec = json.loads((backend.job_dir(ref) / ".myapp" / "spec.json").read_text())
    argv = spec["replicas"][0]["containers"][-1]["argv"]
    work = backend.volume_dir(namespace, work_claim_name("alice"))
    assert "s3cret-t0ken" not in " ".join(argv) and f"--ServerApp.root_dir={work}" in argv and work.is_dir()
    backend.cancel(ref)
    kept = tuple(o for o in ref.objects if o.kind != "PersistentVolumeClaim")
    backend.cleanup(JobRef(ref.backend, ref.namespace, ref.job_name, ref.primary, kept), backend_archive(tmp_path))
    assert work.is_dir()  # a stop keeps the work folder ...
    backend.cleanup(ref, backend_archive(tmp_path))
    assert not work.exists()  # ... a cleanup naming the claim (a delete) removes it


def test_notebook_without_jupyter_is_unsupported(backends, tmp_path):
    from myapp.rendering.kinds.notebook import token_secret_name

    backend = backends(python="/usr/bin/python3")  # Debian's Python: no JupyterLab there
    manifests = render_template("notebook", {"name": "bob"})
    backend.put_secret(workload(manifests)["metadata"].get("namespace") or "default", token_secret_name("bob"),
                       {"token": "t"})
    with pytest.raises(UnsupportedKind, match="pip install jupyterlab"):
        backend.submit(manifests)


def backend_archive(tmp_path):
    from myapp.backends.archive import FileLogArchive

    return FileLogArchive(tmp_path / "archive")


@pytest.mark.slow
def test_metrics_sample_cpu_and_memory_of_the_whole_tree(backend):
    burn = textwrap.dedent("""
        import subprocess, sys, time
        child = "import time\\nblob = bytearray(80 * 2**20)\\nend = time.time() + 30\\nwhile time.time() < end: pass"
        subprocess.Popen([sys.executable, '-c', child])
        time.sleep(30)
    """)
    ref = backend.submit(render_template("python", {"script": burn}))
    start = time.time()
    samples = wait_until(lambda: [s for s in backend.metrics(ref) if s.cpu_cores and s.cpu_cores > 0.5
                                  and s.memory_bytes > 80 * 2**20], timeout=20, what="a busy sample")
    assert samples[0].replica == "job-0" and samples[0].gpu_utilization is None
    later = backend.metrics(ref, since=samples[-1].timestamp)
    assert all(s.timestamp > samples[-1].timestamp for s in later)
    assert all(s.timestamp >= start - 1 for s in backend.metrics(ref))
    backend.cancel(ref)


@pytest.mark.slow
def test_sigterm_ignoring_replica_is_killed_after_the_grace_period(backends):
    backend = backends(grace_period=1.0)
    script = ("import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('stubborn', flush=True); "
              "time.sleep(300)")
    manifests = render_template("python", {"script": script})
    assert workload(manifests)["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] == 30  # the template's
    workload(manifests)["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 1  # a pod's grace wins
    ref = backend.submit(manifests)
    wait_until(lambda: lines_of(backend, ref) == ["stubborn"], what="the replica")
    started = time.monotonic()
    backend.cancel(ref)
    assert 0.9 < time.monotonic() - started < 8
    assert backend.status(ref).state is JobState.CANCELLED


@pytest.mark.slow
def test_cleanup_archives_logs_and_removes_the_folder(backend, tmp_path):
    from myapp.backends.archive import FileLogArchive

    ref = backend.submit(render_template("python", {"script": "for i in range(5): print('line', i)"}))
    assert finished(backend, ref).state is JobState.SUCCEEDED
    archive = FileLogArchive(tmp_path / "archive")
    backend.cleanup(ref, archive)
    assert [(x.replica, x.seq, x.line) for x in archive.read(ref)] == [("job-0", i + 1, f"line {i}") for i in range(5)]
    assert not backend.job_dir(ref).exists()
    backend.cleanup(ref, archive)  # idempotent


@pytest.mark.slow
def test_cleanup_of_a_running_job_stops_it_first(backend, tmp_path):
    from myapp.backends.archive import FileLogArchive

    ref = backend.submit(render_template("python", {"script": "import os, time; print(os.getpid(), flush=True); "
                                                              "time.sleep(300)"}))
    inner = int(wait_until(lambda: lines_of(backend, ref), what="the pid")[0])
    pid = host_pid(backend, ref, "job-0", inner)
    backend.cleanup(ref, FileLogArchive(tmp_path / "archive"))
    assert not pid_alive(pid)
    assert FileLogArchive(tmp_path / "archive").read(ref)[0].line == str(inner)


@pytest.mark.slow
def test_signal_exit_code_is_reported_like_a_container_runtime(backend):
    script = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
    status = finished(backend, backend.submit(render_template("python", {"script": script})))
    assert status.state is JobState.FAILED and status.exit_code == 128 + signal.SIGKILL
    assert status.reason == "BackoffLimitExceeded: job-0 exited with code 137"


def test_a_link_planted_where_a_claim_goes_refuses_the_start_as_the_backends_error(backends, tmp_path):
    """A project that put a link where its claims' folder goes (a job of its own can) gets a start refused
    with a permanent backend error naming why, and nothing is made where the link points."""
    from myapp.backends.base import PermanentBackendError
    from myapp.rendering.kinds.notebook import token_secret_name, work_claim_name

    backend = backends()
    manifests = render_template("notebook", {"name": "linked"})
    namespace = workload(manifests)["metadata"].get("namespace") or "default"
    backend.put_secret(namespace, token_secret_name("linked"), {"token": "t0ken"})
    volumes = backend.volume_dir(namespace, work_claim_name("linked")).parent
    volumes.parent.mkdir(parents=True, exist_ok=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    volumes.symlink_to(elsewhere)
    with pytest.raises(PermanentBackendError, match="cannot be made"):
        backend.submit(manifests)
    assert list(elsewhere.iterdir()) == []
