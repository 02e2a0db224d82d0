"""``imagebuild``: build an image with Kaniko and push it with crane, inside one batch/v1 Job.

Build and push are separate containers so the registry credentials never reach the build: Kaniko
runs the Dockerfile's RUN steps in its own container, where they could read any mounted file.
"""
from __future__ import annotations

from ..engine import render_object
from ..security import KANIKO_CAPABILITIES, KANIKO_IMAGE
from .base import Build, Kind

# Pinned releases. The non-debug executor image has no shell, so nothing but the executor (and the
# Dockerfile's RUN steps) runs in the build container; crane's image has no shell either.
PUSH_IMAGE = "gcr.io/go-containerregistry/crane:v0.20.3"
WORKSPACE = "/workspace"
DOCKERFILE = f"{WORKSPACE}/Dockerfile"
IMAGE_TAR = f"{WORKSPACE}/image.tar"
# Where the push container finds config.json (DOCKER_CONFIG); nothing else mounts the Secret.
DOCKER_CONFIG = "/etc/registry-auth"


def build(b: Build) -> list[dict]:
    executor_args = [
        "--context", b.args["context"],
        "--dockerfile", DOCKERFILE,
        # Names the image inside the tarball; --no-push: the build holds no credentials to push with.
        "--destination", b.args["destination"],
        "--no-push",
        "--tar-path", IMAGE_TAR,
        # The layer cache lives in the registry too: it works only where the build reaches it
        # without credentials (docs/rendering.md).
        "--cache", "true" if b.args["cache"] else "false",
    ]
    return [render_object("kaniko-job.yaml.j2", {
        "name": b.name,
        "image": b.image,
        "command": b.command,
        "prepare_args": [*b.cli_args, "--output", DOCKERFILE],
        "executor_image": KANIKO_IMAGE,
        "executor_args": executor_args,
        "executor_capabilities": list(KANIKO_CAPABILITIES),
        "push_image": PUSH_IMAGE,
        "push_args": ["push", IMAGE_TAR, b.args["destination"]],
        "docker_config": DOCKER_CONFIG,
        "registry_secret": b.args["registry_secret"],
        "resources": b.resources.requirements(with_gpu=False),
    })]


KIND = Kind("imagebuild", build, required_args={
    "destination": "string", "context": "string", "registry_secret": "string", "cache": "boolean",
})
