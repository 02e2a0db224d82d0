"""List counts: exact row counts per (table, project, state), so a list's count reads a few
rows instead of counting 10,000+ (myapp/models/list_count.py, myapp/api/counts.py).

The table only: its triggers, and the counts of the rows already there, are made by
`myapp.models.list_count.keep_counts`, which env.py runs after every upgrade (SQLite drops a table's
triggers whenever a later migration rebuilds that table).

Revision ID: 0017
Revises: 0016
"""
import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "list_count",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("tbl", sa.String(32), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(32), nullable=False),
        sa.Column("n", sa.BigInteger(), nullable=False),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_list_count_key", "list_count", ["tbl", "project_id", "state"])


def downgrade() -> None:
    from myapp.models.list_count import drop_triggers  # the names of what keep_counts made

    drop_triggers(op.get_bind())
    op.drop_index("ix_list_count_key", "list_count")
    op.drop_table("list_count")
