"""Migration 0027 on an existing database of the pass's kind (its columns are JSONB on PostgreSQL): model
versions get the run's parameters and their metrics' curves, empty for the versions already there, and back
down both columns go."""
from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from tests.support import scratch_database

pytestmark = pytest.mark.backends


def test_migration_0027_adds_params_and_metric_history_empty_to_existing_versions(app, tmp_path):
    from myapp.models.migrate import alembic_config

    with scratch_database(tmp_path) as url:
        migrate_0027(url, alembic_config(url))


def migrate_0027(url, config):
    from alembic import command
    from alembic.script import ScriptDirectory

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
    assert [v if isinstance(v, dict) else json.loads(v) for v in row] == [{"accuracy": 0.9}, {}, {}]
    if engine.dialect.name == "postgresql":  # as the models declare them there
        types = {c["name"]: type(c["type"]).__name__ for c in sa.inspect(engine).get_columns("model_version")}
        assert (types["params"], types["metric_history"]) == ("JSONB", "JSONB"), types
    command.downgrade(config, before)
    columns = {c["name"] for c in sa.inspect(engine).get_columns("model_version")}
    assert "metrics" in columns and not {"params", "metric_history"} & columns
    engine.dispose()
