"""Our policy (sieve) beside the tiresias-las reference on the Philly-derived trace, in two scenarios
printed side by side: every job checkpoints (a preemption costs the 30 s restart, for both policies),
and no job does (a preemption loses the work since the start, at the default preemption bound).

    .venv/bin/python benchmarks/scheduler.py            # 15,264 jobs on 400 GPUs (50 nodes of 8); minutes
    .venv/bin/python benchmarks/scheduler.py --quick    # the first 1,000 jobs, a few seconds
    .venv/bin/python benchmarks/scheduler.py --scenario checkpoints --policies sieve,tiresias-las,gang-fifo
    .venv/bin/python benchmarks/scheduler.py --gpus 480 --max-preemptions 2   # one bound for both scenarios

Every policy replays the same trace through myapp.scheduler.simulate (one process, one core, one policy
after the other); figures are those of `myapp simulate --json`, with ours as a ratio of the reference
of the same scenario. The replay is checked from its event log: every job starts whole and ends exactly
once, no job ends sooner than its duration after its submission, and no job is preempted more often than
the bound (tiresias-las has none); a violation means the benchmark is broken (exit status 1). A missed
target is only reported. Beside them it prints the bounds no schedule can beat (`myapp.scheduler.bounds`:
even one knowing every duration, preempting for free and ignoring nodes).
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
from myapp.scheduler.policy import DEFAULT_MAX_PREEMPTIONS, OURS, POLICIES, REFERENCE
from myapp.scheduler.simulate import Event, simulate
from myapp.scheduler.trace import TraceJob, load

TRACE = Path(__file__).resolve().parent / "traces" / "philly-derived-jobs.csv"
QUICK_JOBS = 1000
CHECKPOINT_BOUND = 50  # ours, when every job checkpoints: a stop costs 30 s, not the run
REFERENCE_AVG_JCT_S = 458_210.0  # tiresias-las on the full trace at 400 GPUs, every job checkpointing
TARGETS = {  # the full trace at 400 GPUs
    "checkpoints": {"of_reference": 0.9, "avg_jct_h": 115.0, "preemptions_per_job": 3.0, "sim_seconds": 30.0,
                    "reference_agrees": 0.05},
    "none": {"avg_jct_h": 245.0},
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


def run_scenario(jobs: list[TraceJob], gpus: int, policies: list[str], bound: int,
                 checkpoints: bool) -> tuple[dict[str, dict], dict[str, float], list[str]]:
    """Each policy's figures, its utilization without lost runs, and what its event log shows broken."""
    if checkpoints:
        jobs = [dataclasses.replace(tj, job=dataclasses.replace(tj.job, checkpoints=True)) for tj in jobs]
    span = max(tj.job.submitted for tj in jobs) - min(tj.job.submitted for tj in jobs)
    results: dict[str, dict] = {}
    useful: dict[str, float] = {}
    broken: list[str] = []
    for policy in policies:
        log: list[Event] = []
        results[policy] = simulate(jobs, gpus, policy, max_preemptions=bound, log=log)
        useful[policy] = results[policy]["utilization"] - (lost_in_span(jobs, log) / (gpus * span) if span else 0)
        limit = len(log) if policy == REFERENCE else bound  # the reference has no bound
        broken += [f"{policy}: {p}" for p in problems(jobs, log, results[policy], limit)]
        print(f"  {policy}: simulated in {results[policy]['sim_seconds']:.1f} CPU s", flush=True)
    return results, useful, broken


def table(results: dict[str, dict], useful: dict[str, float], policies: list[str]) -> None:
    others = [p for p in policies if p != REFERENCE]
    print(f"{'field':<26}" + "".join(f"{p:>16}" for p in policies) + "".join(
        f"{p + ' / ' + REFERENCE:>28}" for p in others))
    ref = results[REFERENCE]
    for key in FIELDS:
        row = f"{key:<26}" + "".join(f"{show(key, results[p][key]):>16}" for p in policies)
        for p in others:
            row += f"{results[p][key] / ref[key] if ref[key] else float('nan'):>28.3f}"
        print(row)
    print(f"{'utilization / offered':<26}" + "".join(
        f"{results[p]['utilization'] / results[p]['offered_load']:>16.3f}" for p in policies))
    print(f"{'  without lost runs':<26}" + "".join(
        f"{useful[p] / results[p]['offered_load']:>16.3f}" for p in policies))


def checks(scenario: str, results: dict[str, dict], full: bool) -> dict[str, bool | None]:
    """What ours must reach in a scenario: True met, False missed, None (a figure of the full trace at
    400 GPUs, shown but not judged on another run)."""
    ours, ref = results[OURS], results[REFERENCE]
    hours = ours["avg_jct_s"] / 3600
    if scenario == "none":
        target = TARGETS["none"]
        return {f"average JCT {hours:,.1f} h (<= {target['avg_jct_h']:g} h, full trace)":
                hours <= target["avg_jct_h"] if full else None}
    target = TARGETS["checkpoints"]
    agree = ref["avg_jct_s"] / REFERENCE_AVG_JCT_S - 1
    return {
        f"{REFERENCE} {ref['avg_jct_s'] / 3600:,.1f} h agrees with its specification's "
        f"{REFERENCE_AVG_JCT_S / 3600:.1f} h ({agree:+.1%}, within {target['reference_agrees']:.0%}, full trace)":
            abs(agree) <= target["reference_agrees"] if full else None,
        f"average JCT {ours['avg_jct_s'] / ref['avg_jct_s']:.3f}x {REFERENCE} (<= {target['of_reference']})":
            ours["avg_jct_s"] <= target["of_reference"] * ref["avg_jct_s"],
        f"average JCT {hours:,.1f} h (<= {target['avg_jct_h']:g} h, full trace)":
            hours <= target["avg_jct_h"] if full else None,
        f"{ours['preemptions_per_job']:.3f} preemptions per job (<= {target['preemptions_per_job']:g})":
            ours["preemptions_per_job"] <= target["preemptions_per_job"],
        f"partial-gang GPU-seconds {ours['partial_gang_seconds']:g} (= 0)": ours["partial_gang_seconds"] == 0,
        f"simulated in {ours['sim_seconds']:.1f} CPU s (<= {target['sim_seconds']:g}, full trace)":
            ours["sim_seconds"] <= target["sim_seconds"] if full else None,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help=f"the first {QUICK_JOBS} jobs only")
    parser.add_argument("--gpus", type=int, default=400)
    parser.add_argument("--trace", default=str(TRACE))
    parser.add_argument("--policies", default=f"{OURS},{REFERENCE}")
    parser.add_argument("--scenario", choices=("both", "checkpoints", "none"), default="both")
    parser.add_argument("--max-preemptions", type=int, default=None,
                        help=f"the bound in both scenarios (default {CHECKPOINT_BOUND} with checkpoints, "
                             f"{DEFAULT_MAX_PREEMPTIONS} without)")
    args = parser.parse_args()
    policies = args.policies.split(",")
    if OURS not in policies or REFERENCE not in policies or any(p not in POLICIES for p in policies):
        parser.error(f"--policies: from {', '.join(POLICIES)}, including {OURS} and {REFERENCE}")
    jobs = load(args.trace, args.gpus)
    full = not args.quick and args.gpus == 400 and Path(args.trace).resolve() == TRACE
    if args.quick:
        jobs = jobs[:QUICK_JOBS]
    scenarios = ["checkpoints", "none"] if args.scenario == "both" else [args.scenario]
    print(f"{len(jobs):,} jobs of {Path(args.trace).name} on {args.gpus} GPUs (nodes of 8); "
          f"python {platform.python_version()}")
    broken: list[str] = []
    verdicts: dict[str, bool | None] = {}
    for scenario in scenarios:
        ckpt = scenario == "checkpoints"
        bound = args.max_preemptions if args.max_preemptions is not None else (
            CHECKPOINT_BOUND if ckpt else DEFAULT_MAX_PREEMPTIONS)
        print(f"\n== {'every job checkpoints (a preemption costs the 30 s restart)' if ckpt else 'no job checkpoints'}"
              f"; ours preempts a job at most {bound} time(s), {REFERENCE} without bound")
        results, useful, wrong = run_scenario(jobs, args.gpus, policies, bound, ckpt)
        broken += [f"{scenario}: {w}" for w in wrong]
        table(results, useful, policies)
        for text, ok in checks(scenario, results, full).items():
            verdicts[f"{scenario}: {text}"] = ok
    floor, ceiling = jct_lower_bound(jobs, args.gpus), busy_upper_bound(jobs, args.gpus)
    print(f"\nbounds for any schedule (clairvoyant, free preemption, no nodes): average JCT >= {floor / 3600:,.1f} h;"
          f" utilization <= {ceiling:.3f}")
    if broken:
        print("\n".join(["", *broken]))
        print("target scheduler: BROKEN")
        return 1
    print()
    for text, ok in verdicts.items():
        print(f"  {'met   ' if ok else 'n/a   ' if ok is None else 'missed'} {text}")
    missed = [text for text, ok in verdicts.items() if ok is False]
    print(f"target {OURS} vs {REFERENCE}: {'MET' if not missed else 'MISSED'}"
          + (f" ({len(missed)} of {len(verdicts)} missed)" if missed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
