"""Migration 0018 on an existing SQLite database: a notebook's plain Jupyter token is sealed when the
migration runs inside the app (it has the SECRET_KEY), left as it is otherwise (readers accept both)."""
from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

pytestmark = pytest.mark.backends


def _database_at_0017(url: str) -> sa.Engine:
    from alembic import command

    from myapp.models.migrate import alembic_config

    command.upgrade(alembic_config(url), "0017")
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.exec_driver_sql("INSERT INTO project (id, name, description, namespace, created_at, updated_at) "
                             "VALUES (1, 'p', '', 'ns', '2026-01-01', '2026-01-01')")
        for id_, job in ((1, {"ref": {"job_name": "lab"}, "token": "plain-jupyter-token"}), (2, None)):
            conn.exec_driver_sql(
                "INSERT INTO notebook (id, project_id, name, image, resources, state, desired, attempt, job, "
                "created_at, updated_at) VALUES (?, 1, ?, 'r/i:1', '{}', 'running', 'running', 1, ?, "
                "'2026-01-01', '2026-01-01')", (id_, f"nb{id_}", json.dumps(job) if job else None))
    return engine


def _jobs(engine: sa.Engine) -> dict[int, object]:
    with engine.begin() as conn:
        return {i: json.loads(j) if j else None for i, j in conn.exec_driver_sql("SELECT id, job FROM notebook")}


def test_migration_0018_seals_the_tokens_rows_hold(app, tmp_path):
    from alembic import command

    from myapp.auth import sealed
    from myapp.models.migrate import alembic_config
    from myapp.notebooks.states import TOKEN_PURPOSE

    url = f"sqlite:///{tmp_path / 'old.sqlite'}"
    engine = _database_at_0017(url)
    with app.app_context():
        command.upgrade(alembic_config(url), "0018")
    jobs = _jobs(engine)
    assert jobs[2] is None and jobs[1]["ref"] == {"job_name": "lab"}  # type: ignore[index]
    stored = jobs[1]["token"]  # type: ignore[index]
    assert sealed.is_sealed(stored) and "plain-jupyter-token" not in stored
    assert sealed.unseal(app.config["SECRET_KEY"], TOKEN_PURPOSE, stored) == "plain-jupyter-token"
    engine.dispose()


def test_migration_0018_without_the_app_leaves_the_rows(tmp_path):
    from alembic import command

    from myapp.models.migrate import alembic_config

    url = f"sqlite:///{tmp_path / 'old.sqlite'}"
    engine = _database_at_0017(url)
    command.upgrade(alembic_config(url), "0018")
    assert _jobs(engine)[1] == {"ref": {"job_name": "lab"}, "token": "plain-jupyter-token"}
    engine.dispose()
