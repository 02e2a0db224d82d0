"""How a model's rows become JSON answers: its column names and table columns (what a list selects,
JSON columns as their text), one value as JSON (`to_json_value`: enums and UTC datetimes), and a list's
rows encoded at once (`encode_rows`, by orjson, with `row_encoder` as the fallback) into the page
`json_page` answers. `base.py`'s ResourceApi lists through these; other APIs use the value helpers.
"""
from __future__ import annotations

import datetime as dt
import enum
import functools
import json
from typing import Any

import orjson
import sqlalchemy as sa
from flask import Response, current_app


@functools.cache
def column_names(model: Any) -> tuple[str, ...]:
    return tuple(c.key for c in sa.inspect(model).column_attrs)


def table_column(model: Any, key: str) -> Any:
    """The table column behind a mapped attribute name: statements built from these stay Core."""
    return sa.inspect(model).column_attrs[key].columns[0]


@functools.cache
def table_columns(model: Any, keys: tuple[str, ...]) -> tuple[sa.ColumnElement, ...]:
    """What a list selects, labelled with the attribute names; JSON columns as their text, which the
    answer embeds as it is (json_page) instead of decoding and encoding it again."""
    columns = [(key, table_column(model, key)) for key in keys]
    return tuple((sa.cast(col, sa.Text) if isinstance(col.type, sa.JSON) else col).label(key) for key, col in columns)


def to_json_value(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dt.datetime):
        # Stored in UTC; SQLite hands them back without an offset, and a browser would read local time.
        return (value if value.tzinfo else value.replace(tzinfo=dt.UTC)).isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


# Column types whose values are JSON values as they come from the driver; the rest go through to_json_value.
_PLAIN_TYPES = (sa.Integer, sa.String, sa.Boolean)
_dumps = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode  # no sorted keys, no default hook


@functools.cache
def row_encoder(model: Any, keys: tuple[str, ...]) -> Any:
    """encode(row) -> the JSON text of what present() gives for a row of table_columns(model, keys):
    only datetimes and enums are converted, JSON columns' text is embedded as it is."""
    plain, raw = [], []  # (index, key, converter or None); (index, '"key":')
    for i, key in enumerate(keys):
        ctype = table_column(model, key).type
        if isinstance(ctype, sa.JSON):
            raw.append((i, json.dumps(key) + ":"))
        else:  # Enum is a String too, but its values are enum members
            needs = not isinstance(ctype, _PLAIN_TYPES) or isinstance(ctype, sa.Enum)
            plain.append((i, key, to_json_value if needs else None))

    def encode(row: Any) -> str:
        values = {}
        for i, key, convert in plain:
            value = row[i]
            values[key] = value if convert is None or value is None else convert(value)
        text = _dumps(values)
        if not raw:
            return text
        tail = ",".join(prefix + (row[i] if row[i] is not None else "null") for i, prefix in raw)
        return f"{text[:-1]},{tail}}}" if plain else f"{{{tail}}}"

    return encode


@functools.cache
def json_columns(model: Any, keys: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(key for key in keys if isinstance(table_column(model, key).type, sa.JSON))


def encode_rows(model: Any, keys: tuple[str, ...], rows: list[Any]) -> bytes:
    """The JSON array of what present() gives for rows of table_columns(model, keys), by orjson, which
    converts datetimes (naive ones are UTC, as stored) and enums as to_json_value does; JSON columns' text
    is embedded as it is. What orjson refuses (a string with a lone surrogate) goes through json."""
    raw = json_columns(model, keys)
    items = []
    for row in rows:
        item = dict(zip(keys, row, strict=False))  # a counted page's rows end with the count
        for key in raw:
            if item[key] is not None:
                item[key] = orjson.Fragment(item[key])
        items.append(item)
    try:
        return orjson.dumps(items, option=orjson.OPT_NAIVE_UTC)
    except orjson.JSONEncodeError:
        return f"[{','.join(map(row_encoder(model, keys), rows))}]".encode()


def json_page(count: int, page: int, page_size: int, items: bytes) -> Response:
    """items: a JSON array (encode_rows)."""
    body = b'{"count":%d,"page":%d,"page_size":%d,"items":%s}\n' % (count, page, page_size, items)
    return current_app.response_class(body, mimetype="application/json")
