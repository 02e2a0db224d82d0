"""Scheduling policies side by side on the Philly-derived trace: gang FIFO (Volcano's default, the
baseline), ours (sieve), and the published anchors Tiresias (2D-LAS) and EASY backfilling.

    .venv/bin/python benchmarks/scheduler.py            # 15,264 jobs on 400 GPUs (50 nodes of 8); minutes
    .venv/bin/python benchmarks/scheduler.py --quick    # the first 1,000 jobs, a few seconds
    .venv/bin/python benchmarks/scheduler.py --gpus 480 --policies gang-fifo,sieve
    .venv/bin/python benchmarks/scheduler.py --checkpoints --max-preemptions 4   # if every job checkpointed

Every policy replays the same trace through myapp.scheduler.simulate (one process, one core, one policy
after the other); figures are those of `myapp simulate --json`, with each policy's ratio to gang FIFO.
The replay is checked from its event log: every job starts whole and ends exactly once, no job ends
sooner than its duration after its submission, and no job is preempted more often than the bound; a
violation means the benchmark is broken (exit status 1). A missed target is only reported.
Beside them it prints the bounds no schedule can beat (`myapp.scheduler.bounds`: even one knowing every
duration, preempting for free and ignoring nodes), so a target below them is shown out of reach.
"""
from __future__ import annotations

import argparse
import dataclasses
import platform
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from myapp.scheduler.bounds import busy_upper_bound, jct_lower_bound
from myapp.scheduler.policy import DEFAULT_MAX_PREEMPTIONS, OURS, POLICIES
from myapp.scheduler.simulate import Event, simulate
from myapp.scheduler.trace import TraceJob, load

TRACE = Path(__file__).resolve().parent / "traces" / "philly-derived-jobs.csv"
BASELINE = "gang-fifo"
QUICK_JOBS = 1000
TARGETS = {  # what sieve must reach on the trace
    "avg_jct_ratio": 0.12,  # ours / gang FIFO, at most
    "partial_gang_seconds": 0.0,
    "utilization_of_offered": 0.95,  # at least
    "preemptions_per_job": 1.0,  # at most
    "sim_seconds": 30.0,  # the full trace, one core, at most
}
FIELDS = ("jobs", "avg_jct_s", "p50_jct_s", "p95_jct_s", "p99_jct_s", "makespan_s", "utilization", "offered_load",
          "partial_gang_seconds", "preemptions_per_job", "max_preemptions_of_a_job", "lost_gpu_seconds", "sim_seconds")


def problems(jobs: list[TraceJob], log: list[Event], result: dict, max_preemptions: int) -> list[str]:
    """What the replay got wrong, counted from its event log."""
    out = []
    by_id = {tj.job.id: tj for tj in jobs}
    kinds = Counter((e.kind, e.job_id) for e in log)
    ended = [job_id for (kind, job_id), n in kinds.items() if kind == "end"]
    if sorted(ended) != sorted(by_id) or any(kinds[("end", j)] != 1 for j in by_id):
        out.append(f"{len(ended)} of {len(by_id)} jobs ended once")
    for job_id in by_id:
        if kinds[("start", job_id)] != kinds[("preempt", job_id)] + 1:
            out.append(f"{job_id}: {kinds[('start', job_id)]} starts, {kinds[('preempt', job_id)]} preemptions")
            break
        if kinds[("preempt", job_id)] > max_preemptions:
            out.append(f"{job_id}: preempted {kinds[('preempt', job_id)]} times, bound {max_preemptions}")
            break
    for e in log:
        tj = by_id[e.job_id]
        if e.kind == "start" and sum(e.placement.values()) < tj.job.gpus:
            out.append(f"{e.job_id}: started on {e.placement}, part of its {tj.job.gpus} GPUs")
            break
        if e.kind == "end" and e.time - tj.job.submitted < tj.duration - 1e-6:
            out.append(f"{e.job_id}: ended {e.time - tj.job.submitted:.0f} s after submission, runs {tj.duration} s")
            break
    if result["jobs"] != len(jobs):
        out.append(f"reported {result['jobs']} jobs of {len(jobs)}")
    return out


def lost_in_span(jobs: list[TraceJob], log: list[Event]) -> float:
    """GPU-seconds of runs later thrown away by a restart, between the first and the last submission:
    `utilization` counts them busy (as the targets define it); without them it is the work that counted.
    A job that checkpoints loses nothing when preempted."""
    gpus = {tj.job.id: 0 if tj.job.checkpoints else tj.job.gpus for tj in jobs}
    first = min(tj.job.submitted for tj in jobs)
    last = max(tj.job.submitted for tj in jobs)
    started: dict[str, float] = {}
    lost = 0.0
    for e in log:
        if e.kind == "start":
            started[e.job_id] = e.time
        elif e.kind == "preempt":
            lost += gpus[e.job_id] * max(0.0, min(e.time, last) - max(started[e.job_id], first))
    return lost


def show(key: str, value: float) -> str:
    if key.endswith("_jct_s") or key == "makespan_s":
        return f"{value / 3600:,.1f} h"
    if key == "lost_gpu_seconds":
        return f"{value / 3600:,.0f} GPU-h"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.3f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help=f"the first {QUICK_JOBS} jobs only")
    parser.add_argument("--gpus", type=int, default=400)
    parser.add_argument("--trace", default=str(TRACE))
    parser.add_argument("--policies", default=f"{BASELINE},{OURS},tiresias,easy-backfill")
    parser.add_argument("--max-preemptions", type=int, default=DEFAULT_MAX_PREEMPTIONS)
    parser.add_argument("--checkpoints", action="store_true",
                        help="a scenario: every job checkpoints (resumes when preempted); the trace says none do")
    args = parser.parse_args()
    policies = args.policies.split(",")
    if BASELINE not in policies or any(p not in POLICIES for p in policies):
        parser.error(f"--policies: from {', '.join(POLICIES)}, including {BASELINE}")
    jobs = load(args.trace, args.gpus)
    if args.quick:
        jobs = jobs[:QUICK_JOBS]
    if args.checkpoints:
        jobs = [dataclasses.replace(tj, job=dataclasses.replace(tj.job, checkpoints=True)) for tj in jobs]
    scenario = "; every job checkpoints" if args.checkpoints else ""
    print(f"{len(jobs):,} jobs of {Path(args.trace).name} on {args.gpus} GPUs (nodes of 8), "
          f"at most {args.max_preemptions} preemption(s) per job{scenario}; python {platform.python_version()}")
    results: dict[str, dict] = {}
    broken: list[str] = []
    useful: dict[str, float] = {}
    span = max(tj.job.submitted for tj in jobs) - min(tj.job.submitted for tj in jobs)
    for policy in policies:
        log: list[Event] = []
        results[policy] = simulate(jobs, args.gpus, policy, max_preemptions=args.max_preemptions, log=log)
        useful[policy] = results[policy]["utilization"] - (lost_in_span(jobs, log) / (args.gpus * span) if span else 0)
        broken += [f"{policy}: {p}" for p in problems(jobs, log, results[policy], args.max_preemptions)]
        print(f"  {policy}: simulated in {results[policy]['sim_seconds']:.1f} s", flush=True)
    base = results[BASELINE]
    print(f"\n{'field':<26}" + "".join(f"{p:>16}" for p in policies) + "".join(
        f"{p + ' / fifo':>22}" for p in policies if p != BASELINE))
    for key in FIELDS:
        row = f"{key:<26}" + "".join(f"{show(key, results[p][key]):>16}" for p in policies)
        for p in policies:
            if p != BASELINE:
                ratio = results[p][key] / base[key] if base[key] else float("nan")
                row += f"{ratio:>22.3f}"
        print(row)
    row = f"{'utilization / offered':<26}" + "".join(
        f"{results[p]['utilization'] / results[p]['offered_load']:>16.3f}" for p in policies)
    print(row)
    print(f"{'  without lost runs':<26}" + "".join(
        f"{useful[p] / results[p]['offered_load']:>16.3f}" for p in policies))
    floor, ceiling = jct_lower_bound(jobs, args.gpus), busy_upper_bound(jobs, args.gpus)
    offered = base["offered_load"]
    print(f"\nbounds for any schedule (clairvoyant, free preemption, no nodes): average JCT >= {floor / 3600:,.1f} h"
          f" = {floor / base['avg_jct_s']:.3f}x gang FIFO; utilization <= {ceiling:.3f} = {ceiling / offered:.3f}"
          " of the offered load")
    if broken:
        print("\n".join(["", *broken]))
        print("target scheduler: BROKEN")
        return 1
    ours = results.get(OURS)
    if ours is None:
        print(f"target scheduler: MISSED ({OURS} not run)")
        return 0
    reach = "" if TARGETS["avg_jct_ratio"] * base["avg_jct_s"] >= floor else \
        f"; out of reach: no schedule does better than {floor / base['avg_jct_s']:.3f}x"
    checks = {
        f"average JCT {ours['avg_jct_s'] / base['avg_jct_s']:.3f}x gang FIFO (<= {TARGETS['avg_jct_ratio']}{reach})":
            ours["avg_jct_s"] <= TARGETS["avg_jct_ratio"] * base["avg_jct_s"],
        f"partial-gang GPU-seconds {ours['partial_gang_seconds']:g} (= 0)": ours["partial_gang_seconds"] == 0,
        f"utilization {ours['utilization'] / ours['offered_load']:.3f} of the offered load "
        f"(>= {TARGETS['utilization_of_offered']})":
            ours["utilization"] >= TARGETS["utilization_of_offered"] * ours["offered_load"],
        f"  the same without runs lost to restarts: {useful[OURS] / ours['offered_load']:.3f}":
            useful[OURS] >= TARGETS["utilization_of_offered"] * ours["offered_load"],
        f"{ours['preemptions_per_job']:.3f} preemptions per job (<= {TARGETS['preemptions_per_job']:g})":
            ours["preemptions_per_job"] <= TARGETS["preemptions_per_job"],
        f"simulated in {ours['sim_seconds']:.1f} CPU s (<= {TARGETS['sim_seconds']:g}"
        f"{', full trace' if not args.quick else ', quick slice'})": ours["sim_seconds"] <= TARGETS["sim_seconds"],
    }
    print()
    for text, ok in checks.items():
        print(f"  {'met   ' if ok else 'missed'} {text}")
    missed = [text for text, ok in checks.items() if not ok]
    print(f"target {OURS} vs {BASELINE}: {'MET' if not missed else 'MISSED'}"
          + (f" ({len(missed)} of {len(checks)} missed)" if missed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
