"""Model registry and inference services.

Model versions get a stage, a signature, files and a description (their run comes through their
task run); inference services get the desired state the serving controller acts on (shadow version,
autoscaling, deletion) and the actual state it writes (reason, per-version status, backend objects).

Revision ID: 0015
Revises: 0014
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

STAGES = ("none", "staging", "production", "archived")


def upgrade() -> None:
    json_type = sa.JSON().with_variant(JSONB(), "postgresql")
    # Plain ADD COLUMN on both databases; server defaults fill the existing rows (the models always write them).
    # The stage's CHECK constraint: PostgreSQL adds it in place; SQLite cannot add one to a table without
    # copying it (batch mode, which would drop its AUTOINCREMENT), so there the model's validation alone holds.
    postgres = op.get_bind().dialect.name == "postgresql"
    stage_type = (sa.Enum(*STAGES, name="model_stage", native_enum=False, create_constraint=True, length=32)
                  if postgres else sa.String(length=32))
    op.add_column("model_version", sa.Column("stage", stage_type, nullable=False, server_default="none"))
    op.add_column("model_version", sa.Column("signature", json_type, nullable=False, server_default=sa.text("'{}'")))
    op.add_column("model_version", sa.Column("files", json_type, nullable=False, server_default=sa.text("'[]'")))
    op.add_column("model_version", sa.Column("description", sa.Text(), nullable=False, server_default=""))
    op.add_column("model_version", sa.Column("image", sa.String(length=512), nullable=True))
    service = (
        sa.Column("shadow_version_id", sa.Integer(), nullable=True),
        sa.Column("mirror_percent", sa.Integer(), nullable=False, server_default="100"),
        sa.Column("autoscale_metric", sa.String(length=16), nullable=False, server_default="cpu"),
        sa.Column("autoscale_target", sa.Integer(), nullable=False, server_default="70"),
        sa.Column("deleting", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("generation", sa.Integer(), nullable=False, server_default="1"),
        sa.Column("reason", sa.Text(), nullable=False, server_default=""),
        sa.Column("versions_status", json_type, nullable=False, server_default=sa.text("'{}'")),
        sa.Column("jobs", json_type, nullable=False, server_default=sa.text("'{}'")),
        sa.Column("next_check_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("claimed_until", sa.DateTime(timezone=True), nullable=True),
    )
    for column in service:
        op.add_column("inference_service", column)
    op.create_index("ix_inference_service_next_check_at", "inference_service", ["next_check_at"])


def downgrade() -> None:
    op.drop_index("ix_inference_service_next_check_at", table_name="inference_service")
    for name in ("claimed_until", "next_check_at", "jobs", "versions_status", "reason", "generation", "deleting",
                 "autoscale_target", "autoscale_metric", "mirror_percent", "shadow_version_id"):
        op.drop_column("inference_service", name)  # SQLite 3.35+ drops columns in place
    for name in ("image", "description", "files", "signature", "stage"):
        op.drop_column("model_version", name)
