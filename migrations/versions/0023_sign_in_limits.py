"""Sign-in limits that never lock an owner out (myapp/auth/login_limits.py): the lockout table goes
(`login_failure`: failures per account and a "locked until" that refused the right password too);
`login_limit` holds backoff per (account, client address) and each account's budget of attempts from
new addresses, `login_known_address` the addresses each account signed in from, exempt from that
budget. Limits in force when upgrading are dropped (they were lockouts); nothing else is lost.

Revision ID: 0023
Revises: 0022
"""
import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index("ix_login_failure_expires_at", table_name="login_failure")
    op.drop_table("login_failure")
    op.create_table(
        "login_limit",
        sa.Column("key", sa.String(length=400), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=True),
        sa.Column("address", sa.String(length=64), nullable=True),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("until", sa.Float(), nullable=False),
        sa.Column("expires_at", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["ab_user.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("key"),
    )
    op.create_index("ix_login_limit_user_id", "login_limit", ["user_id"])
    op.create_index("ix_login_limit_expires_at", "login_limit", ["expires_at"])
    op.create_table(
        "login_known_address",
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("address", sa.String(length=64), nullable=False),
        sa.Column("last_login_at", sa.Float(), nullable=False),
        sa.Column("expires_at", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["ab_user.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("user_id", "address"),
    )
    op.create_index("ix_login_known_address_expires_at", "login_known_address", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_login_known_address_expires_at", table_name="login_known_address")
    op.drop_table("login_known_address")
    op.drop_index("ix_login_limit_expires_at", table_name="login_limit")
    op.drop_index("ix_login_limit_user_id", table_name="login_limit")
    op.drop_table("login_limit")
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
