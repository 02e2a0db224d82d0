"""Where a gang fits: the free GPUs, CPU and memory per node, changed as a policy plans.

A job that fits one node's GPUs goes on one node (best fit: the fullest node that still holds it, in
GPUs, then CPU, then memory, so whole nodes stay free for big gangs); a larger job takes whole free
nodes. A placement is all the job's GPUs or nothing: no partial gang ever holds GPUs.
"""
from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from .model import Job, Node, Running


@dataclass(frozen=True)
class _Layout:
    """What a plan takes from its nodes alone."""

    key: tuple[Node, ...]
    nodes: dict[str, Node]
    order: list[str]
    gpus: dict[str, int]
    cpu: dict[str, float]
    memory: dict[str, float]
    largest: int
    smallest: int
    total: int
    tracked: bool


_last_layout: _Layout | None = None  # the simulator plans on the same nodes at every decision: worked out once


def _layout(nodes: Sequence[Node]) -> _Layout:
    global _last_layout
    key = tuple(nodes)
    last = _last_layout
    if last is not None and last.key == key:
        return last
    layout = _Layout(key, {n.name: n for n in nodes}, [n.name for n in nodes], {n.name: n.gpus for n in nodes},
                     {n.name: n.cpu for n in nodes}, {n.name: n.memory for n in nodes},
                     max((n.gpus for n in nodes), default=0),
                     min((n.gpus for n in nodes), default=0),  # fewer free than this on every node: none whole
                     sum(n.gpus for n in nodes),
                     any(n.cpu or n.memory for n in nodes))  # best fit compares CPU and memory too
    _last_layout = layout
    return layout


class Plan:
    def __init__(self, nodes: Sequence[Node], running: Iterable[Running],
                 free: Mapping[str, int] | None = None) -> None:
        self._layout = layout = _layout(nodes)
        self.nodes, self.order = layout.nodes, layout.order  # shared with other plans: never changed
        self.largest, self.smallest, self.total, self.tracked = (
            layout.largest, layout.smallest, layout.total, layout.tracked)
        self.cpu, self.memory = dict(layout.cpu), dict(layout.memory)
        if free is not None and not self.tracked:
            self.gpus = dict(free)  # the caller tracks the GPUs, and nothing else is tracked
            running = ()
        else:
            self.gpus = dict(layout.gpus)
        gpus = self.gpus
        self.free_gpus = self.total
        for r in running:
            if r.job.cpu or r.job.memory or len(r.placement) > 1:
                self.take(r.job, r.placement)
            else:  # the common case, inline: this runs for every running job at every decision
                for name, held in r.placement.items():
                    gpus[name] -= held
        self.free_gpus = sum(self.gpus.values())

    def single_node(self, job: Job) -> bool:
        return job.gpus <= self.largest

    def whole_nodes_needed(self, job: Job) -> int:
        """How many of the largest nodes a multi-node job needs (the lower bound on mixed sizes)."""
        return -(-job.gpus // self.largest) if self.largest else 0

    def whole_nodes(self, exclude: Collection[str] = ()) -> list[str]:
        """The nodes with all their GPUs, CPU and memory free (not in `exclude`), in node order."""
        gpus, cpu, memory, layout = self.gpus, self.cpu, self.memory, self._layout
        return [n for n in self.order if gpus[n] == layout.gpus[n] and cpu[n] == layout.cpu[n]
                and memory[n] == layout.memory[n] and not (exclude and n in exclude)]

    def fit(self, job: Job, exclude: Collection[str] = ()) -> dict[str, int] | None:
        """A placement for the whole gang on what is free now (not on `exclude`), or None."""
        if self.single_node(job):
            best = None
            for name in self.order:
                free = self.gpus[name]
                if exclude and name in exclude:
                    continue
                if free < job.gpus or (best is not None and free > self.gpus[best]):
                    continue
                if best is not None and free == self.gpus[best] and not (
                        self.tracked and (self.cpu[name], self.memory[name]) < (self.cpu[best], self.memory[best])):
                    continue  # as full as the best so far (in GPUs, then CPU and memory): keep the first
                node = self.nodes[name]
                if (node.cpu and self.cpu[name] < job.cpu) or (node.memory and self.memory[name] < job.memory):
                    continue
                best = name
                if free == job.gpus and not self.tracked:
                    break  # an exact fit: nothing fits better
            return None if best is None else {best: job.gpus}
        if self.free_gpus < job.gpus:
            return None
        whole = sorted(self.whole_nodes(exclude), key=lambda n: -self.gpus[n])
        placement: dict[str, int] = {}
        held = 0
        for name in whole:
            if held >= job.gpus:
                break
            placement[name] = self.gpus[name]
            held += self.gpus[name]
        return placement if held >= job.gpus else None

    def could_fit(self, sizes: Collection[int]) -> bool:
        """Whether a gang of one of these GPU counts might fit now (GPUs only: False is certain)."""
        most = max(self.gpus.values(), default=0)
        whole = None
        for size in sizes:
            if size <= self.largest:
                if size <= most:
                    return True
            else:
                if whole is None:
                    whole = sum(self.gpus[n] for n in self.whole_nodes())
                if whole >= size:
                    return True
        return False

    def take(self, job: Job, placement: dict[str, int]) -> None:
        for name, gpus in placement.items():
            self.gpus[name] -= gpus
            self.free_gpus -= gpus
            if len(placement) == 1:
                self.cpu[name] -= job.cpu
                self.memory[name] -= job.memory
            else:  # whole nodes: all of their CPU and memory too
                self.cpu[name] = 0.0
                self.memory[name] = 0.0

    def release(self, job: Job, placement: dict[str, int]) -> None:
        for name, gpus in placement.items():
            self.gpus[name] += gpus
            self.free_gpus += gpus
            if len(placement) == 1:
                self.cpu[name] += job.cpu
                self.memory[name] += job.memory
            else:
                self.cpu[name] = self.nodes[name].cpu
                self.memory[name] = self.nodes[name].memory

    def why_not(self, job: Job) -> str:
        """Why the job does not fit now, for its waiting reason."""
        if job.gpus > self.total:
            return f"needs {job.gpus} GPUs, the cluster has {self.total}"
        if self.single_node(job):
            if not any(self.gpus[n] >= job.gpus for n in self.order):
                return f"no node with {job.gpus} free GPUs"
            if not job.gpus:  # a CPU job (a local one, most often): say it in its own terms
                cpu = job.cpu and any(n.cpu for n in self.nodes.values())  # what no node tracks is not short
                memory = job.memory and any(n.memory for n in self.nodes.values())
                wants = ([f"{job.cpu:g} free CPUs"] if cpu else []) + (
                    [f"{show_memory(job.memory)} of free memory"] if memory else [])
                return "no node with " + " and ".join(wants)
            return f"no node with {job.gpus} free GPUs, {job.cpu:g} CPU and {job.memory:g} bytes of memory"
        whole = len(self.whole_nodes())
        return f"needs {self.whole_nodes_needed(job)} whole free nodes for {job.gpus} GPUs, {whole} free"


def show_memory(value: float) -> str:
    """Bytes in binary units, as Kubernetes quantities are written (4Gi, 512Mi)."""
    for unit, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if value >= size:
            return f"{value / size:.3g}{unit}"
    return f"{value:g}"
