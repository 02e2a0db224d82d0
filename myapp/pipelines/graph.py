"""The editor's save: a pipeline's whole DAG replaced in one transaction.

The browser sends every task (existing ones by id, new ones by a client key) and every
edge (by task keys); tasks it leaves out are deleted. Errors name the task and the field
(`tasks[2].args.epochs`, `edges[0].downstream`), like the YAML import.
"""
from __future__ import annotations

import uuid
from typing import Any

import sqlalchemy as sa

from ..api.errors import FieldError
from ..extensions import db
from ..models import Edge, JobTemplate, Pipeline, ResourceGroup, Task, TriggerRule
from ..rendering import ArgumentError
from ..task_manifests import check_task_inputs
from .dag import find_cycle

TASK_FIELDS = ("name", "template_id", "args", "resources", "resource_group_id", "retries", "retry_delay",
               "timeout", "trigger_rule", "position")
DEFAULTS: dict[str, Any] = {"args": {}, "resources": {}, "resource_group_id": None, "retries": 0,
                            "retry_delay": 30, "timeout": None, "trigger_rule": TriggerRule.ALL_SUCCESS,
                            "position": {}}


def _unique(items: list[dict[str, Any]], field: str, prefix: str) -> None:
    seen: dict[Any, int] = {}
    for index, item in enumerate(items):
        value = item[field]
        if value in seen:
            raise FieldError(f"{prefix}[{index}].{field}", f"{value!r} is already used by {prefix}[{seen[value]}]",
                             status=409 if field == "name" else 400)
        seen[value] = index


def _check_refs(tasks: list[dict[str, Any]], existing: dict[int, Task]) -> dict[int, JobTemplate]:
    templates = {t.id: t for t in db.session.scalars(
        sa.select(JobTemplate).where(JobTemplate.id.in_({t["template_id"] for t in tasks})))}
    group_ids = {t["resource_group_id"] for t in tasks if t.get("resource_group_id")}
    groups = set(db.session.scalars(sa.select(ResourceGroup.id).where(ResourceGroup.id.in_(group_ids))))
    for index, task in enumerate(tasks):
        if "id" in task and task["id"] not in existing:
            raise FieldError(f"tasks[{index}].id", f"task {task['id']} is not in this pipeline", status=404)
        if task["template_id"] not in templates:
            raise FieldError(f"tasks[{index}].template_id", f"job template {task['template_id']} not found",
                             status=404)
        if task.get("resource_group_id") and task["resource_group_id"] not in groups:
            raise FieldError(f"tasks[{index}].resource_group_id",
                             f"resource group {task['resource_group_id']} not found", status=404)
        try:
            check_task_inputs(templates[task["template_id"]], task.get("args"), task.get("resources"))
        except ArgumentError as exc:
            raise FieldError(f"tasks[{index}].{exc.field}", exc.reason) from None
    return templates


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
    _check_refs(tasks, existing)
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
    for spec in tasks:
        row = existing.get(spec["id"]) if "id" in spec else None
        if row is None:
            row = Task(project_id=pipeline.project_id, pipeline_id=pipeline.id)
            db.session.add(row)
        for field in TASK_FIELDS:
            setattr(row, field, spec.get(field, DEFAULTS.get(field)))
        db.session.flush()
        ids[spec["key"]] = row.id
    for upstream, downstream in pairs:
        db.session.add(Edge(project_id=pipeline.project_id, pipeline_id=pipeline.id,
                            upstream_task_id=ids[upstream], downstream_task_id=ids[downstream]))
    db.session.flush()
    return ids
