"""A list's SELECT run on the session's own DBAPI connection, compiled once per statement and dialect.

SQLAlchemy's execution path (execution context, bind processing, result metadata from the cursor's
description, Row objects) cost about a quarter of a list request's CPU in the web process, for statements
whose SQL text never changes (api/base.list_statements builds one per list shape, every value a bind
parameter). Here the statement is compiled once; each request converts its parameters with the same bind
processors SQLAlchemy would apply, executes the text on the DBAPI cursor and converts the result columns
with the same result processors (on SQLite: datetimes kept as text, booleans as 0/1; on PostgreSQL the
driver's values are already what SQLAlchemy hands back). Enum columns stay the strings they are stored as
(by value, models/base.enum_column), which is what the answer shows.
"""
from __future__ import annotations

from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa


@dataclass(frozen=True)
class Compiled:
    sql: str
    positions: tuple[str, ...] | None  # parameter names in order, for positional paramstyles (SQLite's qmark)
    defaults: dict[str, Any]  # values the statement carries itself (literals SQLAlchemy made parameters)
    binds: tuple[tuple[str, Callable[[Any], Any]], ...]  # (name, SQLAlchemy's bind processor)
    results: tuple[Callable[[Any], Any] | None, ...]  # per selected column: SQLAlchemy's result processor

    def parameters(self, values: dict[str, Any]) -> Any:
        params = {**self.defaults, **values}
        for name, process in self.binds:
            params[name] = process(params[name])
        return params if self.positions is None else tuple(params[name] for name in self.positions)

    def convert(self, rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        results = self.results
        if not any(results):
            return rows
        return [tuple(value if process is None else process(value) for process, value in zip(results, row,
                                                                                            strict=True))
                for row in rows]


_compiled: dict[tuple[sa.Select, str], Compiled] = {}


def compile_select(statement: sa.Select, dialect: sa.Dialect) -> Compiled:
    """The statement compiled for the dialect, kept for the process: only for statements that are themselves
    kept (one per list shape), so this stays as small as the number of shapes."""
    key = (statement, dialect.name)
    found = _compiled.get(key)
    if found is not None:
        return found
    compiled = statement.compile(dialect=dialect)
    if compiled.escaped_bind_names or compiled.literal_execute_params or compiled.post_compile_params:
        raise ValueError("raw_select runs plain statements only (no escaped, literal or expanding parameters)")
    binds = []
    for param in compiled.binds.values():
        process = param.type.dialect_impl(dialect).bind_processor(dialect)
        if process is not None:
            binds.append((compiled.bind_names[param], process))
    results = tuple(
        None if isinstance(column.type, sa.Enum)  # stored by value: the string is the answer
        else column.type.dialect_impl(dialect).result_processor(dialect, None)
        for column in statement.selected_columns)
    defaults = {compiled.bind_names[param]: param.value for param in compiled.binds.values()
                if not param.required and param.value is not None}
    positions = tuple(compiled.positiontup or ()) if compiled.positional else None
    found = Compiled(compiled.string, positions,
                     defaults, tuple(binds), results)
    _compiled[key] = found
    return found


def fetch_all(connection: sa.Connection, statement: sa.Select, values: dict[str, Any]) -> list[tuple[Any, ...]]:
    """The rows of a kept statement, as tuples of what SQLAlchemy's Core execution would give, executed on the
    connection's DBAPI connection (its transaction state as it is: autocommit for reads). A lost connection is
    invalidated as SQLAlchemy would, so the pool does not hand it out again."""
    dialect = connection.dialect
    compiled = compile_select(statement, dialect)
    raw = connection.connection.dbapi_connection
    assert raw is not None  # a checked-out connection always has one
    try:
        with closing(raw.cursor()) as cursor:
            cursor.execute(compiled.sql, compiled.parameters(values))
            rows = list(cursor.fetchall())
    except dialect.loaded_dbapi.Error as exc:
        if dialect.is_disconnect(exc, raw, None):
            connection.invalidate(exc)
        raise
    return compiled.convert(rows)
