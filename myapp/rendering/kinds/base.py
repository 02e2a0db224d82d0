"""What every kind builder receives and the registry entry describing a kind."""
from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..context import RenderContext
from ..quantity import Resources


@dataclass(frozen=True)
class Build:
    """Inputs of one render, already validated."""

    template: Mapping[str, Any]  # catalog dict
    args: Mapping[str, Any]  # validated, defaults applied
    ctx: RenderContext
    resources: Resources
    name: str  # default workload name (DNS-1035, <= 52 chars)

    @property
    def image(self) -> str:
        return self.args.get("image") or self.template["image"]

    @property
    def command(self) -> list[str]:
        return list(self.template["command"])

    @property
    def cli_args(self) -> list[str]:
        return cli_args(self.template["args_schema"], self.args)

    @property
    def queue(self) -> str:
        group = self.ctx.resource_group
        return group.queue if group else "default"

    @property
    def gang(self) -> bool:
        group = self.ctx.resource_group
        return bool(group and group.gang_scheduling)


@dataclass(frozen=True)
class Kind:
    """A kind of workload the platform renders (the ``kind`` field of a template.yaml).

    ``required_args`` / ``optional_args`` name the arguments the builder itself reads
    (argument name -> JSON type); the catalog checks templates declare them correctly.
    ``batch`` pods run to completion: no Istio sidecar, gang scheduling applies.
    ``gang`` is "podgroup" (we render a PodGroup), "native" (the CR schedules itself) or None.
    """

    name: str
    build: Callable[[Build], list[dict[str, Any]]]
    required_args: Mapping[str, str] = field(default_factory=dict)
    optional_args: Mapping[str, str] = field(default_factory=dict)
    batch: bool = True
    gang: str | None = "podgroup"


def cli_value(value: Any) -> str:
    """How an argument value is written on the command line: strings verbatim, rest as JSON."""
    return value if isinstance(value, str) else json.dumps(value)


def cli_args(args_schema: Mapping[str, Any], args: Mapping[str, Any]) -> list[str]:
    """``[flag, value, ...]`` for every argument whose schema has ``x-flag``, in schema order.

    Flag and value are separate argv elements, so no value is ever parsed by a shell.
    """
    out: list[str] = []
    for name, prop in args_schema.get("properties", {}).items():
        if "x-flag" in prop and name in args:
            out += [prop["x-flag"], cli_value(args[name])]
    return out
