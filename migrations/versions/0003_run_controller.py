"""Run controller bookkeeping: the run's reconcile lock column and each attempt's backend reference.

Revision ID: 0003
Revises: 0002
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("pipeline_run") as batch:
        batch.add_column(sa.Column("reconciled_at", sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table("task_run") as batch:
        batch.add_column(sa.Column(
            "backend_ref", sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("task_run") as batch:
        batch.drop_column("backend_ref")
    with op.batch_alter_table("pipeline_run") as batch:
        batch.drop_column("reconciled_at")
