"""Reading an attempt's logs and metrics through myapp.pipelines.observation: live from the backend while it
runs, from the archive and the stored samples once finished; filters and the follow cursor; and the
task-run API endpoints that use it."""
from __future__ import annotations

import itertools

import pytest

from tests.support import unique
from tests.world import created

LIVE = [("master-0", 1, "epoch 1 loss 0.9"), ("worker-0", 1, "epoch 1 loss 0.8"),
        ("master-0", 2, "epoch 2 loss 0.5"), ("worker-0", 2, "epoch 2 loss 0.4"), ("master-0", 3, "done")]
ATTEMPTS = itertools.count(1)  # attempt numbers are unique per (run, task)


class RecordingBackend:
    """Serves LIVE as the attempt's current log (honouring `after`) and records every call;
    `gone=True` behaves like a backend whose job was already cleaned up."""

    name = "recording"

    def __init__(self, gone: bool = False):
        from myapp.backends import LogLine

        self.lines = [LogLine(r, s, text, 100.0 + i) for i, (r, s, text) in enumerate(LIVE)]
        self.gone = gone
        self.calls: list[tuple] = []

    def logs(self, ref, follow=False, after=None):
        from myapp.backends import BackendError

        self.calls.append(("logs", ref.job_name, follow, dict(after or {})))
        if self.gone:
            raise BackendError(f"no job {ref.job_name}")
        return iter([ln for ln in self.lines if ln.seq > (after or {}).get(ln.replica, 0)])

    def metrics(self, ref, since=None):
        from myapp.backends import MetricSample

        self.calls.append(("metrics", ref.job_name))
        if self.gone:
            raise AssertionError("a finished attempt's metrics are the stored ones")
        return [MetricSample(timestamp=5.0, replica="master-0", cpu_cores=1.5, memory_bytes=2**30)]


@pytest.fixture()
def backend(monkeypatch):
    from myapp.pipelines import observation

    backend = RecordingBackend()
    monkeypatch.setattr(observation, "backend_for", lambda task: backend)
    return backend


@pytest.fixture()
def task_id(user, catalog):
    project = created(user.post("/api/v1/project/", json={"name": unique("p")}))
    pipe = created(user.post("/api/v1/pipeline/", json={"project_id": project["id"], "name": "obs"}))
    graph = user.put(f"/api/v1/pipeline/{pipe['id']}/graph", json={"tasks": [
        {"key": "t", "name": "train", "template_id": catalog}]}).get_json()
    run = created(user.post("/api/v1/pipeline_run/", json={"pipeline_id": pipe["id"]}))
    return {"project_id": project["id"], "run_id": run["id"], "task_id": graph["tasks"][0]["id"]}


def make_attempt(app, ids, state="running", submitted=True, metrics=None, archived=None, manifests=()):
    """A task run row (as the controller writes it), optionally with an archived log; returns its id."""
    from myapp.backends import JobRef, LogLine, ObjectRef
    from myapp.backends.registry import log_archive
    from myapp.extensions import db
    from myapp.models import TaskRun, TaskState

    job = ObjectRef("batch/v1", "Job", "ns", unique("job"))
    ref = JobRef(backend="recording", namespace="ns", job_name=job.name, primary=job, objects=(job,))
    with app.app_context():
        if archived is not None:
            log_archive().write(ref, [LogLine(r, s, text, 1.0 + i) for i, (r, s, text) in enumerate(archived)])
        row = TaskRun(project_id=ids["project_id"], pipeline_run_id=ids["run_id"], task_id=ids["task_id"],
                      attempt=next(ATTEMPTS), state=TaskState(state), backend_ref=ref.as_dict() if submitted else None,
                      manifests=list(manifests), metrics=metrics)
        db.session.add(row)
        db.session.commit()
        return row.id


def attempt_row(attempt_id):
    from myapp.extensions import db
    from myapp.models import TaskRun

    return db.session.get(TaskRun, attempt_id)


def triples(lines):
    return [(ln.replica, ln.seq, ln.line) for ln in lines]


def test_a_running_attempt_is_read_live_after_the_cursor(app, backend, task_id):
    from myapp.pipelines.observation import read_lines, read_metrics

    attempt_id = make_attempt(app, task_id)
    with app.app_context():
        attempt = attempt_row(attempt_id)
        assert triples(read_lines(attempt)) == LIVE
        assert triples(read_lines(attempt, {"master-0": 2, "worker-0": 2})) == [("master-0", 3, "done")]
        assert backend.calls[-1] == ("logs", attempt.backend_ref["job_name"], False, {"master-0": 2, "worker-0": 2})
        assert read_metrics(attempt) == [{"timestamp": 5.0, "replica": "master-0", "cpu_cores": 1.5,
                                          "memory_bytes": 2**30, "gpu_utilization": None, "gpu_memory_bytes": None}]


def test_a_finished_attempt_is_read_from_its_archive_and_stored_metrics(app, backend, task_id):
    from myapp.pipelines.observation import read_lines, read_metrics

    backend.gone = True  # cleaned up: asking the backend would fail
    stored = [{"timestamp": 1.0, "replica": "master-0", "cpu_cores": 0.25, "memory_bytes": 2**20,
               "gpu_utilization": None, "gpu_memory_bytes": None}]  # as the controller keeps them
    archived = [("master-0", 1, "archived a"), ("master-0", 2, "archived b"), ("worker-0", 1, "archived c")]
    attempt_id = make_attempt(app, task_id, state="succeeded", metrics=stored, archived=archived)
    empty_id = make_attempt(app, task_id, state="failed", archived=[])
    with app.app_context():
        assert triples(read_lines(attempt_row(attempt_id))) == archived
        assert triples(read_lines(attempt_row(attempt_id), {"master-0": 1})) == [archived[1], archived[2]]
        assert read_metrics(attempt_row(attempt_id)) == stored
        # The job printed nothing: its archive is empty, and that is the answer.
        assert read_lines(attempt_row(empty_id)) == [] and read_metrics(attempt_row(empty_id)) == []
    assert backend.calls == []


def test_a_finished_attempt_without_archive_is_still_read_from_the_backend(app, backend, task_id):
    """Cleanup failed before archiving: the pods / files are still there."""
    from myapp.pipelines.observation import read_lines

    attempt_id = make_attempt(app, task_id, state="failed")
    with app.app_context():
        assert triples(read_lines(attempt_row(attempt_id), {"master-0": 3, "worker-0": 1})) == [
            ("worker-0", 2, "epoch 2 loss 0.4")]
    assert [call[0] for call in backend.calls] == ["logs"]


def test_an_attempt_never_submitted_has_nothing_to_read(app, backend, task_id):
    from myapp.pipelines.observation import read_lines, read_metrics

    attempt_id = make_attempt(app, task_id, state="pending", submitted=False)
    with app.app_context():
        assert read_lines(attempt_row(attempt_id)) == [] and read_metrics(attempt_row(attempt_id)) == []
    assert backend.calls == []


def test_log_tail_advances_over_filtered_lines_and_never_repeats(app, backend, task_id):
    from myapp.pipelines.observation import LogFilter, LogTail

    attempt_id = make_attempt(app, task_id)
    tail = LogTail({"master-0": 1}, LogFilter(replica="worker-0", search="loss 0.4"))
    with app.app_context():
        attempt = attempt_row(attempt_id)
        assert triples(tail.read(attempt)) == [("worker-0", 2, "epoch 2 loss 0.4")]
        assert tail.cursor == {"master-0": 3, "worker-0": 2}  # past the lines the filter dropped
        assert tail.read(attempt) == []
        backend.lines.append(type(backend.lines[0])("worker-0", 3, "epoch 3 loss 0.4", 200.0))
        assert triples(tail.read(attempt)) == [("worker-0", 3, "epoch 3 loss 0.4")]


def test_log_filter_by_replica_and_text():
    from myapp.backends import LogLine
    from myapp.pipelines.observation import LogFilter

    line = LogLine("worker-1", 7, "accuracy 0.95", 1.0)
    assert LogFilter()(line) and LogFilter("worker-1", "accuracy")(line)
    assert not LogFilter(replica="worker-0")(line) and not LogFilter(search="loss")(line)


def test_task_run_logs_and_metrics_endpoints_read_through_observation(app, user, make_user, backend, task_id):
    attempt_id = make_attempt(app, task_id)
    url = f"/api/v1/task_run/{attempt_id}"
    body = user.get(f"{url}/logs").get_json()
    assert body["replicas"] == ["master-0", "worker-0"]
    assert [(i["replica"], i["seq"], i["line"]) for i in body["items"]] == LIVE
    assert body["items"][0]["timestamp"] == 100.0
    some = user.get(f"{url}/logs", query_string={"replica": "master-0", "search": "epoch", "limit": 1}).get_json()
    assert [i["line"] for i in some["items"]] == ["epoch 2 loss 0.5"]
    assert some["replicas"] == ["master-0", "worker-0"]  # every replica, for the UI's picker
    assert user.get(f"{url}/metrics").get_json()["items"][0]["cpu_cores"] == 1.5
    assert make_user().get(f"{url}/logs").status_code == 404  # another project's attempt
    download = user.get(f"{url}/log_download", query_string={"search": "loss"})
    assert download.mimetype == "text/plain" and download.get_data(as_text=True) == "".join(
        f"1970-01-01T00:01:4{i}.000Z [{replica}] {text}\n" for i, (replica, _, text) in enumerate(LIVE[:4]))
    assert make_user().get(f"{url}/log_download").status_code == 404


def ddp_job(workers: int) -> dict:
    """A PyTorchJob's manifest as rendering submits it, reduced to what names its replicas."""
    pod = {"template": {"spec": {"containers": [{"name": "pytorch", "image": "python"}]}}}
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "train"},
            "spec": {"pytorchReplicaSpecs": {"Master": {"replicas": 1, **pod}, "Worker": {"replicas": workers, **pod}}}}


def test_the_replica_list_names_every_replica_of_the_job_also_those_without_lines(app, user, backend, task_id):
    """DDP's workers often print nothing: the picker still lists them (the metrics tab charts them)."""
    backend.gone = True
    archived = [("master-0", 1, "epoch 1"), ("master-0", 2, "model saved")]
    attempt_id = make_attempt(app, task_id, state="succeeded", archived=archived, manifests=[ddp_job(2)])
    body = user.get(f"/api/v1/task_run/{attempt_id}/logs", query_string={"limit": 1}).get_json()
    assert body["replicas"] == ["master-0", "worker-0", "worker-1"]
    assert [i["replica"] for i in body["items"]] == ["master-0"]


def test_a_live_read_the_backend_cannot_answer_is_503_and_a_problem_event(app, user, backend, task_id):
    attempt_id = make_attempt(app, task_id)
    backend.gone = True  # e.g. the cluster is unreachable
    resp = user.get(f"/api/v1/task_run/{attempt_id}/logs")
    assert resp.status_code == 503, resp.get_json()
    assert "unavailable" in resp.get_json()["message"] and "no job" in resp.get_json()["message"]

    from myapp.api import streams

    with app.test_request_context(), app.app_context():
        events = streams.log_events(attempt_id, streams.LogFilter(), {}, 100)
        next(events)  # the retry hint
        problem = next(events)
    assert problem.startswith("event: problem\n") and "no job" in problem
