"""What benchmarks/controller.py hooks into the platform to watch it work: the state transitions as they
are committed, beat's tick with the broker's queue length, and where each cancel's time goes."""
from __future__ import annotations

import threading
import time
from collections import Counter


class TransitionCounter:
    """Counts state changes of runs and task runs as they are committed: each transition() that
    changed a state is held by its session until commit (a rolled-back pass counts nothing)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.committed: Counter[str] = Counter()  # "TaskRun running->succeeded" -> count

    def install(self) -> None:
        import sqlalchemy as sa
        from sqlalchemy.orm import object_session

        from myapp.models import PipelineRun, TaskRun

        def counting(original):
            def transition(row, new, reason=None, now=None):
                before = row.state
                original(row, new, reason, now)
                if row.state != before:
                    key = f"{type(row).__name__} {before.value}->{row.state.value}"
                    object_session(row).info.setdefault("bench_transitions", []).append(key)
            return transition

        for model in (PipelineRun, TaskRun):
            model.transition = counting(model.transition)
        sa.event.listen(sa.orm.Session, "after_commit", self._commit)
        sa.event.listen(sa.orm.Session, "after_rollback", lambda session: session.info.pop("bench_transitions", None))

    def _commit(self, session) -> None:
        done = session.info.pop("bench_transitions", [])
        with self.lock:
            self.committed.update(done)

    def take(self) -> Counter[str]:
        """The transitions committed since the last take."""
        with self.lock:
            out, self.committed = self.committed, Counter()
        return out


class Beat(threading.Thread):
    """Beat's tick as the platform runs it (myapp.tasks.tick's requests), every MYAPP_TICK_SECONDS,
    and a sampler of the broker's queue length (both queues) every 0.25 s."""

    def __init__(self, app, celery):
        super().__init__(daemon=True)
        self.app, self.celery, self.stop = app, celery, threading.Event()
        self.lengths: list[int] = []

    def queue_length(self, conn) -> int:
        from myapp.config import ACTIONS_QUEUE, BACKGROUND_QUEUE

        # _size: what every kombu virtual transport (Redis, the embedded one) counts a queue with.
        return sum(conn.default_channel._size(q) for q in (ACTIONS_QUEUE, BACKGROUND_QUEUE))

    def run(self) -> None:
        from myapp.shared.reconcile_requests import request_due

        every = float(self.app.config["MYAPP_TICK_SECONDS"])
        next_tick = time.monotonic()
        with self.celery.connection_for_read() as conn:
            while not self.stop.is_set():
                if time.monotonic() >= next_tick:
                    with self.app.app_context():
                        request_due(self.celery)
                    next_tick += every
                self.lengths.append(self.queue_length(conn))
                self.stop.wait(0.25)


class CancelTrace:
    """Where a cancel's time goes: sent, the worker's consumer received its message (prefetched),
    a pool thread started it, the controller's cancel began, the run-row lock was held, the run was
    cancelled. Wall-clock seconds per run id; the slow ones are printed stage by stage."""

    STAGES = ("sent", "received", "started", "cancel", "locked", "done")

    def __init__(self):
        self.times: dict[int, dict[str, float]] = {}
        self.lock = threading.Lock()
        self._undo: list = []

    def mark(self, run_id: int, stage: str) -> None:
        with self.lock:
            if run_id in self.times:
                self.times[run_id].setdefault(stage, time.time())

    def sent(self, run_id: int) -> None:
        with self.lock:
            self.times[run_id] = {"sent": time.time()}

    def install(self) -> None:
        from celery import signals

        from myapp.pipelines.controller import RunController

        def received(request=None, **_):
            if request is not None and request.name == "myapp.cancel_run":
                self.mark(request.args[0], "received")

        def prerun(task=None, args=None, **_):
            if task is not None and task.name == "myapp.cancel_run":
                self.mark(args[0], "started")

        signals.task_received.connect(received, weak=False)
        signals.task_prerun.connect(prerun, weak=False)
        cancel, locked = RunController.cancel, RunController._cancel_locked

        def traced_cancel(controller, run_id, reason="cancelled by user"):
            self.mark(run_id, "cancel")
            return cancel(controller, run_id, reason)

        def traced_locked(controller, run, reason):
            self.mark(run.id, "locked")
            locked(controller, run, reason)
            self.mark(run.id, "done")

        RunController.cancel, RunController._cancel_locked = traced_cancel, traced_locked  # type: ignore[method-assign]

        def undo():
            signals.task_received.disconnect(received)
            signals.task_prerun.disconnect(prerun)
            RunController.cancel, RunController._cancel_locked = cancel, locked  # type: ignore[method-assign]
        self._undo.append(undo)

    def uninstall(self) -> None:
        while self._undo:
            self._undo.pop()()

    def slow(self, over: float) -> list[str]:
        """One line per cancel that took longer than `over` seconds: each stage's share."""
        lines = []
        for run_id, t in sorted(self.times.items()):
            if "done" not in t or t["done"] - t["sent"] <= over:
                continue
            steps, before = [], t["sent"]
            for stage in self.STAGES[1:]:
                if stage in t:
                    steps.append(f"{stage} +{t[stage] - before:.3f}")
                    before = t[stage]
            lines.append(f"run {run_id}: {t['done'] - t['sent']:.2f} s: " + ", ".join(steps))
        return lines

    def stage_p95(self) -> str:
        """p95 and max of each stage over every traced cancel."""
        out = []
        # sent->cancel whichever took it: the pool (received, started) or the worker's action lane (neither).
        for a, b in [("sent", "cancel"), *zip(self.STAGES, self.STAGES[1:], strict=False)]:
            d = sorted(t[b] - t[a] for t in self.times.values() if a in t and b in t)
            out.append(f"{a}->{b} p95 {pct(d, 0.95) * 1000:.0f} ms, max {max(d, default=float('nan')) * 1000:.0f} ms")
        return "; ".join(out)


def pct(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(len(values) * q))] if values else float("nan")
