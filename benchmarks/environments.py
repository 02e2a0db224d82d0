"""Time to an environment rebuilt from the cache, against the first build of the same packages.

    .venv/bin/python benchmarks/environments.py [--packages six==1.17.0 attrs ...] [--repeat N]
    .venv/bin/python benchmarks/environments.py --quick     # six only, 3 repeats, ~10 s

Both through the worker's own path (myapp.images.drive.drive on a fresh SQLite platform in a temporary
MYAPP_HOME): a build row asked for, driven to `succeeded`, its image registered. The first build makes the
venv and runs pip in the job sandbox (it needs the package index); every further build asks for the same
packages in another order and spelling under another tag, and finds the environment made before.
"first" is the baseline measured in this run; "cached" is the median of the repeats.
Exit status 1 means the benchmark broke (a build failed); a missed target is only reported.
"""
from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TARGET_SECONDS = 2.0  # the target: an environment rebuilt from the cache in at most 2 s


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packages", nargs="+", default=["six==1.17.0", "attrs", "idna"])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--quick", action="store_true")
    options = parser.parse_args()
    if options.quick:
        options.packages, options.repeat = ["six==1.17.0"], 3

    home = Path(tempfile.mkdtemp(prefix="myapp-bench-env-"))
    try:
        return run(home, options)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def run(home: Path, options: argparse.Namespace) -> int:
    for name in ("DATABASE_URL", "REDIS_URL"):
        os.environ.pop(name, None)
    os.environ["MYAPP_HOME"] = str(home)

    from myapp.app import create_app
    from myapp.extensions import db
    from myapp.images.drive import drive
    from myapp.models import ImageBuild, Project
    from myapp.models.migrate import upgrade

    app = create_app({"TESTING": True})
    with app.app_context():
        upgrade()
        project = Project(name="bench", namespace="bench-env")
        db.session.add(project)
        db.session.commit()

        def build(tag: str, packages: list[str]) -> tuple[float, ImageBuild]:
            row = ImageBuild(project_id=project.id, repository="registry.local/bench/env", tag=tag, packages=packages)
            db.session.add(row)
            db.session.commit()
            started = time.perf_counter()
            state = drive(row.id)
            took = time.perf_counter() - started
            row = db.session.get(ImageBuild, row.id)
            if state != "succeeded":
                raise SystemExit(f"build {tag} {state}: {row.reason}")
            return took, row

        print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cpus visible; "
              f"packages: {' '.join(options.packages)}")
        first, row = build("first", options.packages)
        assert not row.cached
        shuffled = [p.upper() if i % 2 else p for i, p in enumerate(reversed(options.packages))]
        cached = []
        for i in range(options.repeat):
            took, again = build(f"cached-{i}", shuffled)
            if not again.cached or again.environment != row.environment:
                print(f"build cached-{i} did not come from the cache ({again.environment} vs {row.environment})")
                return 1
            cached.append(took)
    median = statistics.median(cached)
    print(f"first build (venv + pip, the baseline): {first:.2f} s")
    print(f"rebuilt from the cache: median {median:.3f} s, max {max(cached):.3f} s over {len(cached)} builds")
    print(f"ratio cached/first: {median / first:.3f}")
    verdict = "MET" if median <= TARGET_SECONDS else "MISSED"
    print(f"target environment rebuilt from the cache <= {TARGET_SECONDS:g} s: {verdict} ({median:.3f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
