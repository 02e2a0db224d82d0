"""Helpers of the rendering tests (and of the Kubernetes double's): contexts, scenarios, the catalog."""
from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from myapp.rendering import RenderContext, ResourceGroup
from myapp.rendering.catalog import load_catalog

# Arguments a template cannot render without (no default).
REQUIRED_ARGS: dict[str, dict[str, Any]] = {
    "image-build": {"destination": "registry.example.com/vision/digits:1.0"},
    "model-register": {"model_name": "digits", "model_version": "3", "model_path": "s3://models/digits/model.pt"},
    "deploy-service": {"service_name": "digits", "version": "v2"},
    "serve-model": {"service_name": "digits", "model_name": "digits"},
    "notebook": {"name": "alice-notebook"},
}

PLAIN_CTX = RenderContext(project="vision", namespace="proj-vision", pipeline="digits-training", run_id=42,
                          task="train", attempt=1, service_account="proj-vision-runner")

GPU_GROUP = ResourceGroup(
    name="a100-pool",
    node_selector={"myapp.io/resource-group": "a100-pool"},
    tolerations=({"key": "myapp.io/dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},),
    gpu_type="NVIDIA-A100-SXM4-80GB",
    queue="vision-gpu",
    gang_scheduling=True,
)
GANG_CTX = RenderContext(project="vision", namespace="proj-vision", pipeline="digits-training", run_id=43,
                         task="train-distributed", attempt=2, service_account="proj-vision-runner",
                         resource_group=GPU_GROUP)

# Per-template non-default arguments for the second golden scenario.
GANG_ARGS: dict[str, dict[str, Any]] = {
    "python": {"script": "import os\nprint(os.environ['MYAPP_TASK'])", "timeout_seconds": 3600},
    "pytorch-ddp": {"workers": 3, "epochs": 5, "lr": 0.1},
    "tf-distributed": {"ps": 2, "workers": 3},
    "xgboost": {"workers": 0, "num_rounds": 10},
    "horovod-mpi": {"workers": 4, "slots_per_worker": 2},
    "volcano-job": {"replicas": 8, "c_min": 0.001},
    "image-build": {"packages": ["numpy==2.1.0", "scikit-learn>=1.5,<2"], "cache": True},
    "model-register": {"metrics": '{"accuracy": 0.97}', "dry_run": True},
    "deploy-service": {"previous_version": "v1", "canary_weight": 25, "min_replicas": 2, "max_replicas": 6},
    "serve-model": {"model_version": "3", "canary_weight": 30, "wait_seconds": 0},
    "notebook": {"volume_claim": "alice-home"},
}


@lru_cache(maxsize=1)
def catalog() -> dict[str, dict[str, Any]]:
    return {template["name"]: template for template in load_catalog()}


def scenarios() -> Iterator[tuple[str, str, dict[str, Any], RenderContext, dict[str, Any] | None]]:
    """(template, scenario, args, ctx, resources) for every golden file."""
    for name, template in sorted(catalog().items()):
        yield name, "default", dict(REQUIRED_ARGS.get(name, {})), PLAIN_CTX, None
        gpu = {"gpu": 1} if template["max_resources"]["gpu"] else None
        args = {**REQUIRED_ARGS.get(name, {}), **GANG_ARGS.get(name, {})}
        yield name, "gang-gpu", args, GANG_CTX, gpu


def paths(value: Any, prefix: str = "") -> set[str]:
    """Every key path / list index in a structure: its shape, independent of scalar values."""
    out = {prefix}
    if isinstance(value, dict):
        for key, sub in value.items():
            out |= paths(sub, f"{prefix}.{key}")
    elif isinstance(value, list):
        for index, sub in enumerate(value):
            out |= paths(sub, f"{prefix}[{index}]")
    return out


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, sub in value.items():
            yield key
            yield from strings(sub)
    elif isinstance(value, list):
        for sub in value:
            yield from strings(sub)
    elif isinstance(value, str):
        yield value


SCENARIOS_ALL = list(scenarios())
