"""Data between tasks on the local backend: the second task reads the first task's output file by
reference, each attempt writes only its own folder, and the run keeps (and the API lists, previews and
serves) what each attempt wrote and the metrics it reported."""
from __future__ import annotations

import io
import time
import zipfile

import sqlalchemy as sa

from tests.pipelines.support import make_pipeline

PRODUCER = """
import json, os
out = os.environ["MYAPP_OUTPUT_DIR"]
with open(os.path.join(out, "data.csv"), "w") as fh:
    fh.write("x,y\\n1,2\\n3,4\\n")
with open(os.path.join(out, "metrics.jsonl"), "w") as fh:
    for step, loss in enumerate([0.9, 0.5, 0.25]):
        fh.write(json.dumps({"step": step, "name": "loss", "value": loss}) + "\\n")
    fh.write("not json\\n")
"""
CONSUMER = """
import os
path = '{{ tasks.make.outputs.data.csv }}'
rows = open(path).read().splitlines()
print("read", len(rows), "rows from", path)
try:
    open(path, "a").write("tampered")
    print("WROTE UPSTREAM")
except OSError as exc:
    print("upstream is read-only:", type(exc).__name__)
open(os.path.join(os.environ["MYAPP_OUTPUT_DIR"], "summary.txt"), "w").write(f"{len(rows)} rows\\n")
"""


def run_to_end(app, backend, run_id, timeout=90.0):
    from myapp.pipelines.controller import RunController

    controller = RunController(lambda task: backend)
    deadline = time.monotonic() + timeout
    with app.app_context():
        while time.monotonic() < deadline:
            state = controller.reconcile(run_id).value
            if state in ("succeeded", "failed", "cancelled"):
                return state
            time.sleep(0.2)
    raise AssertionError(f"run {run_id} still {state} after {timeout} s")


def test_a_task_reads_its_upstream_output_by_reference(app, catalog, admin):
    from myapp.backends.local import LocalBackend
    from myapp.backends.registry import local_workdir
    from myapp.extensions import db
    from myapp.models import Project, Task, TaskRun
    from myapp.pipelines.observation import read_lines

    run_id, _ = make_pipeline(app, catalog, {
        "make": {"args": {"script": PRODUCER, "outputs": ["data.csv"]}},
        "use": {"args": {"script": CONSUMER}},
    }, [("make", "use")])
    with app.app_context():
        backend = LocalBackend(local_workdir(), gpus=[], restart_delay=0.05, poll_interval=0.02)
    assert run_to_end(app, backend, run_id) == "succeeded"
    with app.app_context():
        rows = dict(db.session.execute(
            sa.select(Task.name, TaskRun).join(Task).where(TaskRun.pipeline_run_id == run_id)).tuples().all())
        make, use = rows["make"], rows["use"]
        assert make.output_dir == f"{run_id}/make/1" and use.output_dir == f"{run_id}/use/1"
        log = "\n".join(line.line for line in read_lines(use))
        assert f"read 3 rows from /myapp/outputs/{run_id}/make/1/data.csv" in log
        assert "upstream is read-only" in log and "WROTE UPSTREAM" not in log
        # The consumer's manifests carry the path as plain data; the producer's folder is its own.
        job = use.manifests[0]["spec"]["template"]["spec"]["containers"][0]
        assert f"/myapp/outputs/{run_id}/make/1/data.csv" in " ".join(job["args"])
        assert {"name": "MYAPP_OUTPUT_DIR", "value": f"/myapp/outputs/{run_id}/use/1"} in job["env"]
        assert make.outputs == [{"path": "data.csv", "size": 12, "preview": "csv"},
                                {"path": "metrics.jsonl", "size": make.outputs[1]["size"], "preview": "metrics"}]
        assert make.reported_metrics == [{"step": s, "name": "loss", "value": v}
                                         for s, v in enumerate([0.9, 0.5, 0.25])]
        make_id, use_id, make_project = make.id, use.id, make.project_id

    listing = admin.get(f"/api/v1/task_run/{make_id}/outputs")
    assert listing.status_code == 200, listing.get_data(as_text=True)
    assert [f["path"] for f in listing.json["files"]] == ["data.csv", "metrics.jsonl"]
    assert listing.json["metrics"][-1] == {"step": 2, "name": "loss", "value": 0.25}
    preview = admin.get(f"/api/v1/task_run/{make_id}/output", query_string={"path": "data.csv", "preview": "1"})
    assert preview.status_code == 200 and preview.get_data(as_text=True) == "x,y\n1,2\n3,4\n"
    assert preview.headers["Content-Type"].startswith("text/plain")
    download = admin.get(f"/api/v1/task_run/{use_id}/output", query_string={"path": "summary.txt"})
    assert download.status_code == 200 and download.data == b"3 rows\n"
    assert download.headers["Content-Disposition"].startswith("attachment")
    everything = admin.get(f"/api/v1/task_run/{make_id}/output")  # no path: all files, one zip
    assert everything.status_code == 200 and everything.headers["Content-Type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(everything.data)) as zf:
        assert sorted(zf.namelist()) == ["data.csv", "metrics.jsonl"]
        assert zf.read("data.csv") == b"x,y\n1,2\n3,4\n"
    for path, status in [("../make/1/data.csv", 400), ("nothing.txt", 404), ("/etc/passwd", 400), ("", 400)]:
        answer = admin.get(f"/api/v1/task_run/{use_id}/output", query_string={"path": path})
        assert answer.status_code == status, (path, answer.get_data(as_text=True))

    with app.app_context():
        from myapp.outputs import store as outputs_store
        from myapp.pipelines import outputs_cleanup

        folder = outputs_store.root() / db.session.get(Project, make_project).namespace / str(run_id)
    assert (folder / "make" / "1" / "data.csv").is_file()
    assert admin.delete(f"/api/v1/pipeline_run/{run_id}").status_code in (200, 204)
    with app.app_context():
        assert outputs_cleanup.remove_due() == 1  # the worker, after the commit (pipelines/outputs_cleanup.py)
    assert not folder.exists()  # a deleted run's outputs go with it
