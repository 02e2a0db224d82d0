"""Celery configured from the Flask app; every task runs inside an app context."""
from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable
from typing import Any

from celery import Celery, Task, signals
from flask import Flask

from .shared import broker  # noqa: F401 - registers the embedded transport (myappfs://)

log = logging.getLogger(__name__)


def make_celery(app: Flask, settings: dict[str, Any] | None = None, default: bool = True) -> Celery:
    """default: make it the process's default Celery app (what shared tasks' .delay use); tests
    that build extra apps on other brokers pass False so they do not take that place."""
    class AppContextTask(Task):
        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            with app.app_context():
                return run_while_locked(self.name, lambda: self.run(*args, **kwargs))

    celery = Celery(app.import_name, task_cls=AppContextTask, set_as_current=default)
    celery.config_from_object(settings or app.config["CELERY"])
    celery.conf.include = ["myapp.tasks"]
    celery.conf.beat_schedule = {
        "heartbeat": {"task": "myapp.heartbeat", "schedule": 30.0},
        "tick": {"task": "myapp.tick", "schedule": float(app.config["MYAPP_TICK_SECONDS"])},
        # Notebooks: lost starts requested again, idle ones marked and culled (myapp/notebooks/activity.py).
        "notebook-tick": {"task": "myapp.notebook_tick", "schedule": max(5.0, float(app.config["MYAPP_TICK_SECONDS"]))},
    }
    celery.conf.beat_schedule_filename = f"{app.config['INSTANCE_PATH']}/celerybeat-schedule"
    if default:
        celery.set_default()
    if app.config.get("MYAPP_KUBERNETES_WATCH", True):
        _WATCHING[celery] = app
    if app.config.get("MYAPP_ACTION_LANE", True):
        _LANES.add(celery)
    return celery


def run_while_locked(name: str, run: Callable[[], Any]) -> Any:
    """A task run again from the start, after a rollback, while SQLite says its database is locked (every
    task is idempotent: a run cut short by the lock changed nothing); the last run's error is raised."""
    from .extensions import LOCKED_TRIES, database_locked, db, pause_after_lock

    for tries in range(1, LOCKED_TRIES + 1):
        try:
            return run()
        except Exception as exc:
            if not database_locked(exc) or tries == LOCKED_TRIES:
                raise
            db.session.rollback()
            log.warning("task %s found the database locked: again (run %d of %d)", name, tries + 1, LOCKED_TRIES)
        pause_after_lock(tries)
    raise AssertionError("unreachable")


# The apps whose beat watches Kubernetes clusters and whose workers run an ActionLane; the signals are
# process-wide, connected once below, and ask these (weakly held: tests make many apps).
_WATCHING: weakref.WeakKeyDictionary[Celery, Flask] = weakref.WeakKeyDictionary()
_LANES: weakref.WeakSet[Celery] = weakref.WeakSet()


@signals.beat_init.connect
def _start_watches(sender: Any = None, **_: Any) -> None:
    """In the beat process (exactly one per platform): Kubernetes watch events (tasks.watch_clusters) and
    local jobs' markers (tasks.watch_local_jobs), each in a daemon thread that ends with the process."""
    celery = getattr(sender, "app", None)
    app = _WATCHING.get(celery) if isinstance(celery, Celery) else None
    if app is None:
        return
    from .tasks import watch_clusters, watch_local_jobs

    threading.Thread(target=watch_clusters, args=(app, celery, threading.Event()), name="kubernetes watches",
                     daemon=True).start()
    # Local jobs' starts and ends as events too (their supervisors' markers), not at the next tick.
    threading.Thread(target=watch_local_jobs, args=(app, celery, threading.Event()), name="local job events",
                     daemon=True).start()


@signals.worker_process_init.connect
def _lane_in_pool_process(**_: Any) -> None:
    """A prefork / solo pool process of the worker's app (the current one): its lane, after the fork
    (a lane's database connections must not be shared with forked children)."""
    from celery import current_app

    celery = current_app._get_current_object()
    if celery in _LANES:
        worker = _WORKER.get("this process")  # a solo pool's worker is in this process: end with it
        _start_lane(celery, alive=(lambda: _running(worker)) if worker is not None else (lambda: True))


@signals.worker_init.connect
def _lane_in_worker(sender: Any = None, **_: Any) -> None:
    """A worker whose tasks run in threads of its own process: the lane there."""
    celery = getattr(sender, "app", None)
    if sender is not None:
        _WORKER["this process"] = sender
    if isinstance(celery, Celery) and celery in _LANES and "threads" in str(getattr(sender, "pool_cls", "")).lower():
        _start_lane(celery, alive=lambda: _running(sender))


# The worker that last started in this process (a forked pool process inherits a copy that stays running).
_WORKER: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()


def _running(worker: Any) -> bool:
    """The worker has not begun to close. A cold shutdown (terminate(): what an embedded worker, e.g.
    celery.contrib.testing's, ends with) sends no worker_shutdown, so the lane also watches this."""
    from celery.bootsteps import CLOSE, TERMINATE

    return getattr(getattr(worker, "blueprint", None), "state", None) not in (CLOSE, TERMINATE)


def _start_lane(celery: Celery, alive: Callable[[], bool] = lambda: True) -> None:
    """An ActionLane for this app in this process, stopped with the worker."""
    from .config import ACTIONS_QUEUE

    lane = ActionLane(celery, ACTIONS_QUEUE, alive)
    lane.start()

    def stop(sender: Any = None, **_: Any) -> None:
        lane.stop.set()
        lane.join(5.0)
        signals.worker_shutdown.disconnect(stop)
        signals.worker_process_shutdown.disconnect(stop)
    signals.worker_shutdown.connect(stop, weak=False)
    signals.worker_process_shutdown.connect(stop, weak=False)


class ActionLane(threading.Thread):
    """User actions (a new run, a cancel: the actions queue) taken by a thread of their own in each
    worker, beside the pool. The pool takes them too, but only when one of its threads is free: with
    every thread on a background reconcile (the load a backfill makes), a cancel waited in the broker
    for the next one to end, seconds on a loaded machine. Runs each task as the pool would (its app
    context) and acknowledges it after, as acks_late does; a worker killed meanwhile leaves it to the
    broker to deliver again (every action is idempotent)."""

    def __init__(self, celery: Celery, queue: str, alive: Callable[[], bool] = lambda: True):
        super().__init__(name="action lane", daemon=True)
        self.celery, self.queue, self.alive = celery, queue, alive
        self.stop = threading.Event()

    def running(self) -> bool:
        if self.stop.is_set() or self.alive():
            return not self.stop.is_set()
        self.stop.set()  # its worker closed without telling (a cold shutdown): a lane must not outlive it
        return False

    def run(self) -> None:
        from kombu import Queue

        while self.running():
            try:
                with self.celery.connection_for_read() as conn, \
                        conn.Consumer(queues=[Queue(self.queue)], callbacks=[self._handle], accept=["json"],
                                      prefetch_count=1):
                    while self.running():
                        try:
                            conn.drain_events(timeout=1.0)
                        except TimeoutError:  # socket.timeout: nothing came; look at the stop flag
                            pass
            except Exception as error:  # the broker away: connect again; the pool still serves the queue
                log.warning("action lane: broker connection lost (%s); again in 1 s", error)
                self.stop.wait(1.0)

    def _handle(self, body: Any, message: Any) -> None:
        name = (message.headers or {}).get("task")
        try:
            task = self.celery.tasks.get(name) if name else None
            if task is None:
                log.error("action lane: unknown task %r dropped", name)
            else:
                args, kwargs, _ = body
                task(*args, **kwargs)
        except Exception:  # as the pool does: logged, acknowledged
            log.exception("action lane: %s failed", name)
        finally:
            message.ack()
