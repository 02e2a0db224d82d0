"""Migration 0025 on an existing SQLite database: tasks keep their rows and settings and run their template's
image (`image` NULL), the table keeps AUTOINCREMENT (ids never reused), and back down to 0024 the column goes."""
from __future__ import annotations

import pytest
import sqlalchemy as sa

pytestmark = pytest.mark.backends

NOW = "'2026-01-01'"


def test_migration_0025_adds_a_tasks_image_and_keeps_its_rows(app, tmp_path):
    from alembic import command

    from myapp.models.migrate import alembic_config

    url = f"sqlite:///{tmp_path / 'old.sqlite'}"
    command.upgrade(alembic_config(url), "0024")
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.exec_driver_sql(f"INSERT INTO project (id, name, description, namespace, created_at, updated_at) "
                             f"VALUES (1, 'p', '', 'ns', {NOW}, {NOW})")
        conn.exec_driver_sql(
            "INSERT INTO job_template (id, name, version, description, category, kind, image, command, args_schema, "
            "default_resources, max_resources, env, checkpoints, builtin, created_at, updated_at) VALUES (2, 'python', "
            f"'1.0.0', '', 'general', 'job', 'python:3.11', '[]', '{{}}', '{{}}', '{{}}', '{{}}', 0, 1, {NOW}, {NOW})")
        conn.exec_driver_sql(
            "INSERT INTO pipeline (id, project_id, name, description, parameters, paused, max_active_runs, "
            "concurrency_policy, depends_on_past, webhook_events, created_at, updated_at) VALUES (3, 1, 'pipe', '', "
            f"'{{}}', 0, 1, 'wait', 0, '[]', {NOW}, {NOW})")
        conn.exec_driver_sql(
            "INSERT INTO task (id, project_id, pipeline_id, name, template_id, args, resources, retries, retry_delay, "
            f"trigger_rule, position, created_at, updated_at) VALUES (7, 1, 3, 'train', 2, '{{\"script\": \"1\"}}', "
            f"'{{}}', 2, 30, 'all_success', '{{}}', {NOW}, {NOW})")
    command.upgrade(alembic_config(url), "0025")
    with engine.begin() as conn:
        assert conn.exec_driver_sql("SELECT id, name, retries, args, image FROM task").all() == [
            (7, "train", 2, '{"script": "1"}', None)]
        table = conn.exec_driver_sql("SELECT sql FROM sqlite_master WHERE name = 'task'").scalar()
        assert "AUTOINCREMENT" in table
        conn.exec_driver_sql("UPDATE task SET image = 'registry.local/p/env:v1' WHERE id = 7")
    command.downgrade(alembic_config(url), "0024")
    with engine.begin() as conn:
        assert "image" not in {row[1] for row in conn.exec_driver_sql("PRAGMA table_info(task)")}
        assert "AUTOINCREMENT" in conn.exec_driver_sql("SELECT sql FROM sqlite_master WHERE name = 'task'").scalar()
        assert conn.exec_driver_sql("SELECT id, name, retries FROM task").all() == [(7, "train", 2)]
    engine.dispose()
