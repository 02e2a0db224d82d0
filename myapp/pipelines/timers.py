"""When a run next needs a look, the run controller's timers (a mixin of RunController): the next poll of an
active attempt (a tenth of its age between POLL_MIN and POLL_MAX, or WATCHED_POLL where the beat watches its
cluster), a timeout, a failed submit to try again, a retry's backoff, else IDLE_RECHECK; beat requests the run
then (myapp/shared/reconcile_requests.py). With the two small helpers the controller's time arithmetic shares.
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from ..admission.gate import recheck_after
from ..backends import DISRUPTIONS, Backend
from ..extensions import cache
from ..models import Task, TaskRun, TaskState
from ..models.states import TASK_ACTIVE
from .dag import retry_delay

# When a run with nothing to do now needs its next look (beat requests it then: myapp/shared/reconcile_requests.py).
# An active attempt is polled after a tenth of its age, between POLL_MIN and POLL_MAX: young jobs are
# seen finishing within a tick, long ones cost a poll per POLL_MAX each.
POLL_MIN, POLL_FRACTION, POLL_MAX = 1.0, 0.1, 15.0
# An active attempt on a cluster the beat watches (backends/kubernetes/watch.py): its changes request the
# run as they happen; this poll is the safety net for what a watch misses.
WATCHED_POLL = 30.0
IDLE_RECHECK = 30.0  # a run waiting for another (admission, depends_on_past): the other's end requests it sooner


class Timers:
    """The next look of a run where nothing changed this pass."""
    backend_for: Callable[[Task], Backend]
    now: Callable[[], dt.datetime]

    def _next_look(self, tasks: dict[int, Task], attempts: dict[int, TaskRun]) -> dt.datetime:
        """When a run where nothing changed this pass next needs a look: the next poll of an active
        attempt, a timeout, a failed submit to try again, a retry's backoff; else IDLE_RECHECK."""
        now = self.now()
        times = [now + dt.timedelta(seconds=IDLE_RECHECK)]
        for attempt in attempts.values():
            task = tasks[attempt.task_id]
            if attempt.state in TASK_ACTIVE:
                since = aware(attempt.submitted_at or attempt.created_at)
                age = (now - since).total_seconds()
                poll = WATCHED_POLL if self._watched(task) else min(POLL_MAX, max(POLL_MIN, age * POLL_FRACTION))
                times.append(now + dt.timedelta(seconds=poll))
                if task.timeout:
                    times.append(since + dt.timedelta(seconds=task.timeout))
            elif attempt.state == TaskState.QUEUED:
                waiting = recheck_after(attempt)  # waiting for its resource group: not every second
                times.append(now + dt.timedelta(seconds=waiting) if waiting is not None else
                             max(now + dt.timedelta(seconds=POLL_MIN), aware(attempt.backend_retry_at or now)))
            elif attempt.state == TaskState.FAILED and failures(attempt) <= task.retries and attempt.finished_at:
                times.append(retry_due(attempt, task))
        return min(times)

    def _watched(self, task: Task) -> bool:
        """Does the beat watch the cluster this task runs on (its mark in the shared cache is fresh:
        tasks.watch_clusters)? Its job's changes then request the run as they happen."""
        if task.resource_group_id is None:
            return False  # the default backend: local jobs report through their markers
        key = getattr(self.backend_for(task), "watch_key", None)
        return bool(key) and cache.get(key) is not None


def retry_due(attempt: TaskRun, task: Task) -> dt.datetime:
    """When a failed attempt's task starts again: after the task's retry_delay, doubling with each failure; a
    gang the machine took a replica from (a DISRUPTIONS cause) at once, as a preempted one resumes, since its
    program did nothing wrong and its next attempt already keeps off the lost nodes (it still counts against
    the task's retries)."""
    assert attempt.finished_at is not None  # set by every transition into FAILED
    delay = 0 if attempt.cause in DISRUPTIONS else retry_delay(task.retry_delay, failures(attempt))
    return aware(attempt.finished_at) + dt.timedelta(seconds=delay)


def failures(attempt: TaskRun) -> int:
    """Failed attempts of the task up to this one: its preempted attempts do not count against retries."""
    return attempt.attempt - (attempt.preemptions or 0)


def aware(value: dt.datetime) -> dt.datetime:
    """SQLite hands back naive datetimes; everything we store is UTC."""
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
