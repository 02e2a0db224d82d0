"""Domain errors: what went wrong, in which field, and of which kind; no HTTP.

Domain code (myapp/pipelines, myapp/pipelines/manifests.py, ...) raises these; the API boundary maps
the kind to a status (myapp/api/errors.py), the CLI prints the message. Every error carries a
list of {"field", "reason"} so a caller can point at the input that was wrong.
"""
from __future__ import annotations

import enum
from typing import Any


class Kind(str, enum.Enum):
    INVALID = "invalid"  # the input itself is wrong
    NOT_FOUND = "not_found"  # it names something that does not exist
    CONFLICT = "conflict"  # it clashes with stored data: already exists, or the state does not allow it
    UNPROCESSABLE = "unprocessable"  # well-formed and consistent, yet cannot be carried out (e.g. rendered)
    UNAVAILABLE = "unavailable"  # a system we depend on (a cluster, a backend) cannot answer now; try again
    TOO_LARGE = "too_large"  # more than a limit allows to be stored (a file over the project's storage cap)


class DomainError(Exception):
    def __init__(self, message: str, errors: list[dict[str, str]] | None = None, kind: Kind = Kind.INVALID):
        super().__init__(message)
        self.message = message
        self.errors = errors or []
        self.kind = kind


class FieldError(DomainError):
    """One bad field."""

    def __init__(self, field: str, reason: str, kind: Kind = Kind.INVALID):
        super().__init__(f"{field}: {reason}", [{"field": field, "reason": reason}], kind)
        self.field = field
        self.reason = reason


def flatten_messages(messages: Any, prefix: str = "") -> list[dict[str, str]]:
    """marshmallow's nested {"a": {0: {"b": ["msg"]}}} -> [{"field": "a[0].b", "reason": "msg"}]."""
    out: list[dict[str, str]] = []
    if isinstance(messages, dict):
        for key, value in messages.items():
            if isinstance(key, int):  # a list index
                out += flatten_messages(value, f"{prefix}[{key}]")
                continue
            name = "body" if key == "_schema" and not prefix else str(key)
            out += flatten_messages(value, f"{prefix}.{name}" if prefix else name)
    elif isinstance(messages, list) and all(isinstance(m, str) for m in messages):
        out += [{"field": prefix or "body", "reason": m} for m in messages]
    elif isinstance(messages, list):
        for item in messages:
            out += flatten_messages(item, prefix)
    else:
        out.append({"field": prefix or "body", "reason": str(messages)})
    return out
