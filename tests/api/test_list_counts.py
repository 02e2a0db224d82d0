"""List counts kept by the database (myapp/models/list_count.py, myapp/api/counts.py): every change to a
counted table moves them in its own transaction, ORM or plain SQL, and a list's count equals count(*)
of what the caller may see, for every filter; the kept rows are folded without losing a change."""
from __future__ import annotations

import pytest
import sqlalchemy as sa

from myapp.extensions import db
from myapp.models import PipelineRun, TaskRun
from myapp.models.list_count import ListCount, fold, keep_counts
from tests.support import unique
from tests.world import build_catalog, build_project, created, insert_finished_run, insert_task_run

pytestmark = pytest.mark.backends

STATES = ("succeeded", "failed", "queued")


@pytest.fixture()
def world(app, admin, user):
    return build_project(user, build_catalog(admin), app)


def kept(app, table: str, project_id: int) -> dict[str, int]:
    """What list_count holds for one table and project: state -> count."""
    with app.app_context():
        rows = db.session.execute(sa.select(ListCount.state, sa.func.sum(ListCount.n)).where(
            ListCount.tbl == table, ListCount.project_id == project_id).group_by(ListCount.state)).all()
        db.session.rollback()
    return {state: int(n) for state, n in rows if n}


def actual(app, model, project_id: int) -> dict[str, int]:
    with app.app_context():
        state = model.state if hasattr(model, "state") else sa.literal("")
        rows = db.session.execute(sa.select(state, sa.func.count()).where(model.project_id == project_id)
                                  .group_by(state)).all()
        db.session.rollback()
    return {getattr(s, "value", s): n for s, n in rows}


def check_lists(client, project_id: int, pipeline_id: int) -> None:
    """Every list's count against the rows it pages through (page_size 100 holds them all here)."""
    for path in ("pipeline/", f"pipeline/?project_id={project_id}", "pipeline_run/",
                 f"pipeline_run/?project_id={project_id}", f"pipeline_run/?pipeline_id={pipeline_id}",
                 "task_run/", f"task_run/?project_id={project_id}",
                 *(f"{t}/?state={s}" for t in ("pipeline_run", "task_run") for s in STATES),
                 *(f"task_run/?state={s}&project_id={project_id}" for s in STATES)):
        url = f"/api/v1/{path}{'&' if '?' in path else '?'}page_size=100"
        page = client.get(url).get_json()
        assert page["count"] == len(page["items"]), (url, page["count"], len(page["items"]))


def test_counts_follow_inserts_updates_and_deletes(app, world, user):
    pid = world.ids["project"]
    pipe = world.ids["pipeline"]
    runs = [insert_finished_run(app, pid, pipe) for _ in range(4)]
    for run in runs:
        insert_task_run(app, pid, run, world.ids["task"])
    with app.app_context():  # state changes through the ORM and through plain SQL alike
        db.session.get(PipelineRun, runs[0]).state = "failed"
        db.session.execute(sa.update(TaskRun).where(TaskRun.pipeline_run_id == runs[1]).values(state="failed"))
        db.session.commit()
    assert user.delete(f"/api/v1/pipeline_run/{runs[2]}").status_code == 200
    second = created(user.post("/api/v1/pipeline/", json={"project_id": pid, "name": unique("p")}))["id"]
    assert user.delete(f"/api/v1/pipeline/{second}").status_code == 200
    for table, model in (("pipeline_run", PipelineRun), ("task_run", TaskRun)):
        assert kept(app, table, pid) == actual(app, model, pid)
    assert kept(app, "pipeline", pid) == {"": 1}
    assert kept(app, "pipeline_run", pid)["failed"] == 1
    check_lists(user, pid, pipe)


def test_a_rolled_back_change_counts_nothing(app, world, user):
    pid = world.ids["project"]
    before = kept(app, "pipeline_run", pid)
    with app.app_context():
        db.session.add(PipelineRun(project_id=pid, pipeline_id=world.ids["pipeline"], run_key=unique("r")))
        db.session.flush()
        db.session.rollback()
    assert kept(app, "pipeline_run", pid) == before


def test_counts_per_caller_and_for_admins(app, world, user, admin, make_user):
    pid = world.ids["project"]
    for _ in range(3):
        insert_finished_run(app, pid, world.ids["pipeline"])
    check_lists(user, pid, world.ids["pipeline"])
    assert make_user().get("/api/v1/pipeline_run/?state=succeeded").get_json()["count"] == 0
    with app.app_context():
        everything = db.session.scalar(sa.select(sa.func.count()).select_from(PipelineRun))
        succeeded = db.session.scalar(sa.select(sa.func.count()).where(PipelineRun.state == "succeeded"))
    assert admin.get("/api/v1/pipeline_run/?page_size=1").get_json()["count"] == everything
    assert admin.get("/api/v1/pipeline_run/?page_size=1&state=succeeded").get_json()["count"] == succeeded


def test_missing_triggers_are_made_again_with_the_counts(app, world, user):
    """SQLite drops a table's triggers when a migration rebuilds it: keep_counts (run by env.py after
    every upgrade) makes them again and counts again."""
    pid = world.ids["project"]
    with app.app_context(), db.engine.begin() as connection:
        assert keep_counts(connection) is False  # all there
        name = "list_count_pipeline_run" + ("" if connection.dialect.name == "postgresql" else "_insert")
        connection.exec_driver_sql(f"DROP TRIGGER {name}" + (
            " ON pipeline_run" if connection.dialect.name == "postgresql" else ""))
    insert_finished_run(app, pid, world.ids["pipeline"])  # not counted: its trigger is gone
    assert kept(app, "pipeline_run", pid) != actual(app, PipelineRun, pid)
    with app.app_context(), db.engine.begin() as connection:
        assert keep_counts(connection) is True
    assert kept(app, "pipeline_run", pid) == actual(app, PipelineRun, pid)
    insert_finished_run(app, pid, world.ids["pipeline"])
    assert kept(app, "pipeline_run", pid) == actual(app, PipelineRun, pid)
    check_lists(user, pid, world.ids["pipeline"])


def test_kept_rows_are_folded_without_losing_a_change(app, world, user):
    """PostgreSQL appends a row per change and beat's tick folds each key's rows into one, while a
    writer's uncommitted rows stay outside its snapshot; SQLite keeps one row per key from the start."""
    pid, pipe = world.ids["project"], world.ids["pipeline"]
    with app.app_context():  # many changes of one key in one statement (still a row per change)
        db.session.execute(sa.insert(PipelineRun), [{"project_id": pid, "pipeline_id": pipe, "run_key": unique("r"),
                                                     "state": "succeeded"} for _ in range(50)])
        db.session.commit()
        postgresql = db.engine.dialect.name == "postgresql"
        assert rows_per_key(pid) == ({"succeeded": 50, "queued": 1} if postgresql else {"succeeded": 1, "queued": 1})
        with db.engine.connect() as writer:  # a change not yet committed while the rows are folded
            writer.execute(sa.insert(PipelineRun).values(project_id=pid, pipeline_id=pipe, run_key=unique("w")))
            with db.engine.begin() as connection:
                fold(connection)
            assert rows_per_key(pid) == {"succeeded": 1, "queued": 1}
            writer.commit()
        assert rows_per_key(pid) == {"succeeded": 1, "queued": 2 if postgresql else 1}
    assert kept(app, "pipeline_run", pid) == actual(app, PipelineRun, pid) == {"succeeded": 50, "queued": 2}
    check_lists(user, pid, pipe)


def rows_per_key(project_id: int) -> dict[str, int]:
    rows = db.session.execute(sa.select(ListCount.state, sa.func.count()).where(
        ListCount.tbl == "pipeline_run", ListCount.project_id == project_id).group_by(ListCount.state)).all()
    db.session.rollback()
    return dict(rows)
