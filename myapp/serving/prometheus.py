"""A service's per-version figures on Kubernetes, from Prometheus: what Istio's sidecars count for
the model servers (``istio_requests_total``, ``istio_request_duration_milliseconds_bucket``) by the
pods' ``version`` label (``destination_version``), in the same shape as the local router's
``/_router/stats`` (``GET /api/v1/inference_service/{id}/metrics``).

Series are per step (``window / 60``, at least 15 s: Prometheus's usual scrape interval), not per
second as the router's: ``n`` and ``errors`` are the step's requests, estimated from the rate.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from ..backends.kubernetes.metrics import PrometheusError, query_range
from ..errors import DomainError, Kind

MIN_STEP = 15
TIMEOUT = 5.0
QUANTILES = {"p50": 0.5, "p95": 0.95, "p99": 0.99}


def _selector(namespace: str, service: str, errors: bool = False) -> str:
    """The service's model servers as the receiving sidecars report them (each request counted once)."""
    labels = [f'destination_workload_namespace="{namespace}"', f'destination_app="{service}"',
              'reporter="destination"']
    if errors:
        labels.append('response_code=~"5.."')
    return "{" + ",".join(labels) + "}"


def queries(namespace: str, service: str, window: int, step: int) -> dict[str, str]:
    """PromQL per figure: totals over the window (``total_*``) and per step (``step_*``). Names come
    from the API's checked rows (DNS labels), never from the caller."""
    by = "destination_version"
    out: dict[str, str] = {}
    for prefix, span in (("total", window), ("step", max(step, 2 * MIN_STEP))):
        out[f"{prefix}_n"] = f"sum by ({by}) (increase(istio_requests_total{_selector(namespace, service)}[{span}s]))"
        out[f"{prefix}_errors"] = (f"sum by ({by}) (increase(istio_requests_total"
                                   f"{_selector(namespace, service, errors=True)}[{span}s]))")
        for name, q in QUANTILES.items():
            out[f"{prefix}_{name}"] = (f"histogram_quantile({q}, sum by ({by}, le) (rate("
                                       f"istio_request_duration_milliseconds_bucket{_selector(namespace, service)}"
                                       f"[{span}s])))")
    return out


def _number(text: Any) -> float | None:
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None  # NaN: a quantile of no requests


def _by_version(result: list[Any]) -> dict[str, list[tuple[int, float | None]]]:
    """A query_range result: per destination_version, (time, value) points."""
    out: dict[str, list[tuple[int, float | None]]] = {}
    for item in result:
        version = (item.get("metric") or {}).get("destination_version") or "unknown"
        out[version] = [(int(float(t)), _number(v)) for t, v in item.get("values") or []]
    return out


def _ms(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def figures(base_url: str, namespace: str, service: str, window: int, shadows: frozenset[str] = frozenset(),
            now: Callable[[], float] = time.time) -> dict[str, Any]:
    """``{"window", "versions": {label: {requests, errors, rps, p50, p95, p99}}, "series": {label: [...]}}``;
    a shadow version's label is ``"vN (shadow)"`` as the router says it."""
    end = float(int(now()))
    step = max(MIN_STEP, window // 60)
    found: dict[str, dict[str, list[tuple[int, float | None]]]] = {}
    try:
        for name, promql in queries(namespace, service, window, step).items():
            if name.startswith("total_"):  # one point: the window's totals at its end
                found[name] = _by_version(query_range(base_url, promql, end, end, window, TIMEOUT))
            else:
                found[name] = _by_version(query_range(base_url, promql, end - window, end, step, TIMEOUT))
    except PrometheusError as exc:
        raise DomainError(f"the service's figures are unavailable: {exc}", kind=Kind.UNAVAILABLE) from exc

    def label(version: str) -> str:
        return f"{version} (shadow)" if version in shadows else version

    versions: dict[str, dict[str, Any]] = {}
    for version, points in found["total_n"].items():
        requests = round(points[-1][1] or 0) if points else 0
        errors_points = found["total_errors"].get(version) or [(0, 0.0)]
        figure: dict[str, Any] = {"requests": requests, "errors": round(errors_points[-1][1] or 0),
                                 "rps": round(requests / max(window, 1), 3)}
        for name in QUANTILES:
            quantile = found[f"total_{name}"].get(version) or [(0, None)]
            figure[name] = _ms(quantile[-1][1])
        versions[label(version)] = figure
    series: dict[str, list[dict[str, Any]]] = {}
    for version, points in found["step_n"].items():
        lookup = {name: dict(found[f"step_{name}"].get(version) or []) for name in ("errors", *QUANTILES)}
        # increase() over a span longer than the step: scaled to the step's share.
        share = step / max(step, 2 * MIN_STEP)
        series[label(version)] = [
            {"t": t, "n": round((n or 0) * share), "errors": round((lookup["errors"].get(t) or 0) * share),
             **{name: _ms(lookup[name].get(t)) for name in QUANTILES}}
            for t, n in points]
    return {"window": window, "versions": versions, "series": series}
