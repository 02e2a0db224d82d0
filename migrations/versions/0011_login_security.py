"""Login security: lockout after failed logins, sessions invalid after logout.

Revision ID: 0011
Revises: 0010
"""
import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "login_session",
        sa.Column("sid", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["ab_user.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("sid"),
    )
    op.create_index("ix_login_session_user_id", "login_session", ["user_id"])
    op.create_index("ix_login_session_expires_at", "login_session", ["expires_at"])
    op.create_table(
        "login_failure",
        sa.Column("key", sa.String(length=400), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("window_ends_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("locked_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key"),
    )
    op.create_index("ix_login_failure_expires_at", "login_failure", ["expires_at"])
    op.create_table(
        "token_cutoff",
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("not_before", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["ab_user.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("user_id"),
    )


def downgrade() -> None:
    op.drop_table("token_cutoff")
    op.drop_index("ix_login_failure_expires_at", table_name="login_failure")
    op.drop_table("login_failure")
    op.drop_index("ix_login_session_expires_at", table_name="login_session")
    op.drop_index("ix_login_session_user_id", table_name="login_session")
    op.drop_table("login_session")
