"""Ids are never reused after a delete, so logs and archives of two runs can never mix (SQLite picks
max(id) + 1 unless the key is AUTOINCREMENT; PostgreSQL sequences never go back). Migration 0009 rebuilds
the tables of an existing SQLite database without losing a row or a constraint."""
from __future__ import annotations

import pytest
import sqlalchemy as sa

from tests.pipelines.support import make_pipeline
from tests.support import unique

pytestmark = pytest.mark.backends


def test_a_deleted_runs_id_and_its_task_runs_ids_are_not_given_again(app, catalog):
    from myapp.extensions import db
    from myapp.models import PipelineRun, TaskRun, TaskState

    run_id, ids = make_pipeline(app, catalog, {"a": {}}, [])

    def task_run(run: PipelineRun) -> TaskRun:
        row = TaskRun(project_id=run.project_id, pipeline_run_id=run.id, task_id=ids["a"], attempt=1,
                      state=TaskState.QUEUED, manifests=[])
        db.session.add(row)
        db.session.flush()
        return row

    with app.app_context():
        first = db.session.get(PipelineRun, run_id)
        newest = PipelineRun(project_id=first.project_id, pipeline_id=first.pipeline_id, run_key=unique("k"))
        db.session.add(newest)
        db.session.flush()
        newest_attempt = task_run(newest).id
        newest_id = newest.id
        db.session.commit()
        db.session.delete(newest)  # the newest run, its task run with it (cascade)
        db.session.commit()
        assert db.session.get(TaskRun, newest_attempt) is None
        again = PipelineRun(project_id=first.project_id, pipeline_id=first.pipeline_id, run_key=unique("k"))
        db.session.add(again)
        db.session.flush()
        assert again.id > newest_id
        assert task_run(again).id > newest_attempt
        db.session.commit()


def test_every_integer_key_is_autoincrement_on_sqlite(app):
    from myapp.extensions import db

    with app.app_context():
        if db.engine.dialect.name != "sqlite":
            return  # PostgreSQL: sequences (the test above covers them)
        missing = [name for name, sql in _tables(db.engine) if _integer_key(db.engine, name)
                   and "AUTOINCREMENT" not in sql.upper()]
    assert not missing, f"tables whose ids SQLite would reuse: {missing}"


def _tables(engine: sa.Engine) -> list[tuple[str, str]]:
    with engine.connect() as conn:
        return list(conn.exec_driver_sql("SELECT name, sql FROM sqlite_master WHERE type = 'table' "
                                         "AND name NOT LIKE 'sqlite_%' AND name != 'alembic_version'").all())


def _integer_key(engine: sa.Engine, table: str) -> bool:
    inspector = sa.inspect(engine)
    key = inspector.get_pk_constraint(table)["constrained_columns"]
    if len(key) != 1 or any(key[0] in fk["constrained_columns"] for fk in inspector.get_foreign_keys(table)):
        return False
    column = next(c for c in inspector.get_columns(table) if c["name"] == key[0])
    return isinstance(column["type"], sa.Integer)


def test_migration_0009_keeps_every_row_and_constraint(app, tmp_path):
    """An existing SQLite database at 0008 (a file of its own, whatever the pass's database), with rows:
    after 0009 the rows, their ids, the foreign keys and the CHECK constraints are all there, and a deleted
    id is not given again."""
    import pytest
    from alembic import command

    from myapp.models.migrate import alembic_config

    url = f"sqlite:///{tmp_path / 'old.sqlite'}"
    command.upgrade(alembic_config(url), "0008")
    engine = sa.create_engine(url)
    sa.event.listen(engine, "connect", lambda conn, _: conn.execute("PRAGMA foreign_keys=ON"))
    with engine.begin() as conn:
        for pid in (1, 2, 3):
            conn.exec_driver_sql("INSERT INTO project (id, name, description, namespace, created_at, updated_at) "
                                 "VALUES (?, ?, '', ?, '2026-01-01', '2026-01-01')", (pid, f"p{pid}", f"ns{pid}"))
            conn.exec_driver_sql("INSERT INTO pipeline (project_id, name, description, parameters, paused, "
                                 "max_active_runs, concurrency_policy, depends_on_past, created_at, updated_at) "
                                 "VALUES (?, 'pipe', '', '{}', 0, 1, 'wait', 0, '2026-01-01', '2026-01-01')", (pid,))
        conn.exec_driver_sql("DELETE FROM project WHERE id = 3")  # (its pipeline with it) 0009 cannot know of it
    before = _dump(engine)
    command.upgrade(alembic_config(url), "0009")
    assert _dump(engine) == before
    command.upgrade(alembic_config(url), "head")
    with engine.begin() as conn:
        assert conn.exec_driver_sql("PRAGMA foreign_key_check").all() == []
        with pytest.raises(sa.exc.IntegrityError):  # the CHECK of an enum column survived
            conn.exec_driver_sql("UPDATE pipeline SET concurrency_policy = 'nope' WHERE id = 1")
    with engine.begin() as conn, pytest.raises(sa.exc.IntegrityError):  # and the foreign keys
        conn.exec_driver_sql("UPDATE pipeline SET project_id = 99 WHERE id = 1")
    with engine.begin() as conn:
        conn.exec_driver_sql("DELETE FROM project WHERE id = 2")
        conn.exec_driver_sql("DELETE FROM project WHERE id = 1")
        new = conn.exec_driver_sql("INSERT INTO project (name, description, namespace, created_at, updated_at) "
                                   "VALUES ('p4', '', 'ns4', '2026-01-01', '2026-01-01') RETURNING id").scalar()
    assert new == 3  # after the largest id present at the migration, never before it
    engine.dispose()


def _dump(engine: sa.Engine) -> dict[str, list[tuple]]:
    with engine.connect() as conn:
        return {name: sorted(map(tuple, conn.exec_driver_sql(f'SELECT * FROM "{name}"').all()), key=repr)
                for name, _ in _tables(engine)}
