"""Migration 0021 on an existing SQLite database: clusters keep their rows and get the `deployments` serving
engine (CHECKed), services get an empty resource group, and back down to 0020 both columns go."""
from __future__ import annotations

import pytest
import sqlalchemy as sa

pytestmark = pytest.mark.backends


def test_migration_0021_adds_the_serving_engine_and_a_service_s_resource_group(app, tmp_path):
    from alembic import command

    from myapp.models.migrate import alembic_config

    url = f"sqlite:///{tmp_path / 'old.sqlite'}"
    command.upgrade(alembic_config(url), "0020")
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.exec_driver_sql("INSERT INTO cluster (id, name, kind, in_cluster, enabled, created_at, updated_at) "
                             "VALUES (3, 'gpu', 'kubernetes', 1, 1, '2026-01-01', '2026-01-01')")
        conn.exec_driver_sql("INSERT INTO project (id, name, description, namespace, created_at, updated_at) "
                             "VALUES (1, 'p', '', 'ns', '2026-01-01', '2026-01-01')")
        conn.exec_driver_sql("INSERT INTO model_version (id, project_id, name, version, uri, framework, metrics, "
                             "stage, signature, files, description, created_at, updated_at) VALUES (4, 1, 'm', 1, "
                             "'/m', 'sklearn', '{}', 'none', '{}', '[]', '', '2026-01-01', '2026-01-01')")
        conn.exec_driver_sql(
            "INSERT INTO inference_service (id, project_id, name, model_version_id, min_replicas, max_replicas, "
            "resources, traffic, state, mirror_percent, autoscale_metric, autoscale_target, deleting, generation, "
            "reason, versions_status, jobs, created_at, updated_at) VALUES (9, 1, 's', 4, 1, 1, '{}', '{\"4\": 100}', "
            "'running', 100, 'cpu', 70, 0, 1, '', '{}', '{}', '2026-01-01', '2026-01-01')")
    command.upgrade(alembic_config(url), "0021")
    with engine.begin() as conn:
        assert conn.exec_driver_sql("SELECT id, serving_engine FROM cluster").all() == [(3, "deployments")]
        assert conn.exec_driver_sql("SELECT id, resource_group_id FROM inference_service").all() == [(9, None)]
        conn.exec_driver_sql("UPDATE cluster SET serving_engine = 'kserve' WHERE id = 3")
    with engine.begin() as conn, pytest.raises(sa.exc.IntegrityError):
        conn.exec_driver_sql("UPDATE cluster SET serving_engine = 'knative' WHERE id = 3")
    command.downgrade(alembic_config(url), "0020")
    with engine.begin() as conn:
        assert "serving_engine" not in {row[1] for row in conn.exec_driver_sql("PRAGMA table_info(cluster)")}
        assert "resource_group_id" not in {row[1] for row in conn.exec_driver_sql(
            "PRAGMA table_info(inference_service)")}
        assert conn.exec_driver_sql("SELECT id, name FROM inference_service").all() == [(9, "s")]
    engine.dispose()
