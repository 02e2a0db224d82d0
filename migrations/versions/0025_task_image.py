"""A task may run in an image or environment of its own choosing (the catalog's, or one its project built)
instead of its template's: `task.image` holds that image's `repository:tag`; NULL keeps the template's.

Revision ID: 0025
Revises: 0024
"""
import sqlalchemy as sa
from alembic import op

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("task") as batch:
        batch.add_column(sa.Column("image", sa.String(length=512), nullable=True))


def downgrade() -> None:
    # SQLite drops a column by rebuilding the table: keep AUTOINCREMENT (ids never reused, migration 0009).
    with op.batch_alter_table("task", table_kwargs={"sqlite_autoincrement": True}) as batch:
        batch.drop_column("image")
