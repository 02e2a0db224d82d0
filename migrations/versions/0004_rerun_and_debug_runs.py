"""Reruns from the failed tasks and debug runs of one task.

Revision ID: 0004
Revises: 0003
"""
import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("pipeline_run") as batch:
        batch.add_column(sa.Column("rerun_of_id", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("only_task_id", sa.Integer(), nullable=True))
        batch.create_foreign_key("fk_pipeline_run_rerun_of_id", "pipeline_run", ["rerun_of_id"], ["id"],
                                 ondelete="SET NULL")
        batch.create_foreign_key("fk_pipeline_run_only_task_id", "task", ["only_task_id"], ["id"],
                                 ondelete="CASCADE")


def downgrade() -> None:
    with op.batch_alter_table("pipeline_run") as batch:
        batch.drop_constraint("fk_pipeline_run_only_task_id", type_="foreignkey")
        batch.drop_constraint("fk_pipeline_run_rerun_of_id", type_="foreignkey")
        batch.drop_column("only_task_id")
        batch.drop_column("rerun_of_id")
