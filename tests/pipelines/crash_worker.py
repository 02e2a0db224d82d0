"""A worker process for tests/pipelines/test_faults.py: reconciles one run with a real backend, and with
--crash dies by SIGKILL right after the backend accepted a submission, before the controller's commit; with
--crash-archive it archives logs and dies as the first archive starts, after the commit that ended its attempt.

    python -m tests.pipelines.crash_worker RUN_ID local|kubernetes [--double URL] [--crash] [--crash-archive]
        [--rerun]

--rerun wraps the backend in Rerunning: a backend that runs a submission again instead of adopting
what exists (the bug the fault test must catch). Nothing here is in myapp: production code has no hook.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import uuid
from typing import Any


class Rerunning:
    """Every submit creates a new job (a fresh name) where a correct backend adopts the existing one."""

    def __init__(self, inner: Any):
        self.inner, self.name = inner, inner.name

    def submit(self, manifests: list[dict[str, Any]]) -> Any:
        job = manifests[0]["metadata"]["name"]
        fresh = f"{job[:55]}-{uuid.uuid4().hex[:6]}"
        return self.inner.submit(json.loads(json.dumps(manifests).replace(job, fresh)))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class CrashAfterSubmit:
    """The backend has accepted the job; the worker dies before the database hears of it."""

    def __init__(self, inner: Any):
        self.inner, self.name = inner, inner.name

    def submit(self, manifests: list[dict[str, Any]]) -> Any:
        self.inner.submit(manifests)
        os.kill(os.getpid(), signal.SIGKILL)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class CrashAtArchive:
    """The attempt's end is committed; the worker dies before its log is archived (tests/pipelines/
    test_attempt_cleanup.py)."""

    def write(self, ref: Any, lines: Any, *, keep_lines: bool = False) -> None:
        os.kill(os.getpid(), signal.SIGKILL)

    def read(self, ref: Any) -> list:
        return []


def make_backend(kind: str, double_url: str | None) -> Any:
    if kind == "local":
        from myapp.backends.local import LocalBackend
        from myapp.backends.registry import local_workdir

        return LocalBackend(local_workdir())
    from kubernetes import client

    from myapp.backends.kubernetes import KubernetesBackend, RetryPolicy

    configuration = client.Configuration(host=double_url)
    configuration.retries = False
    return KubernetesBackend(client.ApiClient(configuration), retry=RetryPolicy(attempts=2, base_delay=0.1))


def reconcile(run_id: int, backend: Any, archive: Any = None) -> str | None:
    from myapp.pipelines.controller import RunController

    state = RunController(lambda task: backend, archive=archive).reconcile(run_id)
    return state.value if state else None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("run_id", type=int)
    parser.add_argument("backend", choices=("local", "kubernetes"))
    parser.add_argument("--double")
    parser.add_argument("--crash", action="store_true")
    parser.add_argument("--crash-archive", action="store_true")
    parser.add_argument("--rerun", action="store_true")
    args = parser.parse_args()

    from myapp.app import create_app

    app = create_app()
    with app.app_context():
        backend = make_backend(args.backend, args.double)
        if args.rerun:
            backend = Rerunning(backend)
        if args.crash:
            backend = CrashAfterSubmit(backend)
        print(reconcile(args.run_id, backend, CrashAtArchive() if args.crash_archive else None))


if __name__ == "__main__":
    main()
