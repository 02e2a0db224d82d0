"""Indexes for run lists filtered by state.

Revision ID: 0002
Revises: 0001
"""
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_pipeline_run_project_state_id", "pipeline_run", ["project_id", "state", "id"])
    op.create_index("ix_task_run_project_state_id", "task_run", ["project_id", "state", "id"])


def downgrade() -> None:
    op.drop_index("ix_task_run_project_state_id", table_name="task_run")
    op.drop_index("ix_pipeline_run_project_state_id", table_name="pipeline_run")
