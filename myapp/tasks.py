"""Celery tasks. Each runs in an app context (see celery_app.make_celery).

Reconciles are requested through myapp/shared/reconcile_requests.py (at most one pending per run); no
task but heartbeat keeps a result (storing one cost more than a reconcile on the embedded broker).
"""
from __future__ import annotations

import datetime as dt
import logging
import socket
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from celery import shared_task

from .experiments import requests as experiment_requests
from .extensions import db
from .models import Experiment, ExperimentState, PipelineRun, WorkerHeartbeat, utcnow
from .models.list_count import fold as fold_list_counts
from .shared import reconcile_requests

log = logging.getLogger(__name__)
MAX_ROUNDS = 5  # reconcile() calls per task while the run has more to do at once (its MAX_PASSES ran out)
WATCH_BEAT = 10  # seconds a "this cluster is watched" mark lasts in the shared cache, renewed every third


@shared_task(name="myapp.heartbeat")
def heartbeat(hostname: str | None = None) -> dict:
    """Record that a worker is alive; the admin pages and `myapp run` read it."""
    hostname = hostname or socket.gethostname()
    row = db.session.scalar(sa.select(WorkerHeartbeat).filter_by(hostname=hostname))
    if row is None:
        row = WorkerHeartbeat(hostname=hostname, beats=0)
        db.session.add(row)
    row.last_seen = utcnow()
    row.beats += 1
    db.session.commit()
    return {"hostname": hostname, "beats": row.beats}


def _controller(celery):
    from .backends.registry import backend_for, log_archive
    from .pipelines.controller import RunController

    def on_finish(run_id: int) -> None:
        celery.send_task("myapp.notify_run", args=[run_id], queue=reconcile_requests.BACKGROUND_QUEUE)

    def on_task_failed(task_run_id: int) -> None:
        celery.send_task("myapp.notify_task_failed", args=[task_run_id], queue=reconcile_requests.BACKGROUND_QUEUE)

    return RunController(backend_for, on_finish=on_finish, archive=log_archive(), on_task_failed=on_task_failed)


@shared_task(name="myapp.reconcile_run", bind=True, ignore_result=True)
def reconcile_run(self, run_id: int) -> str | None:
    """Drive one run as far as it goes now. Safe to run twice at once or to repeat (acks_late).

    Clears the run's request in the transaction of its first pass (so an event from then on
    requests again); a run that ended wakes the runs of its pipeline waiting for it."""
    controller = _controller(self.app)
    state = None
    for _ in range(MAX_ROUNDS):
        db.session.execute(sa.update(PipelineRun).where(PipelineRun.id == run_id)
                           .values(reconcile_requested_at=None).execution_options(synchronize_session=False))
        state = controller.reconcile(run_id)
        run = db.session.get(PipelineRun, run_id)
        if run is None or run.is_finished or run.next_reconcile_at is None or _aware(run.next_reconcile_at) > utcnow():
            break
    db.session.commit()
    if run is not None and run.is_finished and run.experiment_id is not None:  # a trial ended: its experiment
        experiment_requests.trial_ended(self.app, run.experiment_id)
    if run is not None and run.is_finished:
        reconcile_requests.request_waiting(self.app, run.pipeline_id)
    elif run is not None and run.next_reconcile_at is not None and _aware(run.next_reconcile_at) <= utcnow():
        reconcile_requests.request(self.app, [run_id], reconcile_requests.BACKGROUND_QUEUE)  # more to do: queue up
    return state.value if state else None


@shared_task(name="myapp.cancel_run", bind=True, ignore_result=True)
def cancel_run(self, run_id: int, reason: str = "cancelled by user") -> None:
    run = db.session.get(PipelineRun, run_id)
    pipeline_id = run.pipeline_id if run is not None else None
    _controller(self.app).cancel(run_id, reason)
    if pipeline_id is not None:
        reconcile_requests.request_waiting(self.app, pipeline_id)


@shared_task(name="myapp.tick", bind=True, ignore_result=True)
def tick(self) -> int:
    """Beat: create due scheduled runs and request them; request the runs whose jobs changed (the
    backends' events) and those whose timer is due (the controller's next poll, retry, timeout) and
    re-send stale requests; delete the token Secrets of runs that ended without it (a worker
    gone right after the commit that ended one); and ask a worker to remove deleted runs' outputs and checkpoints
    and to finish the cleanups of ended attempts whose worker died first."""
    from .backends.registry import backend_for, changed_runs
    from .pipelines import attempt_cleanup, checkpoint_cleanup, outputs_cleanup
    from .pipelines.controller import RunController
    from .pipelines.scheduling import schedule_due

    created = schedule_due(utcnow())
    reconcile_requests.request(self.app, created, reconcile_requests.BACKGROUND_QUEUE)
    reconcile_requests.request(self.app, changed_runs(), reconcile_requests.BACKGROUND_QUEUE)
    RunController(backend_for).release_tokens()
    _request_services(self.app)
    _request_builds(self.app)
    with db.engine.begin() as connection:
        fold_list_counts(connection)  # the lists' kept counts: one row per key again (models/list_count.py)
    _discover_nodes(self.app)
    if outputs_cleanup.due():  # deleted runs' outputs a worker has not removed yet
        self.app.send_task("myapp.outputs_cleanup", queue=reconcile_requests.BACKGROUND_QUEUE)
    if checkpoint_cleanup.due():  # deleted runs' checkpoint folders a worker has not removed yet
        self.app.send_task("myapp.checkpoint_cleanup", queue=reconcile_requests.BACKGROUND_QUEUE)
    if attempt_cleanup.due():  # ended attempts whose worker died before their logs were archived
        self.app.send_task("myapp.attempt_cleanup", queue=reconcile_requests.BACKGROUND_QUEUE)
    experiment_requests.request_due(self.app)
    return len(reconcile_requests.request_due(self.app))


@shared_task(name="myapp.cancel_experiment", bind=True, ignore_result=True)
def cancel_experiment(self, experiment_id: int, reason: str = "cancelled by user") -> None:
    """End the experiment and cancel every running trial's run at once (those cancels on the actions queue)."""
    from .experiments import driver

    runs = driver.cancel(experiment_id, reason)
    db.session.commit()
    experiment_requests.hooks(self.app).cancel_runs(runs, f"experiment {experiment_id} cancelled")


@shared_task(name="myapp.look_experiment", bind=True, ignore_result=True)
def look_experiment(self, experiment_id: int, requested: bool = True) -> str | None:
    """One look at an experiment (myapp/experiments/driver.py). A requested look (beat's, or the one before)
    clears the request, and a pruned experiment's asks for the next: one such chain per experiment; a trial's
    end looks at once without touching it."""
    from .experiments import driver

    outcome = driver.look(experiment_id, experiment_requests.hooks(self.app), requested)
    experiment = db.session.get(Experiment, experiment_id)
    if requested and experiment is not None and experiment.early_stopping and outcome.state == ExperimentState.RUNNING:
        experiment_requests.request(self.app, [experiment_id], countdown=driver.POLL_SECONDS)
    return outcome.state.value if outcome.state else None


def _discover_nodes(app: Any) -> None:
    """Resource groups whose capacity is discovered: their clusters' Nodes listed again when due."""
    from flask import current_app  # `app` is the Celery app (tick's self.app): the setting is Flask's

    from .backends.kubernetes.capacity import discover_due
    from .backends.registry import backend_for_group

    discover_due(utcnow(), backend_for_group, float(current_app.config.get("MYAPP_NODE_DISCOVERY_SECONDS", 60.0)))


def watch_clusters(app: Any, celery: Any, stop: threading.Event, rescan: float = 60.0) -> None:
    """The beat process's loop (one per platform): every Kubernetes cluster's objects watched
    (backends/kubernetes/watch.py), and the runs whose objects changed requested as the events come,
    instead of at their next poll. Clusters are looked up again every `rescan` seconds; runs whose
    request failed (the database away) are kept for the next round."""
    from .backends.kubernetes import KubernetesBackend
    from .models import Cluster, ClusterKind

    notify = threading.Event()
    watched: dict[int, KubernetesBackend] = {}
    pending: set[int] = set()
    next_scan = next_beat = 0.0
    try:
        while not stop.is_set():
            if time.monotonic() >= next_beat:
                next_beat = time.monotonic() + WATCH_BEAT / 3
                _say_watched(app, watched)
            if time.monotonic() >= next_scan:
                next_scan = time.monotonic() + rescan
                try:
                    with app.app_context():
                        clusters = {c.id: c for c in db.session.scalars(
                            sa.select(Cluster).where(Cluster.kind == ClusterKind.KUBERNETES))}
                        for gone in set(watched) - set(clusters):
                            watched.pop(gone).close()
                        for cluster_id in set(clusters) - set(watched):
                            backend = KubernetesBackend.from_cluster(clusters[cluster_id])
                            backend.start_watch(notify=notify)
                            watched[cluster_id] = backend
                        db.session.rollback()
                except Exception:  # a bad kubeconfig or the database away: next scan
                    log.exception("watch: clusters not (all) watched")
            if notify.wait(min(1.0, max(0.0, next_scan - time.monotonic()))) or pending:
                notify.clear()
                for backend in watched.values():
                    pending |= backend.changed_runs()
                try:
                    with app.app_context():
                        reconcile_requests.request(celery, pending, reconcile_requests.BACKGROUND_QUEUE)
                    pending.clear()
                except Exception:  # kept for the next round
                    log.exception("watch: %d runs not requested yet", len(pending))
                    stop.wait(1.0)
    finally:
        for backend in watched.values():
            backend.close()


def watch_local_jobs(app: Any, celery: Any, stop: threading.Event, safety: float = 1.0) -> None:
    """The beat process's loop for local jobs: a job that starts running or ends drops a marker
    (backends/local/events.py) that wakes this loop at once (inotify), and its run is requested then, not at
    beat's next tick; every `safety` seconds it looks anyway. Runs whose request failed are kept."""
    from .backends.local.events import FOLDER, Watcher
    from .backends.registry import changed_runs, local_workdir

    with app.app_context():
        watcher = Watcher(local_workdir() / FOLDER)
    pending: set[int] = set()
    try:
        while not stop.is_set():
            try:
                with app.app_context():
                    pending |= changed_runs()
                    if pending:
                        reconcile_requests.request(celery, pending, reconcile_requests.BACKGROUND_QUEUE)
                pending.clear()
            except Exception:  # the database away: kept for the next round
                log.exception("local jobs: %d runs not requested yet", len(pending))
                stop.wait(1.0)
            watcher.wait(safety)
    finally:
        watcher.close()


def _say_watched(app: Any, watched: dict[int, Any]) -> None:
    """In the shared cache, for WATCH_BEAT seconds: which clusters' watches are all open now (the
    controller polls their attempts only as a safety net, pipelines/timers.WATCHED_POLL)."""
    from .extensions import cache

    try:
        with app.app_context():
            for backend in watched.values():
                if backend.watch_key and backend.events_live():
                    cache.set(backend.watch_key, time.time(), timeout=WATCH_BEAT)
    except Exception:  # the cache away: the controller keeps its short polls
        log.exception("watch: could not say which clusters are watched")


def _request_builds(celery: Any) -> None:
    """Image builds whose request was lost or whose worker died: asked again (building is idempotent)."""
    from .images.drive import stale_builds

    for build_id in stale_builds():
        celery.send_task("myapp.build_image", args=[build_id], queue=reconcile_requests.BACKGROUND_QUEUE)


def _request_services(celery: Any) -> None:
    """Inference services whose next look is due: re-adopt, restart what died, finish deletes."""
    from .serving.controller import due_services

    for service_id in due_services():
        celery.send_task("myapp.reconcile_service", args=[service_id], queue=reconcile_requests.BACKGROUND_QUEUE)


@shared_task(name="myapp.reconcile_service", bind=True, ignore_result=True)
def reconcile_service(self, service_id: int) -> bool:
    """One pass of the serving controller (myapp/serving/controller.py); a service still converging
    is looked at again in a second (beat's tick also requests the ones whose next look is due)."""
    from flask import current_app

    from .backends.registry import backend_for_group, log_archive
    from .serving.controller import ServingController

    # Its resource group's cluster (backend and serving engine), else the platform's default backend.
    controller = ServingController(lambda service: backend_for_group(service.resource_group_id),
                                   current_app.config["SECRET_KEY"], log_archive())
    settled = controller.reconcile(service_id)
    if not settled:
        self.app.send_task("myapp.reconcile_service", args=[service_id], queue=reconcile_requests.BACKGROUND_QUEUE,
                           countdown=1)
    return settled


@shared_task(name="myapp.fetch_output", ignore_result=True)
def fetch_output(task_run_id: int, path: str, preview: bool = False) -> bool:
    """Copy one file an attempt left on a Kubernetes claim into the platform's outputs folder, asked for by
    a download, or only its start for a preview (outputs_fetch.request_fetch; the API answers 202 meanwhile)."""
    from .backends.registry import backend_for
    from .models import Project, Task, TaskRun
    from .outputs import fetch as outputs_fetch

    attempt = db.session.get(TaskRun, task_run_id)
    if attempt is None:
        return False
    namespace = db.session.get(Project, attempt.project_id).namespace
    backend = backend_for(db.session.get(Task, attempt.task_id))
    db.session.rollback()  # no transaction held while the readers run
    return outputs_fetch.fetch_from_claim(attempt, namespace, path, backend, preview=bool(preview))


@shared_task(name="myapp.build_image", ignore_result=True)
def build_image(build_id: int) -> str | None:
    """Build an image (a Kaniko Job on Kubernetes, a Python environment locally): myapp/images/drive.py."""
    from .images.drive import drive

    return drive(build_id)


@shared_task(name="myapp.serving_release", ignore_result=True)
def serving_release(item: dict) -> None:
    """Stop the servers of a service whose project was deleted (its row went with the project)."""
    from .backends.registry import backend_for_group, log_archive
    from .serving.controller import release

    release(item, backend_for_group(item.get("resource_group_id")), log_archive())


@shared_task(name="myapp.run_release", ignore_result=True)
def run_release(item: dict) -> None:
    """Stop the jobs of a run (or a Kaniko build) whose project was deleted (its rows went with the project)."""
    from .backends.registry import backend_for_group, log_archive
    from .pipelines.release import release

    release(item, backend_for_group, log_archive())


@shared_task(name="myapp.checkpoint_cleanup", ignore_result=True)
def checkpoint_cleanup() -> int:
    """Remove the checkpoint folders of deleted runs that are due (myapp/pipelines/checkpoint_cleanup.py)."""
    from .backends.registry import backend_for_group
    from .pipelines.checkpoint_cleanup import remove_due

    return remove_due(backend_for_group)


@shared_task(name="myapp.outputs_cleanup", ignore_result=True)
def outputs_cleanup() -> int:
    """Remove the outputs of deleted runs that are due (myapp/pipelines/outputs_cleanup.py)."""
    from .pipelines.outputs_cleanup import remove_due

    return remove_due()


@shared_task(name="myapp.attempt_cleanup", ignore_result=True)
def attempt_cleanup() -> int:
    """Archive the logs and remove the jobs of ended attempts a dead worker left (pipelines/attempt_cleanup.py)."""
    from .backends.registry import backend_for, log_archive
    from .pipelines.attempt_cleanup import clean_due

    return clean_due(backend_for, log_archive())


@shared_task(name="myapp.notify_run", bind=True, max_retries=5, ignore_result=True)
def notify_run(self, run_id: int, delivery_id: str | None = None) -> int | None:
    """POST the finished run to its pipeline's webhook (if its events include this outcome); retried
    with backoff while retrying may help (network, 5xx, 429), failed at once otherwise (see notify.post)."""
    from .pipelines.notify import send_run_webhook

    return _deliver(self, send_run_webhook, run_id, delivery_id)


@shared_task(name="myapp.notify_task_failed", bind=True, max_retries=5, ignore_result=True)
def notify_task_failed(self, task_run_id: int, delivery_id: str | None = None) -> int | None:
    """POST task.failed for an attempt that failed with no retry left, like notify_run."""
    from .pipelines.notify import send_task_webhook

    return _deliver(self, send_task_webhook, task_run_id, delivery_id)


def _deliver(task: Any, send: Callable[[int, str], int | None], object_id: int, delivery_id: str | None) -> int | None:
    from .pipelines.notify import WebhookError

    # One X-Myapp-Delivery however often it is tried (retries carry it), so receivers can drop repeats.
    delivery_id = delivery_id or task.request.id or str(uuid.uuid4())
    try:
        return send(object_id, delivery_id)
    except WebhookError as exc:
        if not exc.retry:
            raise
        raise task.retry(args=[object_id, delivery_id], exc=exc,
                         countdown=min(300, 2 ** task.request.retries)) from exc


def _aware(value: dt.datetime) -> dt.datetime:
    """SQLite hands back naive datetimes; everything we store is UTC."""
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)


# ---- notebooks (myapp/notebooks) ---------------------------------------------------------------------------
def _notebook_hooks() -> Any:
    from .admission.gate import admit_notebook
    from .backends.registry import backend_for_group, log_archive
    from .notebooks import activity
    from .notebooks.lifecycle import Hooks

    return Hooks(backend_for=backend_for_group, archive=log_archive(), prepare=activity.environment_check(),
                 admit=admit_notebook)


@shared_task(name="myapp.notebook_reconcile", bind=True, ignore_result=True)
def notebook_reconcile(self, notebook_id: int) -> str | None:
    """Make a notebook follow its intent (start, stop, delete); while it waits for its environment or
    for resources, it asks again in a few seconds."""
    from .models import NotebookState
    from .notebooks.lifecycle import fail_unexpectedly, reconcile

    try:
        state = reconcile(notebook_id, _notebook_hooks())
    except Exception as exc:
        db.session.rollback()
        fail_unexpectedly(notebook_id, exc)  # never left pending by a bug; the error is still raised and logged
        raise
    if state in (NotebookState.PULLING, NotebookState.WAITING):
        self.app.send_task("myapp.notebook_reconcile", args=[notebook_id], queue=reconcile_requests.BACKGROUND_QUEUE,
                           countdown=3)
    return state.value if state else None


@shared_task(name="myapp.notebook_release", ignore_result=True)
def notebook_release(attempt: dict) -> None:
    """Stop what a deleted project's notebook left running (its row went with the project)."""
    from .notebooks.lifecycle import release

    release(attempt, _notebook_hooks())


@shared_task(name="myapp.notebook_tick", bind=True, ignore_result=True)
def notebook_tick(self) -> int:
    """Beat: notebooks on their way somewhere that nobody is working on are requested again, and
    running ones are checked for kernel and terminal activity (idle, culled after the project's timeout)."""
    from .notebooks import activity
    from .notebooks.lifecycle import due

    ids = due()
    for notebook_id in ids:
        self.app.send_task("myapp.notebook_reconcile", args=[notebook_id], queue=reconcile_requests.BACKGROUND_QUEUE)
    looks = activity.check_all()  # culled, or not answering
    for notebook_id in looks:
        self.app.send_task("myapp.notebook_reconcile", args=[notebook_id], queue=reconcile_requests.ACTIONS_QUEUE)
    return len(ids) + len(looks)
