"""Shared column types and mixins for every model (all on FAB's Model.metadata)."""
from __future__ import annotations

import datetime as dt
import enum

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

# Real JSON columns: JSONB on PostgreSQL (indexable, queryable), JSON elsewhere.
JSONType = sa.JSON().with_variant(JSONB(), "postgresql")


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def enum_column(enum_cls: type[enum.Enum], name: str) -> sa.Enum:
    """Enums stored by value as VARCHAR + CHECK: portable and readable in SQL."""
    return sa.Enum(
        enum_cls,
        name=name,
        native_enum=False,
        create_constraint=True,
        length=32,
        values_callable=lambda members: [m.value for m in members],
        validate_strings=True,
    )


class IdMixin:
    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True)


def never_reuse_ids() -> None:
    """SQLite AUTOINCREMENT on every table of the metadata (its DDL adds it only to a table whose
    key is one integer column that is no foreign key; the other tables are unchanged)."""
    from flask_appbuilder import Model

    for table in Model.metadata.tables.values():
        table.dialect_kwargs["sqlite_autoincrement"] = True


class TimestampMixin:
    created_at: Mapped[dt.datetime] = mapped_column(
        sa.DateTime(timezone=True), default=utcnow, nullable=False
    )
    updated_at: Mapped[dt.datetime] = mapped_column(
        sa.DateTime(timezone=True), default=utcnow, onupdate=utcnow, nullable=False
    )


def project_fk(parent_table: str) -> sa.ForeignKeyConstraint:
    """Child rows carry project_id; this composite key ties it to the parent's own.

    It makes "object of project B referenced from project A" impossible in the database,
    not only in the API.
    """
    return sa.ForeignKeyConstraint(
        ["project_id", f"{parent_table}_id"],
        [f"{parent_table}.project_id", f"{parent_table}.id"],
        ondelete="CASCADE",
    )

