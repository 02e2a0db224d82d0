"""Resource usage of an attempt's pods: Prometheus range queries when the cluster has one
(cAdvisor CPU / memory, DCGM exporter GPU), else the metrics API's current PodMetrics."""
from __future__ import annotations

import calendar
import functools
import json
import math
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any

from ...rendering.quantity import parse_quantity
from ..base import BackendError, MetricSample
from .adapters import replica_name

MIB = 2 ** 20
MAX_POINTS = 500
CONTAINERS = 'container!="",container!="POD"'
# field of MetricSample -> PromQL template ({sel}: namespace + pod matchers, {window}: rate window)
QUERIES = {
    "cpu_cores": "sum by (pod) (rate(container_cpu_usage_seconds_total{{{sel}," + CONTAINERS + "}}[{window}]))",
    "memory_bytes": "sum by (pod) (container_memory_working_set_bytes{{{sel}," + CONTAINERS + "}})",
    "gpu_utilization": "avg by (pod) (DCGM_FI_DEV_GPU_UTIL{{{sel}}})",
    "gpu_memory_bytes": "sum by (pod) (DCGM_FI_DEV_FB_USED{{{sel}}})",  # MiB
}


class PrometheusError(BackendError):
    """Prometheus answered with an error, or could not be reached (after retries)."""

    def __init__(self, message: str, status: int | None = None, retry_after: float | None = None):
        super().__init__(message)
        self.status, self.retry_after = status, retry_after


def _rfc3339(text: str | None) -> float | None:
    if not text:
        return None
    return float(calendar.timegm(time.strptime(text[:19], "%Y-%m-%dT%H:%M:%S")))


def _pod_regex(names: list[str]) -> str:
    return "|".join(name.replace(".", "\\\\.") for name in sorted(names))


def query_range(base_url: str, query: str, start: float, end: float, step: float, timeout: float) -> list[Any]:
    params = urllib.parse.urlencode({"query": query, "start": f"{start:.3f}", "end": f"{end:.3f}",
                                     "step": f"{step:g}"})
    url = f"{base_url.rstrip('/')}/api/v1/query_range?{params}"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            body = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        retry_after = exc.headers.get("Retry-After") if exc.headers else None
        detail = exc.read().decode("utf-8", errors="replace")[:300]
        try:
            detail = json.loads(detail).get("error", detail)
        except ValueError:
            pass
        raise PrometheusError(f"Prometheus {exc.code}: {detail}", exc.code,
                              float(retry_after) if retry_after else None) from exc
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise PrometheusError(f"Prometheus unreachable at {base_url}: {exc}") from exc
    if body.get("status") != "success":
        raise PrometheusError(f"Prometheus query failed: {body.get('errorType')}: {body.get('error')}", 400)
    return (body.get("data") or {}).get("result") or []


def from_prometheus(base_url: str, namespace: str, pods: list[dict[str, Any]], since: float | None,
                    call: Callable[[str, Callable[[], Any]], Any], timeout: float,
                    now: Callable[[], float] = time.time) -> list[MetricSample]:
    """One query_range per metric over the attempt's pods, merged into samples per (time, replica)."""
    replicas = {p["metadata"]["name"]: replica_name(p) for p in pods}
    if not replicas:
        return []
    end = now()
    created = [t for t in (_rfc3339(p["metadata"].get("creationTimestamp")) for p in pods) if t]
    start = since if since is not None else (min(created) if created else end - 3600)
    start = min(start, end)
    step = max(15.0, math.ceil((end - start) / MAX_POINTS))
    selector = f'namespace="{namespace}",pod=~"{_pod_regex(list(replicas))}"'
    window = f"{int(max(60, 2 * step))}s"
    samples: dict[tuple[float, str], dict[str, Any]] = {}
    for field, template in QUERIES.items():
        query = template.format(sel=selector, window=window)
        result = call(f"Prometheus {field}", functools.partial(query_range, base_url, query, start, end, step, timeout))
        for series in result:
            pod = (series.get("metric") or {}).get("pod")
            if pod not in replicas:
                continue
            for ts, value in series.get("values") or []:
                number = float(value)
                if math.isnan(number):
                    continue
                if field == "memory_bytes":
                    number = int(number)
                elif field == "gpu_memory_bytes":
                    number = int(number * MIB)
                samples.setdefault((float(ts), replicas[pod]), {})[field] = number
    return [MetricSample(timestamp=ts, replica=replica, **values)
            for (ts, replica), values in sorted(samples.items())]


def from_metrics_api(items: list[dict[str, Any]], pods: list[dict[str, Any]],
                     since: float | None) -> list[MetricSample]:
    """metrics.k8s.io PodMetrics (current usage only): container usages summed per pod."""
    replicas = {p["metadata"]["name"]: replica_name(p) for p in pods}
    out = []
    for item in items:
        name = item["metadata"]["name"]
        timestamp = _rfc3339(item.get("timestamp")) or time.time()
        if since is not None and timestamp < since:
            continue
        cpu = memory = None
        for container in item.get("containers") or []:
            usage = container.get("usage") or {}
            if "cpu" in usage:
                cpu = (cpu or 0) + float(parse_quantity(usage["cpu"]))
            if "memory" in usage:
                memory = (memory or 0) + int(parse_quantity(usage["memory"]))
        replica = replicas.get(name) or replica_name(item)
        out.append(MetricSample(timestamp=timestamp, replica=replica, cpu_cores=cpu, memory_bytes=memory))
    return sorted(out, key=lambda s: (s.timestamp, s.replica))


def is_retryable(error: BaseException) -> bool:
    """Unreachable, 429 and 5xx are worth another try; a bad query is not."""
    return isinstance(error, PrometheusError) and (error.status is None or error.status == 429
                                                    or error.status >= 500)
