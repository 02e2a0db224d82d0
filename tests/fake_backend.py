"""A fast in-memory backend that behaves like a real one where the controller relies on it:
idempotent submit (adopt by job name), scripted outcomes, injectable submit errors."""
from __future__ import annotations

import threading
from collections import Counter, defaultdict

from myapp.backends import Backend, BackendError, JobRef, JobState, LogLine, MetricSample, ObjectRef, Status
from myapp.rendering.contract import JOB_NAME_LABEL, TASK_LABEL


class FakeBackend(Backend):  # inherits changed_runs: no events, timers only
    name = "fake"

    def __init__(self, script: dict[str, list[str]] | None = None, fail_submits: int = 0):
        # script: task name -> outcome per attempt ("succeeded" / "failed" / "hang")
        self.script = script or {}
        self.fail_submits = fail_submits
        self.creations: Counter[str] = Counter()  # job name -> objects created (must stay 1)
        self.submits: Counter[str] = Counter()
        self.polls: Counter[str] = Counter()
        self.cancelled: set[str] = set()
        self.cleaned: Counter[str] = Counter()
        self.jobs: dict[str, dict] = {}
        self.attempts: defaultdict[str, int] = defaultdict(int)
        self.secrets: dict[tuple[str, str], dict[str, str]] = {}  # (namespace, name) -> data
        self.secret_puts: Counter[tuple[str, str]] = Counter()
        self.lock = threading.Lock()

    def submit(self, manifests):
        with self.lock:
            if self.fail_submits > 0:
                self.fail_submits -= 1
                raise BackendError("injected: API server unavailable")
            primary = manifests[0]
            meta = primary["metadata"]
            job = meta["labels"][JOB_NAME_LABEL] if JOB_NAME_LABEL in meta["labels"] else meta["name"]
            self.submits[job] += 1
            if job not in self.jobs:  # create; else adopt what exists
                self.creations[job] += 1
                task = meta["labels"][TASK_LABEL]
                self.attempts[task] += 1
                outcomes = self.script.get(task, ["succeeded"])
                self.jobs[job] = {"task": task, "outcome": outcomes[min(self.attempts[task], len(outcomes)) - 1],
                                  "manifests": manifests,
                                  # what the job could mount when it was created (Secrets of its namespace)
                                  "secrets": {n: dict(d) for (ns, n), d in self.secrets.items()
                                              if ns == meta["namespace"]}}
            ref = ObjectRef(primary["apiVersion"], primary["kind"], meta["namespace"], meta["name"])
            return JobRef(self.name, meta["namespace"], job, ref, (ref,))

    def status(self, ref):
        with self.lock:
            job = self.jobs[ref.job_name]
            if ref.job_name in self.cancelled:
                return Status(JobState.CANCELLED, "cancelled")
            self.polls[ref.job_name] += 1
            if job["outcome"] == "hang" or self.polls[ref.job_name] < 2:
                return Status(JobState.RUNNING)
            if job["outcome"] == "failed":
                return Status(JobState.FAILED, "master-0 exited with code 1", exit_code=1)
            return Status(JobState.SUCCEEDED, exit_code=0)

    def cancel(self, ref):
        with self.lock:
            self.cancelled.add(ref.job_name)

    def logs(self, ref, follow=False, after=None):
        return iter(())

    def metrics(self, ref, since=None):
        return [MetricSample(timestamp=1.0, replica="master-0", cpu_cores=0.5, memory_bytes=2**20)]

    def cleanup(self, ref, archive):
        with self.lock:
            self.cleaned[ref.job_name] += 1
        archive.write(ref, [LogLine("master-0", 1, f"log of {ref.job_name}", 0.0)])

    def put_secret(self, namespace, name, data):
        with self.lock:
            self.secrets[(namespace, name)] = dict(data)
            self.secret_puts[(namespace, name)] += 1

    def delete_secret(self, namespace, name):
        with self.lock:
            self.secrets.pop((namespace, name), None)
