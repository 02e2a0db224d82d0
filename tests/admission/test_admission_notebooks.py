"""Notebooks in admission, on the local backend: a started notebook is use of its project's quota (a task
waits for it, saying so), and a notebook waits while a task holds the quota, starting once it is free.
The tasks run as real sandboxed processes; the notebook's backend is a double (no JupyterLab needed)."""
from __future__ import annotations

from typing import Any

import pytest

from tests.admission.test_admission_local import Platform, make_group, python_task, submit
from tests.support import unique

QUOTA_FULL = "waiting: project quota cpu 1/1 (this project does not borrow)"


class Jupyter:
    """A notebook backend that starts every notebook at once and records what runs."""

    name = "double"

    def __init__(self) -> None:
        self.running: set[str] = set()

    def put_secret(self, namespace: str, name: str, data: dict[str, str]) -> None:
        pass

    def delete_secret(self, namespace: str, name: str) -> None:
        pass

    def submit(self, manifests: list[dict[str, Any]]) -> Any:
        from myapp.backends.base import JobRef, ObjectRef

        name = unique("nb")
        self.running.add(name)
        return JobRef(self.name, "ns", name, ObjectRef("v1", "Notebook", "ns", name))

    def status(self, ref: Any) -> Any:
        from myapp.backends.base import JobState, Status

        return Status(JobState.RUNNING, url="http://127.0.0.1:1/")

    def cancel(self, ref: Any) -> None:
        self.running.discard(ref.job_name)

    def logs(self, ref: Any, follow: bool = False, after: Any = None) -> Any:
        return iter(())  # JupyterLab prints nothing here (a stop keeps what it printed)

    def cleanup(self, ref: Any, archive: Any) -> None:
        pass


def notebook(app, project_id, group_id):
    """A notebook of the project in the group, asking 1 CPU, asked to run -> its id."""
    from myapp.extensions import db
    from myapp.models import Notebook

    with app.app_context():
        nb = Notebook(project_id=project_id, name=unique("lab"), image="registry.local/nb/lab:v1",
                      resources={"cpu": "1", "memory": "64Mi"}, resource_group_id=group_id)
        db.session.add(nb)
        db.session.commit()
        return nb.id


def reconcile(app, nb_id, jupyter):
    """One worker's reconcile of the notebook, admission as the workers' own -> (state, reason)."""
    from myapp.admission.gate import admit_notebook
    from myapp.extensions import db
    from myapp.models import Notebook
    from myapp.notebooks.lifecycle import Hooks
    from myapp.notebooks.lifecycle import reconcile as reconcile_notebook

    with app.app_context():
        hooks = Hooks(backend_for=lambda _group: jupyter, archive=None, admit=admit_notebook)  # type: ignore[arg-type]
        reconcile_notebook(nb_id, hooks)
        nb = db.session.get(Notebook, nb_id)
        out = (nb.state.value, nb.reason)
        db.session.commit()
        return out


def stop(app, nb_id, jupyter):
    from myapp.extensions import db
    from myapp.models import Notebook
    from myapp.notebooks.states import request_stop

    with app.app_context():
        request_stop(db.session.get(Notebook, nb_id))
        db.session.commit()
    assert reconcile(app, nb_id, jupyter)[0] == "stopped"


def used(app, group_id):
    """The group's status: (its project's use, the running attempts, the queue's length)."""
    from myapp.admission.report import status as group_status
    from myapp.extensions import db
    from myapp.models import ResourceGroup, utcnow

    with app.app_context():
        status = group_status(db.session.get(ResourceGroup, group_id), utcnow())
        db.session.commit()
        ((project,),) = [status["projects"]]
        return project["used"], status["running"], len(status["queue"])


def test_a_running_notebook_holds_its_quota_and_a_task_waits_for_it(app, catalog, tmp_path):
    group, (project,) = make_group(app, 4000, [{"cpu_millicores": 1000, "can_borrow": False}])
    jupyter, platform = Jupyter(), Platform(app, tmp_path)
    nb = notebook(app, project, group)
    try:
        assert reconcile(app, nb, jupyter) == ("running", None)
        run = submit(app, catalog, group, project, {"a": python_task(0)})
        platform.runs = [run]
        platform.until(lambda: platform.attempts(run)[0][2] == QUOTA_FULL, "the task waits for the notebook's quota")
        ((_, state, _, position, submitted, _),) = platform.attempts(run)
        assert (state, position, submitted) == ("queued", 1, False)
        assert used(app, group) == ({"gpus": 0, "cpu_millicores": 1000, "memory_bytes": 64 * 2**20}, [], 1)
        stop(app, nb, jupyter)  # the quota frees: the task starts and ends
        platform.until(lambda: platform.run_state(run) == "succeeded", "the task ran once the notebook stopped")
    finally:
        platform.stop()


def test_a_notebook_waits_while_a_task_holds_the_quota_and_starts_when_it_ends(app, catalog, tmp_path):
    group, (project,) = make_group(app, 4000, [{"cpu_millicores": 1000, "can_borrow": False}])
    jupyter, platform = Jupyter(), Platform(app, tmp_path)
    nb = notebook(app, project, group)
    try:
        run = submit(app, catalog, group, project, {"a": python_task(60)})
        platform.runs = [run]
        platform.until(lambda: platform.attempts(run)[0][1] in ("pending", "running"), "the task started")
        assert reconcile(app, nb, jupyter) == ("waiting", QUOTA_FULL)
        assert not jupyter.running  # nothing submitted while it waits
        platform.stop()  # the task ends: the notebook starts at its next look
        assert reconcile(app, nb, jupyter) == ("running", None)
        assert len(jupyter.running) == 1
        stop(app, nb, jupyter)
    finally:
        platform.stop()


def test_a_notebook_borrowing_idle_capacity_is_never_preempted(app, catalog, tmp_path):
    """The owner of the share waits instead of preempting the notebook, as it would a borrowing task."""
    group, (owner, borrower) = make_group(app, 1000, [{"cpu_millicores": 1000}, None])
    jupyter, platform = Jupyter(), Platform(app, tmp_path)
    nb = notebook(app, borrower, group)
    try:
        assert reconcile(app, nb, jupyter) == ("running", None)  # the owner's share is idle: borrowed
        run = submit(app, catalog, group, owner, {"a": python_task(0)})
        platform.runs = [run]
        platform.until(lambda: (platform.attempts(run)[0][2] or "").startswith("waiting: no node"),
                       "the owner's task waits for room")
        assert jupyter.running and platform.attempts(run)[0][1] == "queued"
        stop(app, nb, jupyter)
        platform.until(lambda: platform.run_state(run) == "succeeded", "the task ran once the notebook stopped")
    finally:
        platform.stop()


def without_checkpoints(task: dict) -> dict:
    return {**task, "args": {**task["args"], "checkpoint": False}}


@pytest.mark.parametrize(("policy", "why"), [
    ("sieve", "waiting: its GPUs are held for "),  # the policy's own reservation for the big job
    ("gang-fifo", "waiting: behind 1 job(s) of the group's queue waiting for room (first: task run "),
])
def test_a_notebook_queues_behind_a_job_waiting_for_room(app, catalog, tmp_path, policy, why):
    """A 4-CPU job waits for a 2-CPU one to end; a 1-CPU notebook would fit beside it but waits its turn
    (else a stream of notebooks could keep the big job waiting forever), then starts after the big job."""
    group, (project,) = make_group(app, 4000, [None], policy=policy)
    jupyter, platform = Jupyter(), Platform(app, tmp_path)
    nb = notebook(app, project, group)
    try:
        # Tasks that do not checkpoint: sieve reserves the room a big one waits for (one that checkpoints
        # would rather take its turn by preemption, myapp/scheduler/reorder.py).
        hold = submit(app, catalog, group, project, {"hold": without_checkpoints(python_task(3, cpu="2"))})
        platform.runs = [hold]
        platform.until(lambda: platform.attempts(hold)[0][1] in ("pending", "running"), "the 2-CPU task started")
        big = submit(app, catalog, group, project, {"big": without_checkpoints(python_task(0, cpu="4"))})
        platform.runs = [hold, big]
        platform.until(lambda: platform.attempts(big)[0][2] == "waiting: no node with 4 free CPUs", "the big job waits")
        state, reason = reconcile(app, nb, jupyter)
        assert state == "waiting" and not jupyter.running
        assert reason.startswith(why)
        platform.until(lambda: platform.run_state(big) == "succeeded", "the big job ran once the 2-CPU task ended")
        assert reconcile(app, nb, jupyter) == ("running", None)
        stop(app, nb, jupyter)
    finally:
        platform.stop()


def test_a_notebook_counts_on_the_node_it_fits(app, catalog, tmp_path):
    """Nodes of 2 and 1 CPUs: the 1-CPU notebook is on the 1-CPU node, so a 2-CPU task fits the other."""
    from myapp.extensions import db
    from myapp.models import ResourceGroup

    group, (project,) = make_group(app, 3000, [None])
    with app.app_context():
        db.session.get(ResourceGroup, group).nodes = [{"name": "two", "cpu_millicores": 2000},
                                                      {"name": "one", "cpu_millicores": 1000}]
        db.session.commit()
    jupyter, platform = Jupyter(), Platform(app, tmp_path)
    nb = notebook(app, project, group)
    try:
        assert reconcile(app, nb, jupyter) == ("running", None)
        run = submit(app, catalog, group, project, {"a": python_task(0, cpu="2")})
        platform.runs = [run]
        platform.until(lambda: platform.run_state(run) == "succeeded", "the 2-CPU task ran beside the notebook")
        stop(app, nb, jupyter)
    finally:
        platform.stop()
