"""Hyperparameter search (myapp/experiments): `experiment` and its `trial` rows; a trial's run says which
experiment and trial it is (`pipeline_run.experiment_id`, `trial_number`, added in place).

Revision ID: 0026
Revises: 0025
"""
import sqlalchemy as sa
from alembic import op

revision = "0026"
down_revision = "0025"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(sa.dialects.postgresql.JSONB(), "postgresql")


def _state(name: str, values: tuple[str, ...]) -> sa.Enum:
    return sa.Enum(*values, name=name, native_enum=False, create_constraint=True, length=32)


def upgrade() -> None:
    op.create_table(
        "experiment",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("pipeline_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=63), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("search_space", JSON, nullable=False),
        sa.Column("objectives", JSON, nullable=False),
        sa.Column("algorithm", sa.String(length=32), nullable=False),
        sa.Column("seed", sa.Integer(), nullable=True),
        sa.Column("early_stopping", JSON, nullable=True),
        sa.Column("max_trials", sa.Integer(), nullable=False),
        sa.Column("parallel_trials", sa.Integer(), nullable=False),
        sa.Column("max_failed_trials", sa.Integer(), nullable=False),
        sa.Column("time_limit_seconds", sa.Integer(), nullable=True),
        sa.Column("state", _state("experiment_state", ("created", "running", "succeeded", "failed", "cancelled")),
                  nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("sampler_state", JSON, nullable=True),
        sa.Column("look_requested_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("next_look_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("looked_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_by_id", sa.Integer(), sa.ForeignKey("ab_user.id", ondelete="SET NULL"), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.UniqueConstraint("project_id", "name"),
        sa.UniqueConstraint("project_id", "id"),
        sa.ForeignKeyConstraint(["project_id", "pipeline_id"], ["pipeline.project_id", "pipeline.id"],
                                ondelete="CASCADE"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_experiment_project_id", "experiment", ["project_id"])
    op.create_index("ix_experiment_pipeline_id", "experiment", ["pipeline_id"])
    op.create_index("ix_experiment_state_next_look_at", "experiment", ["state", "next_look_at"])
    op.create_table(
        "trial",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("experiment_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("parameters", JSON, nullable=False),
        sa.Column("state", _state("trial_state", ("running", "complete", "pruned", "failed", "cancelled")),
                  nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("values", JSON, nullable=True),
        sa.Column("intermediate", JSON, nullable=False),
        sa.Column("pruned_step", sa.Integer(), nullable=True),
        sa.Column("system_attrs", JSON, nullable=False),
        sa.Column("pipeline_run_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.UniqueConstraint("experiment_id", "number"),
        sa.ForeignKeyConstraint(["project_id", "experiment_id"], ["experiment.project_id", "experiment.id"],
                                ondelete="CASCADE"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_trial_project_id", "trial", ["project_id"])
    op.create_index("ix_trial_experiment_id", "trial", ["experiment_id"])
    op.create_index("ix_trial_pipeline_run_id", "trial", ["pipeline_run_id"])
    op.add_column("pipeline_run", sa.Column("experiment_id", sa.Integer(), nullable=True))
    op.add_column("pipeline_run", sa.Column("trial_number", sa.Integer(), nullable=True))
    op.create_index("ix_pipeline_run_experiment_id", "pipeline_run", ["experiment_id"])


def downgrade() -> None:
    op.drop_index("ix_pipeline_run_experiment_id", "pipeline_run")
    op.drop_column("pipeline_run", "trial_number")
    op.drop_column("pipeline_run", "experiment_id")
    op.drop_table("trial")
    op.drop_table("experiment")
