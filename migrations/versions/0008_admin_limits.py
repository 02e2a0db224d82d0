"""Admin limits: concurrent runs per project, backfill length, minimum schedule interval; bounded submission retries.

Revision ID: 0008
Revises: 0007
"""
import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMN on both databases (no SQLite table copy).
    op.add_column("project", sa.Column("max_running_runs", sa.Integer(), nullable=True))
    op.add_column("task_run", sa.Column("backend_errors", sa.Integer(), server_default="0", nullable=False))
    op.add_column("task_run", sa.Column("backend_retry_at", sa.DateTime(timezone=True), nullable=True))
    op.create_table(
        "platform_setting",
        sa.Column("name", sa.String(length=63), nullable=False),
        sa.Column("value", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_by_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(["updated_by_id"], ["ab_user.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("name"),
    )


def downgrade() -> None:
    op.drop_table("platform_setting")
    op.drop_column("task_run", "backend_retry_at")  # SQLite 3.35+ drops columns in place
    op.drop_column("task_run", "backend_errors")
    op.drop_column("project", "max_running_runs")
