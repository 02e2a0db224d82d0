"""``imagebuild``: build and push an image with Kaniko inside a batch/v1 Job."""
from __future__ import annotations

from ..engine import render_object
from .base import Build, Kind

# Pinned executor release; the non-debug image has no shell, so nothing but the
# executor can run in the build container.
KANIKO_IMAGE = "gcr.io/kaniko-project/executor:v1.23.2"
DOCKERFILE = "/workspace/Dockerfile"


def build(b: Build) -> list[dict]:
    executor_args = [
        "--context", b.args["context"],
        "--dockerfile", DOCKERFILE,
        "--destination", b.args["destination"],
        "--cache", "true" if b.args["cache"] else "false",
    ]
    return [render_object("kaniko-job.yaml.j2", {
        "name": b.name,
        "image": b.image,
        "command": b.command,
        "prepare_args": [*b.cli_args, "--output", DOCKERFILE],
        "executor_image": KANIKO_IMAGE,
        "executor_args": executor_args,
        "registry_secret": b.args["registry_secret"],
        "resources": b.resources.requirements(with_gpu=False),
    })]


KIND = Kind("imagebuild", build, required_args={
    "destination": "string", "context": "string", "registry_secret": "string", "cache": "boolean",
})
