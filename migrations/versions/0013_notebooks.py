"""Notebook lifecycle: states with reasons, intent, the running attempt, idle culling.

`notebook.state` gets the lifecycle's states (pending, pulling, waiting, running, idle, stopping,
stopped, failed; a `succeeded` row, which nothing wrote, becomes `stopped`); new columns say what the
owner asked for (`desired`), why (`reason`), the attempt and its ref, activity; `project` gets the
idle timeout of its notebooks. SQLite cannot change a CHECK constraint in place: the table is rebuilt
by SQLite's own procedure (new table, copy, drop, rename, indexes), keeping AUTOINCREMENT.

Revision ID: 0013
Revises: 0012
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

STATES = ("pending", "pulling", "waiting", "running", "idle", "stopping", "stopped", "failed")
OLD_STATES = ("pending", "running", "stopped", "succeeded", "failed")
INTENTS = ("running", "stopped", "deleted")
JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
NEW_COLUMNS = ("volume", "reason", "desired", "attempt", "job", "upstream", "started_at", "last_activity_at",
               "requested_at")


def _enum(values, name):
    return sa.Enum(*values, name=name, native_enum=False, create_constraint=True, length=32)


def _table(name, states, lifecycle=True):
    """The notebook table as of this revision (`lifecycle`) or before it."""
    columns = [
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=63), nullable=False),
        sa.Column("image", sa.String(length=512), nullable=False),
        sa.Column("resources", JSON, nullable=False),
        sa.Column("resource_group_id", sa.Integer(), nullable=True),
        sa.Column("volume", sa.String(length=63), nullable=True),
        sa.Column("state", _enum(states, "notebook_state"), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("desired", _enum(INTENTS, "notebook_intent"), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("job", JSON, nullable=True),
        sa.Column("upstream", sa.String(length=2048), nullable=True),
        sa.Column("url", sa.String(length=2048), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_activity_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("requested_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_by_id", sa.Integer(), nullable=True),
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    ]
    if not lifecycle:
        columns = [c for c in columns if c.name not in NEW_COLUMNS]
    metadata = sa.MetaData()
    for parent in ("ab_user", "project", "resource_group"):  # what the foreign keys name (not created here)
        sa.Table(parent, metadata, sa.Column("id", sa.Integer(), primary_key=True))
    return sa.Table(name, metadata, *columns,
                    sa.ForeignKeyConstraint(["created_by_id"], ["ab_user.id"], ondelete="SET NULL"),
                    sa.ForeignKeyConstraint(["project_id"], ["project.id"], ondelete="CASCADE"),
                    sa.ForeignKeyConstraint(["resource_group_id"], ["resource_group.id"], ondelete="SET NULL"),
                    sa.PrimaryKeyConstraint("id"),
                    sa.UniqueConstraint("project_id", "name"),
                    sqlite_autoincrement=True)


def _rebuild_sqlite():
    """SQLite: the table again with the new CHECK and columns, rows copied (a `succeeded` one stopped)."""
    bind = op.get_bind()
    _table("_notebook_new", STATES).create(bind)
    columns = "project_id, name, image, resources, resource_group_id, url, created_by_id, id, created_at, updated_at"
    bind.exec_driver_sql(
        f"INSERT INTO _notebook_new ({columns}, state, desired, attempt) "
        f"SELECT {columns}, CASE WHEN state = 'succeeded' THEN 'stopped' ELSE state END, "
        "CASE WHEN state IN ('pending', 'running') THEN 'running' ELSE 'stopped' END, 1 FROM notebook")
    bind.exec_driver_sql("DROP TABLE notebook")
    bind.exec_driver_sql("ALTER TABLE _notebook_new RENAME TO notebook")
    op.create_index("ix_notebook_project_id", "notebook", ["project_id"], unique=False)


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        if bind.exec_driver_sql("PRAGMA foreign_keys").scalar():
            raise RuntimeError("0013 needs PRAGMA foreign_keys=OFF")  # DROP TABLE would cascade
        _rebuild_sqlite()
    else:
        op.execute("UPDATE notebook SET state = 'stopped' WHERE state = 'succeeded'")
        op.drop_constraint("notebook_state", "notebook", type_="check")
        op.create_check_constraint("notebook_state", "notebook", sa.column("state").in_(STATES))
        with op.batch_alter_table("notebook") as batch:
            batch.alter_column("state", type_=sa.String(32), existing_type=sa.String(32))
            batch.add_column(sa.Column("volume", sa.String(length=63), nullable=True))
            batch.add_column(sa.Column("reason", sa.Text(), nullable=True))
            batch.add_column(sa.Column("desired", sa.String(32), nullable=False, server_default="running"))
            batch.add_column(sa.Column("attempt", sa.Integer(), nullable=False, server_default="1"))
            batch.add_column(sa.Column("job", JSON, nullable=True))
            batch.add_column(sa.Column("upstream", sa.String(length=2048), nullable=True))
            batch.add_column(sa.Column("started_at", sa.DateTime(timezone=True), nullable=True))
            batch.add_column(sa.Column("last_activity_at", sa.DateTime(timezone=True), nullable=True))
            batch.add_column(sa.Column("requested_at", sa.DateTime(timezone=True), nullable=True))
        op.execute("UPDATE notebook SET desired = 'stopped' WHERE state NOT IN ('pending', 'running')")
        op.alter_column("notebook", "desired", server_default=None)
        op.alter_column("notebook", "attempt", server_default=None)
        op.create_check_constraint("notebook_intent", "notebook", sa.column("desired").in_(INTENTS))
    op.add_column("project", sa.Column("notebook_idle_timeout", sa.Integer(), nullable=True))


def downgrade() -> None:
    bind = op.get_bind()
    with op.batch_alter_table("project") as batch:
        batch.drop_column("notebook_idle_timeout")
    op.execute("UPDATE notebook SET state = 'pending' WHERE state IN ('pulling', 'waiting')")
    op.execute("UPDATE notebook SET state = 'running' WHERE state = 'idle'")
    op.execute("UPDATE notebook SET state = 'stopped' WHERE state = 'stopping'")
    if bind.dialect.name == "sqlite":
        _table("_notebook_old", OLD_STATES, lifecycle=False).create(bind)
        columns = "project_id, name, image, resources, resource_group_id, url, created_by_id, id, created_at, " \
                  "updated_at, state"
        bind.exec_driver_sql(f"INSERT INTO _notebook_old ({columns}) SELECT {columns} FROM notebook")
        bind.exec_driver_sql("DROP TABLE notebook")
        bind.exec_driver_sql("ALTER TABLE _notebook_old RENAME TO notebook")
        op.create_index("ix_notebook_project_id", "notebook", ["project_id"], unique=False)
        return
    op.drop_constraint("notebook_intent", "notebook", type_="check")
    op.drop_constraint("notebook_state", "notebook", type_="check")
    op.create_check_constraint("notebook_state", "notebook", sa.column("state").in_(OLD_STATES))
    for name in NEW_COLUMNS:
        op.drop_column("notebook", name)
