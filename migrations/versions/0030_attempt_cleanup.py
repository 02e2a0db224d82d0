"""A finished attempt's cleanup (its log archived, its job removed) runs after the commit that ended it: the
attempt keeps when it is due (`cleanup_at`, NULL once done), so a worker that dies before it leaves it to beat
(myapp/pipelines/attempt_cleanup.py). Attempts that ended before this were cleaned up in that commit.

Revision ID: 0030
Revises: 0029
"""
import sqlalchemy as sa
from alembic import op

revision = "0030"
down_revision = "0029"
branch_labels = None
depends_on = None

# SQLite may rebuild the table for these: keep AUTOINCREMENT (ids never reused, migration 0009).
KEEP_IDS = {"sqlite_autoincrement": True}


def upgrade() -> None:
    with op.batch_alter_table("task_run", table_kwargs=KEEP_IDS) as batch:
        batch.add_column(sa.Column("cleanup_at", sa.DateTime(timezone=True)))
        batch.create_index("ix_task_run_cleanup_at", ["cleanup_at"])


def downgrade() -> None:
    with op.batch_alter_table("task_run", table_kwargs=KEEP_IDS) as batch:
        batch.drop_index("ix_task_run_cleanup_at")
        batch.drop_column("cleanup_at")
