"""Events of the local backend: a supervisor marks its job's run when the job starts running or
finishes (myapp/backends/local/events.py); changed_runs takes the marks once."""
from __future__ import annotations

from myapp.backends.base import JobState
from myapp.backends.local import events
from myapp.rendering.contract import RUN_LABEL
from tests.backends.local.support import finished, python_script, render_template, workload
from tests.support import wait_until


def markers(backend):
    folder = backend.workdir / events.FOLDER
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_a_finished_job_marks_its_run_once(backend):
    manifests = render_template("python", {"script": "print('done')"})
    run_id = int(workload(manifests)["metadata"]["labels"][RUN_LABEL])
    ref = backend.submit(manifests)
    assert finished(backend, ref).state is JobState.SUCCEEDED
    wait_until(lambda: f"{run_id}.{ref.job_name}.succeeded" in markers(backend),  # written after state.json
               what=lambda: f"the marker of run {run_id}, among {markers(backend)}")
    assert backend.changed_runs() == {run_id}
    assert markers(backend) == []
    assert backend.changed_runs() == set()


def test_a_job_that_starts_running_marks_its_run(backend):
    manifests = render_template("python", {"script": "pass"})
    python_script(manifests, "import time\nwhile True: time.sleep(0.05)")
    run_id = int(workload(manifests)["metadata"]["labels"][RUN_LABEL])
    ref = backend.submit(manifests)
    wait_until(lambda: f"{run_id}.{ref.job_name}.running" in markers(backend),
               what=lambda: f"the running marker of run {run_id}, among {markers(backend)}")
    assert backend.status(ref).state is JobState.RUNNING
    assert backend.changed_runs() == {run_id}
    backend.cancel(ref)
    assert backend.status(ref).state is JobState.CANCELLED
    wait_until(lambda: markers(backend) == [f"{run_id}.{ref.job_name}.cancelled"],
               what=lambda: f"only the cancelled marker of run {run_id}, among {markers(backend)}")
    assert backend.changed_runs() == {run_id}


def test_no_folder_and_foreign_names_are_no_events(backends, tmp_path):
    backend = backends()
    assert backend.changed_runs() == set()  # no job ever changed: no folder
    folder = backend.workdir / events.FOLDER
    folder.mkdir()
    for name in ("notes.txt", "x12.job.running", "٣.job.running", "7"):
        (folder / name).touch()
    assert backend.changed_runs() == {7}
    assert markers(backend) == []  # the foreign names are dropped with the rest
    folder.rmdir()
    folder.write_text("not a folder")
    assert backend.changed_runs() == set()
