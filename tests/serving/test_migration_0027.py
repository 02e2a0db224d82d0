"""Migration 0027 on an existing database: model versions get the run's parameters and their metrics' curves,
empty for the versions already there, and back down both columns go."""
from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

pytestmark = pytest.mark.backends


def test_migration_0027_adds_params_and_metric_history_empty_to_existing_versions(app, tmp_path):
    from alembic import command
    from alembic.script import ScriptDirectory

    from myapp.models.migrate import alembic_config

    url = f"sqlite:///{tmp_path / 'old.sqlite'}"
    config = alembic_config(url)
    before = ScriptDirectory.from_config(config).get_revision("0027").down_revision
    command.upgrade(config, before)
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.exec_driver_sql("INSERT INTO project (id, name, description, namespace, created_at, updated_at) "
                             "VALUES (1, 'p', '', 'ns', '2026-01-01', '2026-01-01')")
        conn.exec_driver_sql("INSERT INTO model_version (id, project_id, name, version, uri, framework, metrics, "
                             "stage, signature, files, description, created_at, updated_at) VALUES (4, 1, 'm', 1, "
                             "'/m', 'sklearn', '{\"accuracy\": 0.9}', 'none', '{}', '[]', '', '2026-01-01', "
                             "'2026-01-01')")
    command.upgrade(config, "0027")
    with engine.connect() as conn:
        row = conn.exec_driver_sql("SELECT metrics, params, metric_history FROM model_version WHERE id = 4").one()
    assert [json.loads(v) for v in row] == [{"accuracy": 0.9}, {}, {}]
    command.downgrade(config, before)
    columns = {c["name"] for c in sa.inspect(engine).get_columns("model_version")}
    assert "metrics" in columns and not {"params", "metric_history"} & columns
    engine.dispose()
