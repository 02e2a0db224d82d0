"""A service's traffic split and the moves between splits: pure functions over plain data.

A split is ``{version id: weight}`` with weights in 0..100 adding up to 100; its *stable* version is the
service's ``model_version_id`` and the others are canaries. Every version must be a version of the
same model (name) in the same project; ``versions`` maps the ids the caller may use to that model name
and project. Errors name the field (``traffic``, ``traffic.<id>``, ``version_id``) and nothing changes.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import FieldError, Kind


@dataclass(frozen=True)
class VersionInfo:
    id: int
    project_id: int
    name: str  # the model's name
    version: int


def check_version(field: str, version_id: int, info: VersionInfo | None, project_id: int, model: str) -> VersionInfo:
    """The version exists, in this project, of this model: else 404/400 naming the field."""
    if info is None or info.project_id != project_id:
        raise FieldError(field, f"model version {version_id} not found", Kind.NOT_FOUND)
    if info.name != model:
        raise FieldError(field, f"model version {version_id} is a version of {info.name!r}, "
                                f"not of this service's model {model!r}")
    return info


def check_split(traffic: Mapping[str, int], versions: Mapping[int, VersionInfo | None], project_id: int,
                model: str) -> dict[str, int]:
    """The split as stored (string keys, no zero weights kept but the stable's), or a FieldError."""
    if not traffic:
        raise FieldError("traffic", "give at least one version and its weight")
    out: dict[str, int] = {}
    for key, weight in traffic.items():
        if not str(key).isdigit():
            raise FieldError("traffic", f"{key!r} is not a model version id")
        if isinstance(weight, bool) or not isinstance(weight, int) or not 0 <= weight <= 100:
            raise FieldError(f"traffic.{key}", "must be a whole number from 0 to 100")
        check_version(f"traffic.{key}", int(key), versions.get(int(key)), project_id, model)
        out[str(int(key))] = weight
    total = sum(out.values())
    if total != 100:
        raise FieldError("traffic", f"weights must add up to 100, not {total}")
    return out


def canary(stable: int, canary_id: int, weight: int) -> dict[str, int]:
    """``weight`` % to the canary, the rest to the stable version."""
    if canary_id == stable:
        raise FieldError("version_id", "is already the stable version; a canary must be another version")
    if not 0 <= weight <= 100:
        raise FieldError("weight", "must be a whole number from 0 to 100")
    return {str(stable): 100 - weight, str(canary_id): weight}


def canaries(traffic: Mapping[str, int], stable: int) -> list[int]:
    return sorted(int(k) for k in traffic if int(k) != stable)


def promote(traffic: Mapping[str, int], stable: int, version_id: int | None) -> tuple[int, dict[str, int]]:
    """The canary (the only one, or ``version_id``) becomes the stable version with all the traffic."""
    choices = canaries(traffic, stable)
    if version_id is None:
        if len(choices) != 1:
            raise FieldError("version_id", "there is no canary to promote" if not choices
                             else f"name the canary to promote: one of {', '.join(map(str, choices))}")
        version_id = choices[0]
    elif version_id not in choices:
        raise FieldError("version_id", f"model version {version_id} is not a canary of this service")
    return version_id, {str(version_id): 100}


def rollback(traffic: Mapping[str, int], stable: int) -> dict[str, int]:
    """Back to the stable version alone."""
    if not canaries(traffic, stable):
        raise FieldError("traffic", "there is no canary to roll back", Kind.CONFLICT)
    return {str(stable): 100}


def wanted_versions(traffic: Mapping[str, int], shadow: int | None) -> set[int]:
    """Every version that needs a running server: those in the split (even at 0 %) and the shadow."""
    return {int(k) for k in traffic} | ({shadow} if shadow else set())


def router_routes(traffic: Mapping[str, int], shadow: int | None, mirror_percent: int,
                  urls: Mapping[int, str], labels: Mapping[int, str]) -> dict:
    """The local router's configuration: upstreams by version label, weights and the mirror."""
    return {
        "routes": [{"version": labels[int(k)], "url": urls[int(k)], "weight": w} for k, w in sorted(traffic.items())],
        "mirror": ({"version": labels[shadow], "url": urls[shadow], "percent": mirror_percent}
                   if shadow and shadow in urls else None),
    }
