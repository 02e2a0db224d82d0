"""Prepare step of the image-build template: write the Dockerfile Kaniko will build.

Either the given Dockerfile verbatim, or ``FROM <base-image>`` plus one ``pip install`` of
the requested packages. Package specifiers are re-checked here (defence in depth) so no
shell syntax can reach the RUN line.
"""
from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from pathlib import Path

PACKAGE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9._,-]+\])?"
                     r"((==|>=|<=|~=|!=|<|>)[A-Za-z0-9.*+!_-]+)?(,(==|>=|<=|~=|!=|<|>)[A-Za-z0-9.*+!_-]+)*")


def dockerfile_for(base_image: str, packages: list[str]) -> str:
    bad = [p for p in packages if not PACKAGE.fullmatch(p)]
    if bad:
        raise ValueError(f"invalid package specifier(s): {bad}")
    lines = [f"FROM {base_image}"]
    if packages:
        lines.append("RUN pip install --no-cache-dir " + " ".join(shlex.quote(p) for p in packages))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--base-image", default="python:3.11-slim")
    parser.add_argument("--packages", type=json.loads, default=[], help="JSON list of pip specifiers")
    parser.add_argument("--dockerfile", default="", help="complete Dockerfile text")
    parser.add_argument("--output", default="/workspace/Dockerfile")
    args = parser.parse_args(argv)
    text = args.dockerfile if args.dockerfile.strip() else dockerfile_for(args.base_image, args.packages)
    output = Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text)
    print(f"wrote {output}:\n{text}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
