"""Admission and quotas per resource group: nodes and policy of a group, borrowing and lending
of quotas, queue position, placement and preemptions of attempts, templates that checkpoint.

Revision ID: 0012
Revises: 0011
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    # Plain ADD COLUMN on both databases (no SQLite table copy).
    op.add_column("resource_group", sa.Column("nodes", JSON, server_default="[]", nullable=False))
    op.add_column("resource_group", sa.Column("policy", sa.String(length=32), server_default="sieve",
                                              nullable=False))
    op.add_column("resource_group", sa.Column("max_preemptions", sa.Integer(), server_default="2", nullable=False))
    op.add_column("quota", sa.Column("can_borrow", sa.Boolean(), server_default=sa.true(), nullable=False))
    op.add_column("quota", sa.Column("can_lend", sa.Boolean(), server_default=sa.true(), nullable=False))
    op.add_column("task_run", sa.Column("queue_position", sa.Integer(), nullable=True))
    op.add_column("task_run", sa.Column("placement", JSON, nullable=True))
    op.add_column("task_run", sa.Column("requests", JSON, nullable=True))
    op.add_column("task_run", sa.Column("preemptions", sa.Integer(), server_default="0", nullable=False))
    op.add_column("task_run", sa.Column("preempted_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index("ix_task_run_state", "task_run", ["state"])
    op.add_column("job_template", sa.Column("checkpoints", sa.Boolean(), server_default=sa.false(), nullable=False))


def downgrade() -> None:
    op.drop_column("job_template", "checkpoints")
    op.drop_index("ix_task_run_state", table_name="task_run")
    for column in ("preempted_at", "preemptions", "requests", "placement", "queue_position"):
        op.drop_column("task_run", column)  # SQLite 3.35+ drops columns in place
    op.drop_column("quota", "can_lend")
    op.drop_column("quota", "can_borrow")
    op.drop_column("resource_group", "max_preemptions")
    op.drop_column("resource_group", "policy")
    op.drop_column("resource_group", "nodes")
