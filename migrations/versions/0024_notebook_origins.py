"""Notebooks served from origins of their own (myapp/notebooks/gate.py): `notebook_access` keeps the
one-time hand-off codes the platform issues and the per-origin sessions they become (digests only).

Revision ID: 0024
Revises: 0023
"""
import sqlalchemy as sa
from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "notebook_access",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("code_hash", sa.String(length=64), nullable=True),
        sa.Column("session_hash", sa.String(length=64), nullable=True),
        sa.Column("notebook_id", sa.Integer(), sa.ForeignKey("notebook.id", ondelete="CASCADE"), nullable=False),
        sa.Column("user_id", sa.Integer(), sa.ForeignKey("ab_user.id", ondelete="CASCADE"), nullable=False),
        sa.Column("login_sid", sa.String(length=64), nullable=False),
        sa.Column("host", sa.String(length=253), nullable=False),
        sa.Column("next_path", sa.String(length=2048), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("code_hash"),
        sa.UniqueConstraint("session_hash"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_notebook_access_notebook_id", "notebook_access", ["notebook_id"])
    op.create_index("ix_notebook_access_login_sid", "notebook_access", ["login_sid"])
    op.create_index("ix_notebook_access_expires_at", "notebook_access", ["expires_at"])


def downgrade() -> None:
    op.drop_table("notebook_access")
