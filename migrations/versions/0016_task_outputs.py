"""Task outputs, run parameters and metrics: each attempt's output folder, what it wrote
there and the metrics it reported.

Revision ID: 0016
Revises: 0015
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def _json() -> sa.types.TypeEngine:
    return sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("task_run") as batch:
        batch.add_column(sa.Column("output_dir", sa.String(255), nullable=True))
        batch.add_column(sa.Column("outputs", _json(), nullable=True))
        batch.add_column(sa.Column("reported_metrics", _json(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("task_run") as batch:
        batch.drop_column("reported_metrics")
        batch.drop_column("outputs")
        batch.drop_column("output_dir")
