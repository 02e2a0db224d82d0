"""Reconcile requests: at most one pending reconcile per run, and when a run next needs a look.

Revision ID: 0007
Revises: 0006
"""
import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("pipeline_run", sa.Column("reconcile_requested_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("pipeline_run", sa.Column("next_reconcile_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index("ix_pipeline_run_next_reconcile_at", "pipeline_run", ["next_reconcile_at"])
    # Unfinished runs are due now: beat's next tick looks at each once and the controller sets its timer.
    op.execute(sa.text("UPDATE pipeline_run SET next_reconcile_at = CURRENT_TIMESTAMP "
                       "WHERE state IN ('queued', 'running')"))


def downgrade() -> None:
    op.drop_index("ix_pipeline_run_next_reconcile_at", table_name="pipeline_run")
    op.drop_column("pipeline_run", "next_reconcile_at")
    op.drop_column("pipeline_run", "reconcile_requested_at")
