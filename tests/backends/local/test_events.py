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


def test_the_watcher_wakes_when_a_marker_is_dropped(tmp_path):
    import threading
    import time

    folder = tmp_path / events.FOLDER
    watcher = events.Watcher(folder)
    try:
        assert watcher.fd >= 0, "inotify is available on Linux"
        timer = threading.Timer(0.2, events.announce, args=(folder, 7, "job", "succeeded"))
        started = time.monotonic()
        timer.start()
        watcher.wait(30.0)
        assert time.monotonic() - started < 30.0, "woke by its timeout, not by the marker"
        assert events.take(folder) == {7}
    finally:
        watcher.close()


def test_beat_requests_a_run_as_its_job_ends(app, tmp_path):
    """tasks.watch_local_jobs: the marker of a run's job wakes the loop, which requests the run at once."""
    import threading

    import sqlalchemy as sa

    from myapp.backends.registry import local_workdir
    from myapp.extensions import db
    from myapp.models import PipelineRun
    from myapp.tasks import watch_local_jobs
    from tests.pipelines.support import make_pipeline

    run_id, _ = make_pipeline(app, None, {}, [])
    with app.app_context():
        db.session.execute(sa.update(PipelineRun).where(PipelineRun.id == run_id).values(reconcile_requested_at=None))
        db.session.commit()
        folder = local_workdir() / events.FOLDER

    class Celery:
        sent: list = []

        def send_task(self, name, args, queue):
            self.sent.append((name, args))

    celery, stop = Celery(), threading.Event()
    thread = threading.Thread(target=watch_local_jobs, args=(app, celery, stop, 60.0), daemon=True)
    thread.start()
    try:
        wait_until(lambda: folder.exists(), what="the watcher's folder")
        events.announce(folder, run_id, "job", "succeeded")
        wait_until(lambda: ("myapp.reconcile_run", [run_id]) in celery.sent, timeout=30,
                   what=lambda: f"a reconcile of run {run_id}; sent: {celery.sent}")
    finally:
        stop.set()
        events.announce(folder, 0, "wake", "up")  # out of its wait
        thread.join(10)
