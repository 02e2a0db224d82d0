"""Serving engine per cluster: `cluster.serving_engine` (`deployments` | `kserve`, CHECKed like
every enum column), and where an inference service runs, `inference_service.resource_group_id` (a plain
indexed integer like its project_id; the resource groups API keeps a group a service uses). Plain
ALTER TABLE ADD/DROP COLUMN on both SQLite (3.35+) and PostgreSQL: no table rebuild.

Revision ID: 0021
Revises: 0020
"""
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    bind = op.get_bind()
    bind.exec_driver_sql("ALTER TABLE cluster ADD COLUMN serving_engine VARCHAR(32) DEFAULT 'deployments' NOT NULL "
                         "CONSTRAINT serving_engine CHECK (serving_engine IN ('deployments', 'kserve'))")
    bind.exec_driver_sql("ALTER TABLE inference_service ADD COLUMN resource_group_id INTEGER")
    op.create_index("ix_inference_service_resource_group_id", "inference_service", ["resource_group_id"])


def downgrade() -> None:
    op.drop_index("ix_inference_service_resource_group_id", table_name="inference_service")
    bind = op.get_bind()
    bind.exec_driver_sql("ALTER TABLE inference_service DROP COLUMN resource_group_id")
    bind.exec_driver_sql("ALTER TABLE cluster DROP COLUMN serving_engine")
