"""``job``: the template's command run once as a batch/v1 Job (python, model-register)."""
from __future__ import annotations

from ..engine import render_object
from .base import Build, Kind


def build(b: Build) -> list[dict]:
    return [render_object("job.yaml.j2", {
        "name": b.name,
        "backoff_limit": b.args.get("backoff_limit", 0),
        "active_deadline_seconds": b.args.get("timeout_seconds", 0),
        "image": b.image,
        "command": b.command,
        "args": b.cli_args,
        "resources": b.resources.requirements(),
    })]


KIND = Kind("job", build, optional_args={"backoff_limit": "integer", "timeout_seconds": "integer"})
