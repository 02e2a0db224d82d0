"""Sampled request logs of a service on Kubernetes, from its model servers' own lines.

There is no router of the platform's there to keep them: each model server (job-templates/deploy-service/
main.py) writes every error and one in ten of its other answers to stdout as one JSON line marked
``"log": "myapp.request"``. The API reads the end of the versions' pod logs (bounded, through
myapp.pipelines.observation) and this module keeps the marked lines that contain ``q``, newest first, in the shape
the local router answers (time, version, status, ms, request, response).
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ..models import InferenceService
from .controller import KSERVE, KSERVE_SHADOW

MARKER = "myapp.request"
TAIL_LINES = 2000  # per container: as many as the local router keeps
TAIL_BYTES = 2 * 1024 * 1024  # per container: 2,000 lines of two 512-byte excerpts, JSON-escaped, fit
FIELDS = ("time", "version", "status", "ms", "request", "response")


def server_refs(service: InferenceService) -> list[Mapping[str, Any]]:
    """The job references of the service's model servers: one per version (Deployments), or KServe's
    InferenceService and its shadow. The router, the traffic and the mirror front have no model server."""
    return [entry for key, entry in sorted((service.jobs or {}).items())
            if "backend" in entry and (key in (KSERVE, KSERVE_SHADOW) or (key[:1] == "v" and key[1:].isdigit()))]


def parse(line: str) -> dict[str, Any] | None:
    """A model server's request line as the API answers it; None for any other line of the pod's log."""
    if MARKER not in line:
        return None
    try:
        entry = json.loads(line)
    except ValueError:
        return None
    if not isinstance(entry, dict) or entry.get("log") != MARKER:
        return None
    try:
        return {"time": float(entry["time"]), "version": str(entry["version"]), "status": int(entry["status"]),
                "ms": float(entry["ms"]), "request": str(entry.get("request", "")),
                "response": str(entry.get("response", ""))}
    except (KeyError, TypeError, ValueError):
        return None


def search(lines: Iterable[str], text: str, limit: int, shadows: frozenset[str] = frozenset()) -> list[dict]:
    """The marked lines containing ``text`` (in the entry as the API answers it, as the router searches),
    newest first, at most ``limit``. A version in ``shadows`` is named "vN (shadow)", as the router does."""
    hits = []
    for line in lines:
        entry = parse(line)
        if entry is None:
            continue
        if entry["version"] in shadows:
            entry["version"] = f"{entry['version']} (shadow)"
        if not text or text in json.dumps(entry):
            hits.append(entry)
    hits.sort(key=lambda entry: entry["time"], reverse=True)
    return hits[:limit]
