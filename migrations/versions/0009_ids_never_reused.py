"""Ids are never reused after a delete (SQLite AUTOINCREMENT).

SQLite gives a new row max(id) + 1 unless the key is declared AUTOINCREMENT, which only CREATE TABLE
can say: each table whose key is one integer column (not a foreign key) is rebuilt with SQLite's own
procedure (create the new table from the stored CREATE statement with the key changed, copy, drop,
rename, recreate the indexes), so every constraint, CHECK and foreign key stays exactly as it was.
PostgreSQL sequences never go back: nothing to do there. Rows keep their ids; the sequence starts at
the largest id present.

Revision ID: 0009
Revises: 0008
"""
import re

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

_TABLE_KEY = re.compile(r',\s*PRIMARY KEY \("?(\w+)"?\)')


def _autoincrement_sql(table: str, sql: str, key: str, new_name: str) -> str:
    """The CREATE statement of `table` under `new_name`, its key column AUTOINCREMENT."""
    body = _TABLE_KEY.sub("", sql, count=1)
    column = re.compile(rf'(\n\s*"?{key}"?\s+INTEGER NOT NULL)(?=\s*[,)])')
    body, found = column.subn(r"\1 PRIMARY KEY AUTOINCREMENT", body, count=1)
    head = re.compile(rf'^CREATE TABLE\s+"?{re.escape(table)}"?\s*\(')
    body, named = head.subn(f'CREATE TABLE "{new_name}" (', body, count=1)
    if not (found and named):
        raise RuntimeError(f"0009: cannot rewrite the CREATE statement of {table}: {sql}")
    return body


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "sqlite":
        return
    if bind.exec_driver_sql("PRAGMA foreign_keys").scalar():
        # DROP TABLE would delete (cascade) child rows: the migration engine has them off (migrations/env.py).
        raise RuntimeError("0009 needs PRAGMA foreign_keys=OFF")
    broken = set(bind.exec_driver_sql("PRAGMA foreign_key_check").all())  # rows orphaned before: not ours
    tables = bind.exec_driver_sql(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
        "AND name != 'alembic_version'").all()
    for table, sql in tables:
        inspector = sa.inspect(bind)
        key = inspector.get_pk_constraint(table)["constrained_columns"]
        if len(key) != 1 or "AUTOINCREMENT" in sql.upper():
            continue
        column = next(c for c in inspector.get_columns(table) if c["name"] == key[0])
        referencing = {c for fk in inspector.get_foreign_keys(table) for c in fk["constrained_columns"]}
        if not isinstance(column["type"], sa.Integer) or key[0] in referencing:
            continue
        indexes = [row[0] for row in bind.exec_driver_sql(
            "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL", (table,))]
        names = ", ".join(f'"{c["name"]}"' for c in inspector.get_columns(table))
        new = f"_0009_{table}"
        bind.exec_driver_sql(_autoincrement_sql(table, sql, key[0], new))
        bind.exec_driver_sql(f'INSERT INTO "{new}" ({names}) SELECT {names} FROM "{table}"')
        bind.exec_driver_sql(f'DROP TABLE "{table}"')
        bind.exec_driver_sql(f'ALTER TABLE "{new}" RENAME TO "{table}"')
        for index in indexes:
            bind.exec_driver_sql(index)
    problems = set(bind.exec_driver_sql("PRAGMA foreign_key_check").all()) - broken
    if problems:
        raise RuntimeError(f"0009: foreign keys broken by the rebuild: {sorted(problems)[:5]}")


def downgrade() -> None:
    pass  # AUTOINCREMENT only stops reuse; going back would bring reuse back for nothing
