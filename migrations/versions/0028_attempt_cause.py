"""An attempt keeps why the machine ended it (`cause`: replica-lost, evicted, node-lost, preempted) and the
nodes it lost (`lost_nodes`), which the task's next attempt is kept off (myapp/pipelines/backend_calls.py).

Revision ID: 0028
Revises: 0027
"""
import sqlalchemy as sa
from alembic import op

revision = "0028"
down_revision = "0027"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(sa.dialects.postgresql.JSONB(), "postgresql")

# SQLite may rebuild the table for these: keep AUTOINCREMENT (ids never reused, migration 0009).
KEEP_IDS = {"sqlite_autoincrement": True}


def upgrade() -> None:
    with op.batch_alter_table("task_run", table_kwargs=KEEP_IDS) as batch:
        batch.add_column(sa.Column("cause", sa.String(32)))
        batch.add_column(sa.Column("lost_nodes", JSON))


def downgrade() -> None:
    with op.batch_alter_table("task_run", table_kwargs=KEEP_IDS) as batch:
        batch.drop_column("lost_nodes")
        batch.drop_column("cause")
