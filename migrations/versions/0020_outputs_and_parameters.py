"""Outputs and parameters: a run's parameters are named as the API and the pipeline name them,
`pipeline_run.params` -> `pipeline_run.parameters` (a column rename; SQLite has renamed columns in place
since 3.25, without rebuilding the table).

Revision ID: 0020
Revises: 0019
"""
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.get_bind().exec_driver_sql("ALTER TABLE pipeline_run RENAME COLUMN params TO parameters")


def downgrade() -> None:
    op.get_bind().exec_driver_sql("ALTER TABLE pipeline_run RENAME COLUMN parameters TO params")
