"""Exact row counts of the large project-owned tables, per project and state, kept by database
triggers so a list's count reads a few rows instead of counting thousands (myapp/api/counts.py).
Nothing in Python writes here: every INSERT, DELETE and change of project or state of a counted table,
ORM or not, moves its count in the same transaction.

PostgreSQL: the triggers append a +1/-1 row per change; a writer never updates a shared row, so
concurrent writers never wait on each other or deadlock. Readers sum a key's rows; beat's tick folds
each key's rows into one (`fold`). SQLite has one writer at a time: its triggers keep one row per key,
in place, and there is nothing to fold.

The triggers are (re)made by `keep_counts`, which migrations/env.py runs after every upgrade: SQLite
drops a table's triggers when a migration rebuilds the table (batch_alter_table), so a migration
cannot make them once for good. When any was missing, the counts are taken again from the tables.
"""
from __future__ import annotations

import sqlalchemy as sa
from flask_appbuilder import Model
from sqlalchemy.orm import Mapped, mapped_column

from .base import IdMixin

# table -> its state column ("": counted per project only)
COUNTED_TABLES = {"pipeline": "", "pipeline_run": "state", "task_run": "state"}


class ListCount(IdMixin, Model):
    __tablename__ = "list_count"
    __table_args__ = (sa.Index("ix_list_count_key", "tbl", "project_id", "state"),)

    tbl: Mapped[str] = mapped_column(sa.String(32), nullable=False)
    project_id: Mapped[int] = mapped_column(sa.Integer, nullable=False)
    state: Mapped[str] = mapped_column(sa.String(32), nullable=False)  # "" where the table has none
    n: Mapped[int] = mapped_column(sa.BigInteger, nullable=False)


# The keys with more than one row, folded into one: a statement (and snapshot) of its own, which readers see
# whole or not at all. A concurrent fold waits for this one's row locks, then skips the rows it deleted;
# rows added meanwhile are outside this snapshot and stay for the next fold.
_FOLD = """
WITH many AS (SELECT tbl, project_id, state FROM list_count GROUP BY tbl, project_id, state HAVING count(*) > 1),
gone AS (DELETE FROM list_count AS kept USING many
         WHERE kept.tbl = many.tbl AND kept.project_id = many.project_id AND kept.state = many.state
         RETURNING kept.tbl, kept.project_id, kept.state, kept.n)
INSERT INTO list_count (tbl, project_id, state, n)
SELECT tbl, project_id, state, sum(n) FROM gone GROUP BY tbl, project_id, state HAVING sum(n) <> 0
"""


def fold(connection: sa.Connection) -> None:
    """Fold every key's rows into one, in the caller's transaction (PostgreSQL; SQLite keeps one row per
    key already). Beat's tick runs it; without it counts stay exact, only their sums read more rows."""
    if connection.dialect.name == "postgresql":
        connection.exec_driver_sql(_FOLD)


# ---- the triggers (fixed identifiers from COUNTED_TABLES only; no input reaches this SQL) -------------
def _state(row: str, column: str) -> str:
    return f"{row}.{column}" if column else "''"


def _postgresql(table: str, column: str) -> list[str]:
    changed = "OLD.project_id IS DISTINCT FROM NEW.project_id" + (
        f" OR OLD.{column} IS DISTINCT FROM NEW.{column}" if column else "")
    add = "INSERT INTO list_count (tbl, project_id, state, n) VALUES ('{t}', {r}.project_id, {s}, {n});"
    return [
        f"""CREATE OR REPLACE FUNCTION list_count_{table}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN {add.format(t=table, r="OLD", s=_state("OLD", column), n=-1)} END IF;
    IF TG_OP <> 'DELETE' THEN {add.format(t=table, r="NEW", s=_state("NEW", column), n=1)} END IF;
    RETURN NULL;
END $$""",
        f"CREATE TRIGGER list_count_{table} AFTER INSERT OR DELETE ON {table} "
        f"FOR EACH ROW EXECUTE FUNCTION list_count_{table}()",
        f"CREATE TRIGGER list_count_{table}_moved AFTER UPDATE ON {table} FOR EACH ROW "
        f"WHEN ({changed}) EXECUTE FUNCTION list_count_{table}()",
    ]


def _sqlite_add(table: str, row: str, column: str, n: int) -> str:
    """The key's one row: made when missing, then moved by n."""
    key = f"tbl = '{table}' AND project_id = {row}.project_id AND state = {_state(row, column)}"
    return (f"INSERT INTO list_count (tbl, project_id, state, n) SELECT '{table}', {row}.project_id, "
            f"{_state(row, column)}, 0 WHERE NOT EXISTS (SELECT 1 FROM list_count WHERE {key}); "
            f"UPDATE list_count SET n = n + ({n}) WHERE {key};")


def _sqlite(table: str, column: str) -> list[str]:
    changed = "OLD.project_id IS NOT NEW.project_id" + (f" OR OLD.{column} IS NOT NEW.{column}" if column else "")
    return [
        f"CREATE TRIGGER list_count_{table}_insert AFTER INSERT ON {table} FOR EACH ROW BEGIN "
        f"{_sqlite_add(table, 'NEW', column, 1)} END",
        f"CREATE TRIGGER list_count_{table}_delete AFTER DELETE ON {table} FOR EACH ROW BEGIN "
        f"{_sqlite_add(table, 'OLD', column, -1)} END",
        f"CREATE TRIGGER list_count_{table}_moved AFTER UPDATE ON {table} FOR EACH ROW WHEN {changed} BEGIN "
        f"{_sqlite_add(table, 'OLD', column, -1)} {_sqlite_add(table, 'NEW', column, 1)} END",
    ]


def _trigger_names(dialect: str) -> dict[str, str]:
    """name -> its table"""
    suffixes = ("", "_moved") if dialect == "postgresql" else ("_insert", "_delete", "_moved")
    return {f"list_count_{table}{suffix}": table for table in COUNTED_TABLES for suffix in suffixes}


def _existing_triggers(connection: sa.Connection) -> set[str]:
    if connection.dialect.name == "postgresql":
        query = "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal AND starts_with(tgname, :prefix)"
    else:
        query = "SELECT name FROM sqlite_master WHERE type = 'trigger' AND substr(name, 1, length(:prefix)) = :prefix"
    return set(connection.execute(sa.text(query), {"prefix": "list_count"}).scalars())


def drop_triggers(connection: sa.Connection) -> None:
    postgresql = connection.dialect.name == "postgresql"
    for name, table in _trigger_names(connection.dialect.name).items():
        connection.exec_driver_sql(f"DROP TRIGGER IF EXISTS {name}" + (f" ON {table}" if postgresql else ""))
    if postgresql:
        for table in COUNTED_TABLES:
            connection.exec_driver_sql(f"DROP FUNCTION IF EXISTS list_count_{table}()")


def keep_counts(connection: sa.Connection) -> bool:
    """Make the triggers when any is missing and take the counts again (in the caller's transaction;
    on PostgreSQL CREATE TRIGGER locks each table against writes until it commits, so no change is
    missed or counted twice). True when it did. Nothing before the list_count table exists."""
    dialect = connection.dialect.name
    if not sa.inspect(connection).has_table("list_count"):
        return False
    if _existing_triggers(connection) == set(_trigger_names(dialect)):
        return False
    drop_triggers(connection)
    connection.exec_driver_sql("DELETE FROM list_count")
    for table, column in COUNTED_TABLES.items():
        for statement in (_postgresql if dialect == "postgresql" else _sqlite)(table, column):
            connection.exec_driver_sql(statement)
        connection.exec_driver_sql(
            f"INSERT INTO list_count (tbl, project_id, state, n) SELECT '{table}', project_id, "
            f"{column or repr('')}, count(*) FROM {table} GROUP BY project_id{', ' + column if column else ''}")
    return True
