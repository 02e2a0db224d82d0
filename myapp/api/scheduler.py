"""The scheduling simulator for admins: replay a bundled trace through policies, answer figures and charts.

The replay runs in the web process, so it is bounded: at most MAX_JOBS jobs (400 beyond), one replay at a
time per process (409 while one runs), and a CPU-time budget per request (`MYAPP_SIMULATE_CPU_SECONDS`,
30 s; 422 when a replay exceeds it).
"""
from __future__ import annotations

import os
import threading
from typing import Any

from flask import jsonify
from marshmallow import fields, validate

from ..errors import DomainError, FieldError, Kind
from ..inputs.fields import Int, StrictSchema
from ..models import PlatformSetting
from ..scheduler import traces
from ..scheduler.policy import DEFAULT_MAX_PREEMPTIONS, OURS, POLICIES
from ..scheduler.series import MAX_POINTS
from ..scheduler.simulate import NODE_GPUS, simulate
from ..scheduler.trace import load
from .base import ResourceApi
from .responses import INTEGER, NUMBER, STRING, array, component, nullable, obj
from .routing import json_body, route

MAX_JOBS = 20_000
MAX_GPUS = 4096  # 512 nodes: a replay's cost grows with the nodes, and the traces fit a few hundred GPUs
DEFAULT_POINTS = 200
_RUNNING = threading.Lock()  # one replay at a time in this process


def cpu_budget() -> float:
    return float(os.environ.get("MYAPP_SIMULATE_CPU_SECONDS") or 30)


class SimulateSchema(StrictSchema):
    trace = fields.String(required=True, validate=validate.Length(min=1, max=63))
    policies = fields.List(fields.String(validate=validate.OneOf(POLICIES)), required=True,
                           validate=validate.Length(min=1, max=len(POLICIES)))
    gpus = Int(NODE_GPUS, MAX_GPUS, required=True)
    jobs = Int(1, MAX_JOBS)  # the first N jobs of the trace; all of them when absent
    max_preemptions = Int(0, 100)
    points = Int(1, MAX_POINTS)


_SERIES = component("SimulationSeries", obj({
    "over_time": obj({"t": array(NUMBER), "utilization": array(NUMBER), "waiting": array(NUMBER)}),
    "jct_by_submission": obj({"t": array(NUMBER), "avg_jct_s": array(nullable(NUMBER)), "jobs": array(NUMBER)}),
}))
_FIGURES = ("avg_jct_s", "p50_jct_s", "p95_jct_s", "p99_jct_s", "makespan_s", "utilization", "offered_load",
            "partial_gang_seconds", "preemptions_per_job", "lost_gpu_seconds", "sim_seconds")
_RESULT = component("SimulationResult", obj({
    "policy": STRING, "gpus": INTEGER, "jobs": INTEGER, "max_preemptions_of_a_job": INTEGER,
    **dict.fromkeys(_FIGURES, NUMBER), "series": _SERIES,
}))
SIMULATION = component("Simulation", obj({
    "trace": STRING, "gpus": INTEGER, "jobs": INTEGER, "results": array(_RESULT),
}))
TRACES = component("SimulatorTraces", obj({
    "traces": array(obj({"name": STRING, "description": STRING, "default_gpus": INTEGER})),
    "policies": array(STRING), "default_policy": STRING, "max_jobs": INTEGER, "max_gpus": INTEGER,
    "node_gpus": INTEGER,
}))


class SchedulerApi(ResourceApi):
    resource_name = "scheduler"
    class_permission_name = "Scheduler"
    model = PlatformSetting  # none is read or written: ResourceApi wants a model
    label = "simulation"
    scope = "admin"
    include_route_methods = {"traces", "simulate_traces"}

    @route("/traces", summary="The traces and policies the simulator offers", response=TRACES)
    def traces(self):
        return jsonify(traces=[{"name": t.name, "description": t.description, "default_gpus": t.default_gpus}
                               for t in traces.available()],
                       policies=list(POLICIES), default_policy=OURS, max_jobs=MAX_JOBS, max_gpus=MAX_GPUS,
                       node_gpus=NODE_GPUS)

    @route("/simulate", methods=("POST",), permission="write", body=SimulateSchema, response=SIMULATION,
           summary="Replay a bundled trace through one or more policies: figures and time series per policy "
                   "(stores nothing)")
    def simulate_traces(self):
        return jsonify(run_simulation(SimulateSchema().load(json_body())))


def run_simulation(request: dict[str, Any]) -> dict[str, Any]:
    """The replays `request` (a loaded SimulateSchema) asks for, in order, within one CPU budget."""
    trace = traces.find(request["trace"])
    gpus = request["gpus"]
    if gpus % NODE_GPUS:
        raise FieldError("gpus", f"must be a multiple of {NODE_GPUS} (nodes of {NODE_GPUS} GPUs)")
    jobs = load(trace.path)  # simulate() names a job larger than the cluster by its line ("trace:153")
    if "jobs" in request:
        jobs = jobs[:request["jobs"]]
    if len(jobs) > MAX_JOBS:
        raise FieldError("jobs", f"the trace has {len(jobs)} jobs; replay at most {MAX_JOBS} here")
    if not _RUNNING.acquire(blocking=False):
        raise DomainError("another simulation is running on this server; try again when it ends", kind=Kind.CONFLICT)
    try:
        budget = cpu_budget()
        results = []
        for policy in request["policies"]:
            if budget <= 0:
                raise DomainError(f"the replays took more than {cpu_budget():g} CPU seconds: use fewer jobs, "
                                  "policies or more GPUs", kind=Kind.UNPROCESSABLE)
            result = simulate(jobs, gpus, policy, series_points=request.get("points", DEFAULT_POINTS),
                              max_preemptions=request.get("max_preemptions", DEFAULT_MAX_PREEMPTIONS),
                              max_cpu_seconds=budget)
            budget -= result["sim_seconds"]
            results.append(result)
    finally:
        _RUNNING.release()
    return {"trace": trace.name, "gpus": gpus, "jobs": len(jobs), "results": results}
