"""The editor's save: a pipeline's whole DAG replaced in one transaction.

The browser sends every task (existing ones by id, new ones by a client key) and every
edge (by task keys); tasks it leaves out are deleted. Errors name the task and the field
(`tasks[2].args.epochs`, `edges[0].downstream`), like the YAML import.
"""
from __future__ import annotations

import uuid
from typing import Any

import sqlalchemy as sa

from ..errors import FieldError, Kind
from ..extensions import db
from ..models import Edge, Pipeline, Task
from ..outputs.refs import check_references
from .dag import find_cycle
from .tasks import TASK_FIELDS, save_task


def _unique(items: list[dict[str, Any]], field: str, prefix: str) -> None:
    seen: dict[Any, int] = {}
    for index, item in enumerate(items):
        value = item[field]
        if value in seen:
            raise FieldError(f"{prefix}[{index}].{field}", f"{value!r} is already used by {prefix}[{seen[value]}]",
                             Kind.CONFLICT if field == "name" else Kind.INVALID)
        seen[value] = index


def _edge_pairs(tasks: list[dict[str, Any]], edges: list[dict[str, str]]) -> list[tuple[str, str]]:
    keys = {t["key"] for t in tasks}
    pairs: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    source: list[int] = []  # request index of each pair, to name the edge that closes a cycle
    for index, edge in enumerate(edges):
        for end in ("upstream", "downstream"):
            if edge[end] not in keys:
                raise FieldError(f"edges[{index}].{end}", f"no task with key {edge[end]!r}")
        if edge["upstream"] == edge["downstream"]:
            raise FieldError(f"edges[{index}].downstream", "an edge cannot connect a task to itself")
        pair = (edge["upstream"], edge["downstream"])
        if pair not in seen:
            seen.add(pair)
            pairs.append(pair)
            source.append(index)
    if find_cycle(pairs):
        closing = next(i for i in range(len(pairs)) if find_cycle(pairs[: i + 1]))
        names = {t["key"]: t["name"] for t in tasks}
        up, down = pairs[closing]
        raise FieldError(f"edges[{source[closing]}]",
                         f"{names[up]} → {names[down]} would make a cycle; pipelines are acyclic")
    return pairs


def replace_graph(pipeline: Pipeline, tasks: list[dict[str, Any]], edges: list[dict[str, str]]) -> dict[str, int]:
    """Make the pipeline's tasks and edges exactly these; return client key -> task id."""
    _unique(tasks, "key", "tasks")
    _unique(tasks, "name", "tasks")
    existing = {t.id: t for t in db.session.scalars(sa.select(Task).filter_by(pipeline_id=pipeline.id))}
    for index, task in enumerate(tasks):
        if "id" in task and task["id"] not in existing:
            raise FieldError(f"tasks[{index}].id", f"task {task['id']} is not in this pipeline", Kind.NOT_FOUND)
    pairs = _edge_pairs(tasks, edges)

    db.session.execute(sa.delete(Edge).where(Edge.pipeline_id == pipeline.id))
    kept = {t["id"] for t in tasks if "id" in t}
    for task_id, task in existing.items():
        if task_id not in kept:
            db.session.delete(task)
    # Names are unique per pipeline: park renamed tasks on temporary names first, so that
    # swapping two names does not trip the constraint halfway through the flush.
    renamed = [t for t in tasks if "id" in t and existing[t["id"]].name != t["name"]]
    for task in renamed:
        existing[task["id"]].name = f"tmp-{uuid.uuid4().hex[:20]}"
    db.session.flush()

    ids: dict[str, int] = {}
    for index, spec in enumerate(tasks):
        values = {field: spec[field] for field in TASK_FIELDS if field in spec}
        row = save_task(pipeline, values, existing.get(spec["id"]) if "id" in spec else None, f"tasks[{index}].")
        ids[spec["key"]] = row.id
    for upstream, downstream in pairs:
        db.session.add(Edge(project_id=pipeline.project_id, pipeline_id=pipeline.id,
                            upstream_task_id=ids[upstream], downstream_task_id=ids[downstream]))
    db.session.flush()
    check_references(pipeline.id, {ids[spec["key"]]: f"tasks[{index}]" for index, spec in enumerate(tasks)})
    return ids
