"""Migration 0014 on an existing SQLite database: every image and build row kept with its id, the new columns
filled with their defaults, the CHECK and foreign keys (old and new) enforced, and back down to 0013."""
from __future__ import annotations

import pytest
import sqlalchemy as sa

pytestmark = pytest.mark.backends


def test_migration_0014_keeps_the_rows_and_adds_enforced_columns(app, tmp_path):
    from alembic import command

    from myapp.models.migrate import alembic_config

    url = f"sqlite:///{tmp_path / 'old.sqlite'}"
    command.upgrade(alembic_config(url), "0013")
    engine = sa.create_engine(url)
    sa.event.listen(engine, "connect", lambda conn, _: conn.execute("PRAGMA foreign_keys=ON"))
    with engine.begin() as conn:
        conn.exec_driver_sql("INSERT INTO project (id, name, description, namespace, created_at, updated_at) "
                             "VALUES (1, 'p', '', 'ns', '2026-01-01', '2026-01-01')")
        conn.exec_driver_sql("INSERT INTO image (id, repository, tag, description, created_at, updated_at) "
                             "VALUES (5, 'r.io/a/b', '1', '', '2026-01-01', '2026-01-01')")
        conn.exec_driver_sql("INSERT INTO image_build (id, project_id, repository, tag, packages, state, image_id, "
                             "created_at, updated_at) VALUES (7, 1, 'r.io/a/b', '1', '[\"six\"]', 'succeeded', 5, "
                             "'2026-01-01', '2026-01-01')")
    command.upgrade(alembic_config(url), "0014")
    with engine.begin() as conn:
        assert conn.exec_driver_sql("SELECT id, project_id, environment FROM image").all() == [(5, None, None)]
        assert conn.exec_driver_sql("SELECT id, image_id, source, apt_packages, cached, notebook_id FROM image_build"
                                    ).all() == [(7, 5, "packages", "[]", 0, None)]
        assert conn.exec_driver_sql("PRAGMA foreign_key_check").all() == []
    with engine.begin() as conn, pytest.raises(sa.exc.IntegrityError):
        conn.exec_driver_sql("UPDATE image_build SET source = 'nope' WHERE id = 7")
    with engine.begin() as conn, pytest.raises(sa.exc.IntegrityError):
        conn.exec_driver_sql("UPDATE image SET project_id = 99 WHERE id = 5")
    with engine.begin() as conn, pytest.raises(sa.exc.IntegrityError):  # an old foreign key survived the rebuild
        conn.exec_driver_sql("UPDATE image_build SET project_id = 99 WHERE id = 7")
    with engine.begin() as conn:
        conn.exec_driver_sql("UPDATE image SET project_id = 1 WHERE id = 5")
        conn.exec_driver_sql("DELETE FROM project WHERE id = 1")  # its images go with it (CASCADE), and builds
        assert conn.exec_driver_sql("SELECT count(*) FROM image").scalar() == 0
        assert conn.exec_driver_sql("SELECT count(*) FROM image_build").scalar() == 0
    command.downgrade(alembic_config(url), "0013")
    with engine.begin() as conn:
        columns = {row[1] for row in conn.exec_driver_sql("PRAGMA table_info(image_build)")}
    assert "source" not in columns and "packages" in columns
    engine.dispose()
