"""Reusable input fields and validators: for the API's schemas and for pipeline YAML alike."""
from __future__ import annotations

import re
from typing import Any

from croniter import croniter
from marshmallow import Schema, ValidationError, fields, validate

from ..rendering.quantity import parse_quantity
from .plain_data import INT32_MAX

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def dns_label(value: str) -> None:
    if len(value) > 63:
        raise ValidationError(f"must be at most 63 characters (got {len(value)})")
    if not DNS_LABEL.match(value):
        raise ValidationError(
            "must be a DNS-1123 label: lowercase letters, digits and '-', starting and ending "
            "with a letter or digit"
        )


def DnsLabel(**kwargs: Any) -> fields.String:  # CamelCase: reads like a field class
    return fields.String(validate=dns_label, **kwargs)


class Quantity(fields.String):
    """A Kubernetes quantity such as 500m, 2 or 4Gi; kept as a string."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise ValidationError("must be a quantity string such as 500m, 2 or 4Gi")
        try:
            amount = parse_quantity(value)
        except ValueError as exc:
            raise ValidationError(str(exc)) from exc
        if amount < 0:
            raise ValidationError("must not be negative")
        return str(value)


class StrictSchema(Schema):
    class Meta:
        unknown = "raise"  # unknown fields are an error, not silently dropped


class ResourcesSchema(StrictSchema):
    cpu = Quantity()
    memory = Quantity()
    gpu = fields.Integer(validate=validate.Range(min=0, max=64), strict=True)


class TolerationSchema(StrictSchema):
    key = fields.String()
    operator = fields.String(validate=validate.OneOf(["Exists", "Equal"]))
    value = fields.String()
    effect = fields.String(validate=validate.OneOf(["NoSchedule", "PreferNoSchedule", "NoExecute"]))
    tolerationSeconds = fields.Integer(strict=True)


def StringMap(**kwargs: Any) -> fields.Dict:
    return fields.Dict(keys=fields.String(validate=validate.Length(1, 253)), values=fields.String(), **kwargs)


def Int(minimum: int = 0, maximum: int = INT32_MAX, **kwargs: Any) -> fields.Integer:
    """A strict integer; without a maximum, one an INTEGER column (an id) can be compared with."""
    return fields.Integer(strict=True, validate=validate.Range(min=minimum, max=maximum), **kwargs)


def ImageRepository(**kwargs: Any) -> fields.String:
    return fields.String(validate=validate.Regexp(
        r"^[a-z0-9]+([._/:-][a-z0-9]+)*$", error="must be an image repository such as registry.io/team/name"),
        **kwargs)


def ImageTag(**kwargs: Any) -> fields.String:
    return fields.String(validate=validate.Regexp(
        r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$", error="must be an image tag: letters, digits, '_', '.', '-'"),
        **kwargs)


def cron_expression(value: str) -> None:
    if not croniter.is_valid(value):
        raise ValidationError(f"'{value}' is not a cron expression (e.g. '0 2 * * *')")


def enum_field(enum_cls: type, **kwargs: Any) -> fields.Enum:
    """An enum by its value ("all_success"), loaded as the enum member."""
    return fields.Enum(enum_cls, by_value=True, **kwargs)
