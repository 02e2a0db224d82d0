"""Kubernetes resource quantities: parse, compare, format, and resolve a task's resources.

Quantities leave this module as strings (the API server and CRD schemas expect strings;
a YAML float like 0.5 would be ambiguous), arithmetic is done on exact Decimals.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from .errors import ArgumentError

_QUANTITY = re.compile(r"([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?")
_SUFFIX = {
    None: Decimal(1), "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("0.001"),
    "k": Decimal(10) ** 3, "M": Decimal(10) ** 6, "G": Decimal(10) ** 9,
    "T": Decimal(10) ** 12, "P": Decimal(10) ** 15, "E": Decimal(10) ** 18,
    "Ki": Decimal(2) ** 10, "Mi": Decimal(2) ** 20, "Gi": Decimal(2) ** 30,
    "Ti": Decimal(2) ** 40, "Pi": Decimal(2) ** 50, "Ei": Decimal(2) ** 60,
}
RESOURCE_KEYS = ("cpu", "memory", "gpu")
GPU_RESOURCE = "nvidia.com/gpu"
MIN_MEMORY = Decimal(2) ** 22  # 4Mi: anything smaller is a forgotten unit ("4" = 4 bytes)


def parse_quantity(value: object) -> Decimal:
    """Exact value of a quantity given as str ("500m", "4Gi") or int/float. Raises ValueError."""
    if isinstance(value, bool):
        raise ValueError("a boolean is not a quantity")
    if isinstance(value, (int, float)):
        try:
            return Decimal(str(value))
        except InvalidOperation as exc:  # nan / inf
            raise ValueError(f"{value!r} is not a quantity") from exc
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not a quantity")
    match = _QUANTITY.fullmatch(value.strip())
    if not match:
        raise ValueError(f"{value!r} is not a quantity (examples: 500m, 2, 4Gi)")
    number, suffix = match.groups()
    if suffix and suffix[0] in "eE":
        return Decimal(number) * Decimal(10) ** int(suffix[1:])
    return Decimal(number) * _SUFFIX[suffix]


def format_cpu(cores: Decimal) -> str:
    millis = cores * 1000
    if millis != millis.to_integral_value():
        raise ValueError(f"cpu {cores} is finer than 1m")
    whole = int(millis)
    return str(whole // 1000) if whole % 1000 == 0 else f"{whole}m"


def format_memory(num_bytes: Decimal) -> str:
    if num_bytes != num_bytes.to_integral_value():
        raise ValueError(f"memory {num_bytes} is not a whole number of bytes")
    value = int(num_bytes)
    for suffix, power in (("Ei", 60), ("Pi", 50), ("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10)):
        if value and value % (1 << power) == 0:
            return f"{value >> power}{suffix}"
    return str(value)


@dataclass(frozen=True)
class Resources:
    """Per-pod resources of a task, already normalised to canonical strings."""

    cpu: str
    memory: str
    gpu: int = 0

    def limits(self, with_gpu: bool = True) -> dict[str, str]:
        out = {"cpu": self.cpu, "memory": self.memory}
        if with_gpu and self.gpu:
            out[GPU_RESOURCE] = str(self.gpu)
        return out

    def requirements(self, with_gpu: bool = True) -> dict[str, dict[str, str]]:
        # requests == limits: Guaranteed QoS, so a training pod is never the first one evicted.
        return {"limits": self.limits(with_gpu), "requests": self.limits(with_gpu)}


def _normalise(key: str, value: object, field: str) -> tuple[Decimal, str]:
    """(exact amount, canonical string). A valid string is kept as the user wrote it."""
    try:
        amount = parse_quantity(value)
    except ValueError as exc:
        raise ArgumentError(field, str(exc)) from None
    if key == "gpu":
        if amount != amount.to_integral_value() or amount < 0:
            raise ArgumentError(field, f"gpu must be a whole number >= 0, got {value!r}")
    elif amount <= 0:
        raise ArgumentError(field, f"{key} must be > 0, got {value!r}")
    if key == "memory" and amount < MIN_MEMORY:
        raise ArgumentError(field, f"memory {value!r} is below 4Mi (did you forget the unit, e.g. 4Gi?)")
    if key == "cpu" and amount * 1000 != (amount * 1000).to_integral_value():
        raise ArgumentError(field, f"cpu {value!r} is finer than 1m")
    if key == "memory" and amount != amount.to_integral_value():
        raise ArgumentError(field, f"memory {value!r} is not a whole number of bytes")
    if key == "gpu":
        return amount, str(int(amount))
    if isinstance(value, str):
        return amount, value.strip()
    return amount, format_cpu(amount) if key == "cpu" else format_memory(amount)


def resolve_resources(default: Mapping[str, object], maximum: Mapping[str, object],
                      requested: Mapping[str, object] | None) -> Resources:
    """Merge ``requested`` over the template default and enforce the template maximum."""
    if requested is not None and not isinstance(requested, Mapping):
        raise ArgumentError("resources", "must be a mapping of cpu/memory/gpu")
    merged = dict(default)
    for key, value in (requested or {}).items():
        if key not in RESOURCE_KEYS:
            raise ArgumentError(f"resources.{key}", f"unknown resource (allowed: {', '.join(RESOURCE_KEYS)})")
        if value is not None:
            merged[key] = value
    texts = {"gpu": "0"}
    for key in RESOURCE_KEYS:
        field = f"resources.{key}"
        if key not in merged:
            if key == "gpu":
                continue
            raise ArgumentError(field, "is required")
        amount, texts[key] = _normalise(key, merged[key], field)
        if key in maximum and amount > parse_quantity(maximum[key]):
            raise ArgumentError(field, f"{merged[key]!r} exceeds the template maximum {maximum[key]!r}")
    return Resources(cpu=texts["cpu"], memory=texts["memory"], gpu=int(texts["gpu"]))
