"""A deleted run's checkpoint folders still to remove, one row per backend that may hold them
(myapp/pipelines/checkpoint_cleanup.py).

Revision ID: 0029
Revises: 0028
"""
import sqlalchemy as sa
from alembic import op

revision = "0029"
down_revision = "0028"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "checkpoint_cleanup",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("namespace", sa.String(length=63), nullable=False),
        sa.Column("pipeline_run_id", sa.Integer(), nullable=False),
        sa.Column("resource_group_id", sa.Integer(), nullable=True),
        sa.Column("due_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_checkpoint_cleanup_due_at", "checkpoint_cleanup", ["due_at"])


def downgrade() -> None:
    op.drop_index("ix_checkpoint_cleanup_due_at", table_name="checkpoint_cleanup")
    op.drop_table("checkpoint_cleanup")
