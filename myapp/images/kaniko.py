"""The Kaniko Job of an image build on Kubernetes: pure rendering from plain data.

The ``image-build`` catalog template (templates/kaniko-job.yaml.j2) does the work: ``prepare`` writes the
Dockerfile, Kaniko builds it into a tarball without pushing, and ``push`` (crane) pushes the tarball
with the project's registry credentials. The Secret is mounted into ``push`` alone, which runs no user
code and starts after the build container has exited, so no RUN step of the Dockerfile can read it
(docs/images.md). The Job is named after the build, never after a pipeline task.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..rendering import RenderContext, render
from ..rendering import ResourceGroup as GroupSpec

# In the project's namespace: kubernetes.io/dockerconfigjson with push rights on the project's repositories.
REGISTRY_SECRET = "registry-credentials"


def render_build(template: Mapping[str, Any], *, project: str, namespace: str, service_account: str,
                 build_id: int, reference: str, dockerfile: str, group: GroupSpec | None = None,
                 registry_secret: str = REGISTRY_SECRET, pull_secrets: Mapping[str, str] | None = None
                 ) -> list[dict[str, Any]]:
    """The manifests of build ``build_id``: strict-valid, or RenderError naming what is wrong.
    pull_secrets: RenderContext.pull_secrets (for the Job's own images; the base image is Kaniko's to pull)."""
    ctx = RenderContext(project=project, namespace=namespace, run_id=f"build-{build_id}", task="image-build",
                        attempt=1, service_account=service_account, resource_group=group,
                        pull_secrets=dict(pull_secrets or {}))
    args = {"destination": reference, "dockerfile": dockerfile, "registry_secret": registry_secret, "cache": False}
    return render(template, args, ctx)
