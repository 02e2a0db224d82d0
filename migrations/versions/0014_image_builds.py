"""Image builds and environments: a build's source, apt packages, cluster, notebook snapshot,
environment, Kaniko Job and times; an image's project and environment.

PostgreSQL: ADD COLUMN and ADD CONSTRAINT. SQLite cannot add a table constraint to a table (and
reflects no ON DELETE of a column's inline REFERENCES), so each table is rebuilt by SQLite's own
procedure, as 0009 did: the stored CREATE statement with the new columns and constraints appended, copy,
drop, rename, indexes again; every existing constraint, CHECK and AUTOINCREMENT stays as it was.

Revision ID: 0014
Revises: 0013
"""
import re
from collections.abc import Callable

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.schema import CreateColumn

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

# myapp.models.workspace.BuildSource, copied: migrations stay fixed.
BUILD_SOURCES = ("packages", "dockerfile", "notebook")


def _columns(json_type: sa.types.TypeEngine) -> dict[str, list[sa.Column]]:
    return {
        "image": [sa.Column("project_id", sa.Integer(), nullable=True),
                  sa.Column("environment", sa.String(length=64), nullable=True)],
        "image_build": [
            sa.Column("source", sa.String(length=32), nullable=False, server_default="packages"),
            sa.Column("apt_packages", json_type, nullable=False, server_default=sa.text("'[]'")),
            sa.Column("resource_group_id", sa.Integer(), nullable=True),
            sa.Column("notebook_id", sa.Integer(), nullable=True),
            sa.Column("environment", sa.String(length=64), nullable=True),
            sa.Column("cached", sa.Boolean(), nullable=False, server_default=sa.false()),
            sa.Column("backend_ref", json_type, nullable=True),
            sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
            sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        ],
    }


# (table, column, referred table, on delete)
REFERENCES = [("image", "project_id", "project", "CASCADE"),
              ("image_build", "resource_group_id", "resource_group", "SET NULL"),
              ("image_build", "notebook_id", "notebook", "SET NULL")]
SOURCE_CHECK = "source IN ({})".format(", ".join(f"'{s}'" for s in BUILD_SOURCES))


def upgrade() -> None:
    bind = op.get_bind()
    columns = _columns(sa.JSON().with_variant(JSONB(), "postgresql"))
    if bind.dialect.name == "sqlite":
        for table, added in columns.items():
            defs = [str(CreateColumn(c).compile(dialect=bind.dialect)) for c in added]
            constraints = [f'FOREIGN KEY("{column}") REFERENCES "{target}" ("id") ON DELETE {ondelete}'
                           for name, column, target, ondelete in REFERENCES if name == table]
            if table == "image_build":
                constraints.append(f"CONSTRAINT build_source CHECK ({SOURCE_CHECK})")

            def add(items: list[str], defs: list[str] = defs, constraints: list[str] = constraints) -> list[str]:
                first = next((i for i, item in enumerate(items) if TABLE_CONSTRAINT.match(item)), len(items))
                return items[:first] + defs + items[first:] + constraints

            _rebuild_sqlite(table, add)
    else:
        for table, added in columns.items():
            for column in added:
                op.add_column(table, column)
        for table, column, target, ondelete in REFERENCES:
            op.create_foreign_key(f"{table}_{column}_fkey", table, target, [column], ["id"], ondelete=ondelete)
        op.create_check_constraint("build_source", "image_build", SOURCE_CHECK)
    op.create_index(op.f("ix_image_project_id"), "image", ["project_id"], unique=False)


def downgrade() -> None:
    bind = op.get_bind()
    op.drop_index(op.f("ix_image_project_id"), table_name="image")
    columns = _columns(sa.JSON())
    if bind.dialect.name == "sqlite":
        for table, added in columns.items():
            names = {c.name for c in added}
            # The items that define or constrain the added columns, by their (quoted or bare) first name.
            mine = re.compile(r'^(?:"?(?:{0})"?\s|FOREIGN\s+KEY\s*\(\s*"?(?:{0})"?\s*\)|CONSTRAINT\s+build_source\b)'
                              .format("|".join(names)), re.I)
            _rebuild_sqlite(table, lambda items, mine=mine: [item for item in items if not mine.match(item)])
        return
    op.drop_constraint("build_source", "image_build", type_="check")
    for table, column, _target, _ondelete in REFERENCES:
        op.drop_constraint(f"{table}_{column}_fkey", table, type_="foreignkey")
    for table, added in columns.items():
        for column in added:
            op.drop_column(table, column.name)


TABLE_CONSTRAINT = re.compile(r"(CONSTRAINT|PRIMARY\s+KEY|UNIQUE|CHECK|FOREIGN\s+KEY)\b", re.I)


def _items(body: str) -> list[str]:
    """The top-level comma-separated items of a CREATE TABLE's parentheses."""
    items, depth, quote, start = [], 0, "", 0
    for index, char in enumerate(body):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"`[":
            quote = "]" if char == "[" else char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            items.append(body[start:index].strip())
            start = index + 1
    return [*items, body[start:].strip()]


def _rebuild_sqlite(table: str, change: Callable[[list[str]], list[str]]) -> None:
    """SQLite's own procedure: the stored CREATE statement's items changed, copy the columns both tables
    have, drop, rename, the indexes again."""
    bind = op.get_bind()
    if bind.exec_driver_sql("PRAGMA foreign_keys").scalar():
        raise RuntimeError("0014 needs PRAGMA foreign_keys=OFF")  # DROP TABLE would cascade (migrations/env.py)
    sql = bind.exec_driver_sql("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).scalar()
    indexes = [row[0] for row in bind.exec_driver_sql(
        "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL", (table,))]
    match = re.fullmatch(r'CREATE TABLE\s+"?[A-Za-z_0-9]+"?\s*\((.*)\)\s*', sql.strip(), re.S)
    if match is None:
        raise RuntimeError(f"0014: cannot read the CREATE statement of {table}: {sql}")
    new = f"_0014_{table}"
    bind.exec_driver_sql(f'CREATE TABLE "{new}" (\n\t' + ",\n\t".join(change(_items(match.group(1)))) + "\n)")
    old_names = [row[1] for row in bind.exec_driver_sql(f'PRAGMA table_info("{table}")')]
    new_names = {row[1] for row in bind.exec_driver_sql(f'PRAGMA table_info("{new}")')}
    names = ", ".join(f'"{n}"' for n in old_names if n in new_names)
    bind.exec_driver_sql(f'INSERT INTO "{new}" ({names}) SELECT {names} FROM "{table}"')
    bind.exec_driver_sql(f'DROP TABLE "{table}"')
    bind.exec_driver_sql(f'ALTER TABLE "{new}" RENAME TO "{table}"')
    for index in indexes:
        if new_names.issuperset(re.findall(r'\(\s*"?(\w+)"?', index)):
            bind.exec_driver_sql(index)
