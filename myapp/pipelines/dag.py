"""Pure DAG rules: which tasks may start, which are skipped or upstream-failed, how a run ends.

No database, no backend: plain ids and states in, decisions out. The controller applies them.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from ..models.pipeline import TriggerRule
from ..models.states import TaskState

FAILED_LIKE = frozenset({TaskState.FAILED, TaskState.UPSTREAM_FAILED})
SKIPPED_LIKE = frozenset({TaskState.SKIPPED, TaskState.CANCELLED})
Node = TypeVar("Node", bound=Hashable)


@dataclass(frozen=True)
class Decision:
    ready: tuple[int, ...]  # start (a new attempt) now
    upstream_failed: tuple[int, ...]
    skipped: tuple[int, ...]


def find_cycle(edges: Sequence[tuple[Node, Node]]) -> bool:
    """True when the directed graph has a cycle (Kahn's algorithm). Nodes: task ids, or names/keys
    before the tasks have ids."""
    indegree: dict[Node, int] = defaultdict(int)
    children: dict[Node, list[Node]] = defaultdict(list)
    nodes: set[Node] = set()
    for up, down in edges:
        children[up].append(down)
        indegree[down] += 1
        nodes |= {up, down}
    ready = [n for n in nodes if indegree[n] == 0]
    seen = 0
    while ready:
        node = ready.pop()
        seen += 1
        for child in children[node]:
            indegree[child] -= 1
            if indegree[child] == 0:
                ready.append(child)
    return seen != len(nodes)


def upstreams(edges: list[tuple[int, int]]) -> dict[int, list[int]]:
    ups: dict[int, list[int]] = defaultdict(list)
    for up, down in edges:
        ups[down].append(up)
    return ups


def decide(task_ids: list[int], rules: dict[int, TriggerRule], edges: list[tuple[int, int]],
           final: dict[int, TaskState], started: set[int]) -> Decision:
    """final: tasks whose outcome is settled (retries exhausted or not needed); started: tasks with a
    live or retrying attempt. Returns what to do with the rest."""
    ups = upstreams(edges)
    ready: list[int] = []
    failed: list[int] = []
    skipped: list[int] = []
    for task in task_ids:
        if task in final or task in started:
            continue
        states = [final.get(u) for u in ups.get(task, [])]
        if any(s is None for s in states):
            if rules[task] == TriggerRule.ONE_FAILED and any(s in FAILED_LIKE for s in states):
                ready.append(task)
            continue  # an upstream is still going
        rule = rules[task]
        if rule == TriggerRule.ALL_DONE:
            ready.append(task)
        elif rule == TriggerRule.ONE_FAILED:
            (ready if any(s in FAILED_LIKE for s in states) else skipped).append(task)
        elif any(s in FAILED_LIKE for s in states):
            failed.append(task)
        elif any(s in SKIPPED_LIKE for s in states):
            skipped.append(task)
        else:
            ready.append(task)
    return Decision(tuple(ready), tuple(failed), tuple(skipped))


def run_outcome(final: dict[int, TaskState], task_ids: list[int]) -> TaskState | None:
    """None while any task is unsettled; else SUCCEEDED or FAILED for the run."""
    if any(t not in final for t in task_ids):
        return None
    if any(final[t] in FAILED_LIKE for t in task_ids):
        return TaskState.FAILED
    return TaskState.SUCCEEDED


def retry_delay(base_seconds: int, attempt: int, cap: int = 3600) -> int:
    """Exponential backoff before attempt+1: base, 2*base, 4*base, ... capped."""
    return min(cap, base_seconds * (2 ** max(0, attempt - 1)))
