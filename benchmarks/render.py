"""Rendering throughput on one core: render + strict validation vs. plain Jinja.

    .venv/bin/python benchmarks/render.py [--iterations N] [--template NAME ...]
    .venv/bin/python benchmarks/render.py --quick     # 20 renders per template, a few seconds

"validated" = myapp.rendering.render(): sandboxed Jinja, YAML parse, policy post-processing,
strict schema + webhook + policy validation of every manifest.
"plain"     = the same template files rendered to text with a plain jinja2.Environment
              (no sandbox, no parsing, no validation) from the same data, captured from
              the real render.
Both run in this single process, one after the other; figures are manifests per second.
Exit status 1 means the benchmark broke (a render failed); a missed target is only reported.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from myapp.rendering import (
    RenderContext,
    ResourceGroup,
    engine,
    render,
)
from myapp.rendering.catalog import load_catalog
from tests.rendering.support import REQUIRED_ARGS

TARGET = 500  # validated manifests per second on one core
QUICK_ITERATIONS = 20
# The arguments the rendering tests keep valid (so they follow the templates); deploy-service with a
# previous version renders its canary split too.
ARGS = {**REQUIRED_ARGS, "deploy-service": {**REQUIRED_ARGS["deploy-service"], "previous_version": "v1"}}
CTX = RenderContext(
    project="vision", namespace="proj-vision", pipeline="digits-training", run_id=42, task="train",
    attempt=1, service_account="proj-vision-runner",
    resource_group=ResourceGroup(name="a100", node_selector={"pool": "a100"}, gpu_type="NVIDIA-A100",
                                 queue="vision", gang_scheduling=True),
)


def capture_calls(template: dict, args: dict) -> list[tuple[str, dict]]:
    """The (template file, data) pairs one real render passes to Jinja."""
    calls: list[tuple[str, dict]] = []
    original = engine.render_text

    def recording(name: str, data: dict) -> str:
        calls.append((name, data))
        return original(name, data)

    engine.render_text = recording
    try:
        render(template, args, CTX, validate=False)
    finally:
        engine.render_text = original
    return calls


def validated(template: dict, args: dict) -> int:
    return len(render(template, args, CTX))


def render_only(template: dict, args: dict) -> int:
    return len(render(template, args, CTX, validate=False))


def plain(plain_templates: list) -> int:
    for jinja_template, data in plain_templates:
        jinja_template.render(data)
    return len(plain_templates)


def rate(fn, iterations: int) -> tuple[float, int]:
    fn()  # warm caches (compiled templates and validators)
    count = 0
    start = time.perf_counter()
    for _ in range(iterations):
        count += fn()
    return count / (time.perf_counter() - start), count // iterations


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=300, help="renders per template (default 300)")
    parser.add_argument("--template", action="append", help="only these templates")
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_ITERATIONS} renders per template")
    options = parser.parse_args()
    if options.quick:
        options.iterations = QUICK_ITERATIONS
    plain_env = engine.make_environment(sandboxed=False)
    templates = [t for t in load_catalog() if not options.template or t["name"] in options.template]
    if not templates:
        print(f"no template named {options.template}")
        return 1

    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cpus visible; "
          f"single process, {options.iterations} renders per template")
    print("figures are manifests/s (a render of one task yields 'per render' manifests; PodGroups count)")
    print(f"{'template':16} {'per render':>10} {'validated/s':>12} {'renders/s':>10} {'render-only/s':>14} "
          f"{'plain jinja/s':>14} {'plain/validated':>16}")
    totals = {"validated": [0.0, 0], "render": [0.0, 0], "plain": [0.0, 0]}
    for template in templates:
        args = ARGS.get(template["name"], {})
        plain_templates = [(plain_env.get_template(name), data) for name, data in capture_calls(template, args)]
        figures, counts = {}, {}
        for label, fn in (("validated", partial(validated, template, args)),
                          ("render", partial(render_only, template, args)),
                          ("plain", partial(plain, plain_templates))):
            per_second, per_render = rate(fn, options.iterations)
            figures[label], counts[label] = per_second, per_render
            totals[label][0] += per_render * options.iterations / per_second
            totals[label][1] += per_render * options.iterations
        if counts["validated"] != counts["render"]:  # validation must not add or drop manifests
            print(f"{template['name']}: {counts['validated']} manifests validated, {counts['render']} rendered")
            return 1
        print(f"{template['name']:16} {per_render:>10} {figures['validated']:>12.0f} "
              f"{figures['validated'] / per_render:>10.0f} {figures['render']:>14.0f} "
              f"{figures['plain']:>14.0f} {figures['plain'] / figures['validated']:>15.1f}x")
    overall = {label: count / seconds for label, (seconds, count) in totals.items()}
    print(f"{'ALL':16} {'':>10} {overall['validated']:>12.0f} {'':>10} {overall['render']:>14.0f} "
          f"{overall['plain']:>14.0f} {overall['plain'] / overall['validated']:>15.1f}x")
    verdict = "MET" if overall["validated"] >= TARGET else "MISSED"
    print(f"target validated manifests/s on one core >= {TARGET}: {verdict} ({overall['validated']:.0f}); "
          f"plain Jinja is {overall['plain'] / overall['validated']:.1f}x faster but checks nothing")
    return 0


if __name__ == "__main__":
    sys.exit(main())
