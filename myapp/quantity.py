"""Kubernetes resource quantities: parse to canonical integers, format back to strings."""
from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

_SUFFIXES = {
    "": Decimal(1), "m": Decimal("0.001"),
    "k": Decimal(10) ** 3, "M": Decimal(10) ** 6, "G": Decimal(10) ** 9, "T": Decimal(10) ** 12,
    "Ki": Decimal(2) ** 10, "Mi": Decimal(2) ** 20, "Gi": Decimal(2) ** 30, "Ti": Decimal(2) ** 40,
}
_QUANTITY = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$")


def parse_quantity(value: str | int | float) -> Decimal:
    """'500m' -> 0.5, '2Gi' -> 2147483648. Raises ValueError with the reason."""
    text = str(value).strip()
    match = _QUANTITY.match(text)
    if not match:
        raise ValueError(f"'{text}' is not a Kubernetes quantity (e.g. 500m, 2, 4Gi)")
    try:
        return Decimal(match.group(1)) * _SUFFIXES[match.group(2) or ""]
    except InvalidOperation as exc:  # pragma: no cover - regex admits only decimals
        raise ValueError(f"'{text}' is not a number") from exc


def cpu_millicores(value: str | int | float) -> int:
    return int(parse_quantity(value) * 1000)


def memory_bytes(value: str | int | float) -> int:
    return int(parse_quantity(value))


def format_cpu(millicores: int) -> str:
    return str(millicores // 1000) if millicores % 1000 == 0 else f"{millicores}m"


def format_memory(num_bytes: int) -> str:
    for suffix in ("Ti", "Gi", "Mi", "Ki"):
        unit = int(_SUFFIXES[suffix])
        if num_bytes and num_bytes % unit == 0:
            return f"{num_bytes // unit}{suffix}"
    return str(num_bytes)
