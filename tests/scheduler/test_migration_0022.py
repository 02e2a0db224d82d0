"""Migration 0022 on an existing SQLite database: resource groups keep their rows, do not discover their
nodes and have none discovered; back down to 0021 the columns go."""
from __future__ import annotations

import pytest
import sqlalchemy as sa

pytestmark = pytest.mark.backends

COLUMNS = {"discover_nodes", "discovered_nodes", "discovered_at", "discovery_error"}


def test_migration_0022_adds_node_discovery_to_resource_groups(app, tmp_path):
    from alembic import command

    from myapp.models.migrate import alembic_config

    url = f"sqlite:///{tmp_path / 'old.sqlite'}"
    command.upgrade(alembic_config(url), "0021")
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.exec_driver_sql("INSERT INTO cluster (id, name, kind, in_cluster, enabled, created_at, updated_at) "
                             "VALUES (3, 'gpu', 'kubernetes', 1, 1, '2026-01-01', '2026-01-01')")
        conn.exec_driver_sql(
            "INSERT INTO resource_group (id, name, cluster_id, node_selector, tolerations, cpu_millicores, "
            "memory_bytes, gpus, gang_scheduling, created_at, updated_at) VALUES (5, 'rg', 3, '{}', '[]', 0, 0, 8, 0, "
            "'2026-01-01', '2026-01-01')")
    command.upgrade(alembic_config(url), "0022")
    with engine.begin() as conn:
        row = conn.exec_driver_sql("SELECT id, gpus, discover_nodes, discovered_nodes, discovered_at, discovery_error "
                                   "FROM resource_group").one()
        assert tuple(row) == (5, 8, 0, "[]", None, None)
    command.downgrade(alembic_config(url), "0021")
    with engine.begin() as conn:
        names = {r[1] for r in conn.exec_driver_sql("PRAGMA table_info(resource_group)")}
        assert "gpus" in names and not names & COLUMNS
