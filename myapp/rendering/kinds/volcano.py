"""``volcanojob``: N identical pods as a batch.volcano.sh Job (Volcano gangs them natively)."""
from __future__ import annotations

from ..engine import render_object
from .base import Build, Kind


def build(b: Build) -> list[dict]:
    replicas = b.args["replicas"]
    return [render_object("volcano-job.yaml.j2", {
        "name": b.name,
        # Gang: start all pods or none. Otherwise start as soon as one fits.
        "min_available": replicas if b.gang else 1,
        "queue": b.queue,
        "max_retry": 0,  # the platform retries with a new attempt
        "replicas": replicas,
        "image": b.image,
        "command": b.command,
        "args": b.cli_args,
        "resources": b.resources.requirements(),
    })]


KIND = Kind("volcanojob", build, required_args={"replicas": "integer"}, gang="native")
