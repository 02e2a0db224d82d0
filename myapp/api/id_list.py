"""`column IN <a list of ids>` as ONE bind parameter, so a list's SQL text is the same whatever the ids.

SQLAlchemy's expanding IN (`column.in_(bindparam(..., expanding=True))`) renders one placeholder per id
at every execution: each list request paid for that rendering (about a tenth of a list's CPU in the web
process), and PostgreSQL saw a different statement for each number of projects, so psycopg could not
reuse a prepared statement across callers. Here the ids travel as one value: an integer array compared
with `= ANY(...)` on PostgreSQL, a JSON array read by `json_each` on SQLite (both use the column's index).
"""
from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import ColumnElement
from sqlalchemy.types import TypeDecorator


class IdArray(TypeDecorator):
    """A list of integers bound as one parameter: an int8 array on PostgreSQL, JSON text elsewhere."""

    impl = sa.Text
    cache_ok = True

    def load_dialect_impl(self, dialect: Any) -> Any:
        if dialect.name == "postgresql":
            return dialect.type_descriptor(postgresql.ARRAY(sa.BigInteger))
        return dialect.type_descriptor(sa.Text())

    def process_bind_param(self, value: Any, dialect: Any) -> Any:
        if value is None:
            return None
        ids = [int(v) for v in value]
        return ids if dialect.name == "postgresql" else json.dumps(ids)


class InIds(ColumnElement):
    """`column` is one of the ids in the bind parameter `name` (a list of ints given at execution)."""

    type = sa.Boolean()
    inherit_cache = True
    _traverse_internals = [("column", sa.sql.visitors.InternalTraversal.dp_clauseelement),
                           ("param", sa.sql.visitors.InternalTraversal.dp_clauseelement)]

    def __init__(self, column: ColumnElement, name: str) -> None:
        self.column = column
        self.param = sa.bindparam(name, type_=IdArray())


def in_ids(column: ColumnElement, name: str) -> InIds:
    return InIds(column, name)


@compiles(InIds, "postgresql")
def _in_ids_postgresql(element: InIds, compiler: Any, **kw: Any) -> str:
    return f"{compiler.process(element.column, **kw)} = ANY ({compiler.process(element.param, **kw)})"


@compiles(InIds)
def _in_ids_default(element: InIds, compiler: Any, **kw: Any) -> str:
    return (f"{compiler.process(element.column, **kw)} IN "
            f"(SELECT value FROM json_each({compiler.process(element.param, **kw)}))")
