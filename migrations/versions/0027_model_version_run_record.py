"""A model version registered from a run keeps the run's parameters (`params`) and its metrics' values per
step (`metric_history`), beside the last values already in `metrics` (myapp/outputs/run_summary.py).

Revision ID: 0027
Revises: 0026
"""
import sqlalchemy as sa
from alembic import op

revision = "0027"
down_revision = "0026"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(sa.dialects.postgresql.JSONB(), "postgresql")


# SQLite may rebuild the table for these: keep AUTOINCREMENT (ids never reused, migration 0009).
KEEP_IDS = {"sqlite_autoincrement": True}


def upgrade() -> None:
    with op.batch_alter_table("model_version", table_kwargs=KEEP_IDS) as batch:
        batch.add_column(sa.Column("params", JSON, nullable=False, server_default=sa.text("'{}'")))
        batch.add_column(sa.Column("metric_history", JSON, nullable=False, server_default=sa.text("'{}'")))


def downgrade() -> None:
    with op.batch_alter_table("model_version", table_kwargs=KEEP_IDS) as batch:
        batch.drop_column("metric_history")
        batch.drop_column("params")
