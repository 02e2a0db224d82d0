"""Webhooks: per-pipeline signing secret and event filter.

Revision ID: 0010
Revises: 0009
"""
import json
import secrets

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

# Today's behaviour: every run outcome (myapp.models.pipeline.RUN_EVENTS, copied: migrations stay fixed).
RUN_EVENTS = ["run.failed", "run.succeeded", "run.cancelled"]


def upgrade() -> None:
    json_type = sa.JSON().with_variant(JSONB(), "postgresql")
    # Plain ADD COLUMN on both databases (no SQLite table copy); the server default fills existing rows
    # and stays (harmless: the model always writes the column).
    op.add_column("pipeline", sa.Column("webhook_events", json_type, nullable=False,
                                        server_default=sa.text(f"'{json.dumps(RUN_EVENTS)}'")))
    op.add_column("pipeline", sa.Column("webhook_secret", sa.String(length=128), nullable=True))
    # Every pipeline that has a webhook gets its secret now: its deliveries are signed from the first.
    pipeline = sa.table("pipeline", sa.column("id", sa.Integer), sa.column("webhook_url", sa.String),
                        sa.column("webhook_secret", sa.String))
    bind = op.get_bind()
    ids = bind.execute(sa.select(pipeline.c.id).where(pipeline.c.webhook_url.is_not(None))).scalars().all()
    for pipeline_id in ids:
        bind.execute(sa.update(pipeline).where(pipeline.c.id == pipeline_id)
                     .values(webhook_secret=secrets.token_hex(32)))


def downgrade() -> None:
    op.drop_column("pipeline", "webhook_secret")  # SQLite 3.35+ drops columns in place
    op.drop_column("pipeline", "webhook_events")
