"""Reading running trials' metrics off their Kubernetes claims: one reader pod per trial, all at once."""
from __future__ import annotations

import json
import threading

from tests.support import unique


def test_a_look_reads_its_running_trials_claims_at_once(app, monkeypatch):
    from myapp.experiments import progress
    from myapp.models import TaskRun, TaskState
    from myapp.outputs import live
    from myapp.outputs.reader import Chunk

    monkeypatch.delenv("MYAPP_OUTPUTS_S3_BUCKET", raising=False)  # the claim is where outputs are
    monkeypatch.setenv("MYAPP_CLAIM_METRICS_SECONDS", "0")
    trials = 3
    # Each reader pod takes until every trial's is running: read one after another, the first would wait
    # for the others until the barrier gives up, and no copy would be made.
    together = threading.Barrier(trials, timeout=10)
    asked: list[int] = []

    class Cluster:
        def read_running_output(self, namespace: str, task_run_id: int, relative_dir: str, path: str,
                                length: int) -> Chunk:
            asked.append(task_run_id)
            together.wait()
            line = json.dumps({"step": 0, "name": "loss", "value": task_run_id / 1000}) + "\n"
            return Chunk(len(line), line.encode())

    namespace = unique("claims")
    attempts = [TaskRun(id=900_000 + n, pipeline_run_id=800_000 + n, task_id=1, backend="kubernetes",
                        state=TaskState.RUNNING, output_dir=f"{800_000 + n}/train/{900_000 + n}",
                        backend_ref={"namespace": namespace}) for n in range(trials)]
    with app.app_context():
        assert progress.read_claims([(a, namespace, Cluster()) for a in attempts]) == trials
        assert sorted(asked) == [a.id for a in attempts]
        for attempt in attempts:  # each trial's own copy, read by the look
            assert [(r["step"], r["value"]) for r in live.read(attempt, namespace)] == [(0, attempt.id / 1000)]
