"""A deleted run's outputs still to remove, one row per run (myapp/pipelines/outputs_cleanup.py). Runs deleted
before this had their folder removed by the web process after the commit, or left it when that failed.

Revision ID: 0031
Revises: 0030
"""
import sqlalchemy as sa
from alembic import op

revision = "0031"
down_revision = "0030"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "outputs_cleanup",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("namespace", sa.String(length=63), nullable=False),
        sa.Column("pipeline_run_id", sa.Integer(), nullable=False),
        sa.Column("due_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_outputs_cleanup_due_at", "outputs_cleanup", ["due_at"])


def downgrade() -> None:
    op.drop_index("ix_outputs_cleanup_due_at", table_name="outputs_cleanup")
    op.drop_table("outputs_cleanup")
