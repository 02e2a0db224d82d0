"""A list's count: from the counts the database keeps (myapp/models/list_count.py) when the list is of a
counted table filtered by nothing but project and state, else count(*) over the rows.

Exact either way: the kept counts move in the transaction that changes the rows, and a list's count and
page are one statement (base.counted_page), so both see one snapshot.
"""
from __future__ import annotations

import enum
from typing import Any

import sqlalchemy as sa

from ..models.list_count import COUNTED_TABLES, ListCount
from .id_list import in_ids


def count_of(model: Any, filters: tuple[str, ...], scoped: bool, conditions: list[sa.ColumnElement]
             ) -> sa.ScalarSelect:
    """The count, as a scalar subquery whose values are bind parameters (count_params), so a list of one
    shape has one statement whatever the values. filters: the names of the list's query filters;
    scoped: limited to the caller's projects; conditions: all of them as SQL (for count(*))."""
    table = model.__tablename__
    column = COUNTED_TABLES.get(table)
    if column is None or not set(filters) <= {"project_id", column} - {""}:
        return sa.select(sa.func.count()).select_from(model.__table__).where(*conditions).scalar_subquery()
    kept = ListCount.__table__
    where = [kept.c.tbl == table]
    if scoped:
        where.append(in_ids(kept.c.project_id, "count_projects"))
    if "project_id" in filters:
        where.append(kept.c.project_id == sa.bindparam("count_project_id"))
    if column in filters:
        where.append(kept.c.state == sa.bindparam("count_state"))
    # sum() of BIGINT is NUMERIC on PostgreSQL: back to an integer
    return sa.select(sa.cast(sa.func.coalesce(sa.func.sum(kept.c.n), 0), sa.BigInteger)).where(*where).scalar_subquery()


def count_params(model: Any, filters: dict[str, Any], project_ids: list[int] | None) -> dict[str, Any]:
    """The values of count_of's bind parameters: filters by column name (values as the rows hold them);
    project_ids: the caller's projects (None: all)."""
    column = COUNTED_TABLES.get(model.__tablename__)
    params: dict[str, Any] = {"count_projects": project_ids}
    if "project_id" in filters:
        params["count_project_id"] = filters["project_id"]
    if column and column in filters:
        value = filters[column]
        params["count_state"] = value.value if isinstance(value, enum.Enum) else value
    return params
