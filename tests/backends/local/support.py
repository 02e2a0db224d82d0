"""Helpers of the local backend tests (tests/backends/local, tests/security); their fixtures are in
tests/backends/local/conftest.py."""
from __future__ import annotations

import itertools
import json
import os
import time
from pathlib import Path
from typing import Any

from myapp.backends.base import JobRef, JobState
from myapp.backends.local import LocalBackend
from myapp.rendering import RenderContext, render
from myapp.rendering.catalog import get_template

NAMESPACE = "proj-local"
_run_ids = itertools.count(int(time.time()) % 100000 * 100 + os.getpid() % 100)

# A script the replicas of the env tests run instead of the template's entry code.
PRINT_ENV = "import json, os; print('ENV ' + json.dumps(dict(os.environ), sort_keys=True), flush=True)"


def print_env_and_wait(replicas: int) -> str:
    """PRINT_ENV, then wait until all ``replicas`` have printed (markers in the shared cwd): the
    leader's success ends the job and stops the others, as the operators do."""
    return PRINT_ENV + f"""
import glob, time
open('printed-' + os.environ['HOSTNAME'], 'w').close()
deadline = time.time() + 30
while len(glob.glob('printed-*')) < {replicas} and time.time() < deadline:
    time.sleep(0.02)
"""


def make_ctx(task: str = "job", attempt: int = 1, namespace: str = NAMESPACE) -> RenderContext:
    return RenderContext(project="local", namespace=namespace, pipeline="backend-tests", run_id=next(_run_ids),
                         task=task, attempt=attempt, service_account="proj-local-runner")


def render_template(name: str, args: dict[str, Any] | None = None, *, task: str = "job",
                    resources: dict[str, Any] | None = None, ctx: RenderContext | None = None) -> list[dict[str, Any]]:
    return render(get_template(name), args or {}, ctx or make_ctx(task), resources)


def workload(manifests: list[dict[str, Any]]) -> dict[str, Any]:
    from myapp.rendering.pod import pod_templates

    return next(m for m in manifests if list(pod_templates(m)))


def set_command(manifests: list[dict[str, Any]], argv: list[str], replica_type: str | None = None) -> None:
    """Replace the main container's command (+args) of every pod template (or of one type)."""
    from myapp.rendering.pod import pod_templates

    for pod in pod_templates(workload(manifests)):
        if replica_type and f".{replica_type}." not in pod.path:
            continue
        container = pod.template["spec"]["containers"][0]
        container["command"] = list(argv)
        container.pop("args", None)


def python_script(manifests: list[dict[str, Any]], code: str, replica_type: str | None = None) -> None:
    set_command(manifests, ["python", "-c", code], replica_type)


def env_of(backend: LocalBackend, ref: JobRef) -> dict[str, dict[str, str]]:
    """{replica: environment} from the PRINT_ENV lines of a finished job."""
    out = {}
    for line in backend.logs(ref):
        if line.line.startswith("ENV "):
            out[line.replica] = json.loads(line.line[4:])
    return out


def lines_of(backend: LocalBackend, ref: JobRef, replica: str | None = None) -> list[str]:
    return [line.line for line in backend.logs(ref) if replica is None or line.replica == replica]


def pid_alive(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def host_pid(backend: LocalBackend, ref: JobRef, replica: str, inner: int) -> int:
    """The host pid of the process a sandboxed replica knows as ``inner`` (it has its own PID
    namespace, so ``os.getpid()`` there is small and means nothing outside)."""
    import psutil

    state = json.loads((backend.job_dir(ref) / ".myapp" / "state.json").read_text())
    leader = psutil.Process(state["replicas"][replica]["pid"])
    for proc in [leader, *leader.children(recursive=True)]:
        try:
            status = Path(f"/proc/{proc.pid}/status").read_text()
        except FileNotFoundError:
            continue
        nspids = next(line.split()[1:] for line in status.splitlines() if line.startswith("NSpid:"))
        if int(nspids[-1]) == inner:
            return proc.pid
    raise AssertionError(f"no process {inner} in {replica} of {ref.job_name}")


class Backends:
    """Creates LocalBackends on one workdir with fast test settings; stops every job at teardown."""

    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.created: list[LocalBackend] = []

    def __call__(self, **kwargs: Any) -> LocalBackend:
        options = {"restart_delay": 0.05, "grace_period": 2.0, "metrics_interval": 0.25, "gpus": []}
        options.update(kwargs)
        backend = LocalBackend(self.workdir, **options)
        self.created.append(backend)
        return backend

    def stop_all(self) -> None:
        backend = LocalBackend(self.workdir, gpus=[], grace_period=1.0)
        for spec in self.workdir.glob("*/*/.myapp/spec.json"):
            ref = JobRef.from_dict(json.loads(spec.read_text())["ref"])
            try:
                backend.cancel(ref)
            except Exception:  # best effort at teardown
                pass


def finished(backend: LocalBackend, ref: JobRef, timeout: float = 60.0):
    return backend.wait(ref, timeout=timeout)


def running(backend: LocalBackend, ref: JobRef, timeout: float = 30.0):
    return backend.wait(ref, timeout=timeout, until=lambda s: s.state is JobState.RUNNING
                        or s.state in (JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED))
