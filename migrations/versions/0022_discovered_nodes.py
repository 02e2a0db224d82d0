"""Capacity discovered on Kubernetes: a resource group may say its nodes are discovered
(`discover_nodes`); the worker's tick lists the cluster's Nodes matching the group's node selector and
stores what it found (`discovered_nodes`, schedulable or not, with allocatable GPUs, CPU and memory),
when (`discovered_at`) and why the last listing failed (`discovery_error`). Plain ADD COLUMN on both
databases (no SQLite table copy).

Revision ID: 0022
Revises: 0021
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.add_column("resource_group", sa.Column("discover_nodes", sa.Boolean(), server_default=sa.false(),
                                              nullable=False))
    op.add_column("resource_group", sa.Column("discovered_nodes", JSON, server_default="[]", nullable=False))
    op.add_column("resource_group", sa.Column("discovered_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("resource_group", sa.Column("discovery_error", sa.String(length=1024), nullable=True))


def downgrade() -> None:
    for column in ("discovery_error", "discovered_at", "discovered_nodes", "discover_nodes"):
        op.drop_column("resource_group", column)  # SQLite 3.35+ drops columns in place
