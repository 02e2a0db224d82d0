"""Registry of workload kinds: template.yaml ``kind`` -> builder."""
from __future__ import annotations

from . import imagebuild, job, notebook, service, serving, training, volcano
from .base import Build, Kind

KINDS: dict[str, Kind] = {kind.name: kind for kind in (
    job.KIND, imagebuild.KIND, training.PYTORCH, training.TENSORFLOW, training.XGBOOST,
    training.MPI, volcano.KIND, service.KIND, notebook.KIND,
    serving.MODEL_SERVER, serving.ROUTER, serving.TRAFFIC, serving.KSERVE,
)}


def pipeline_refusal(kind: str) -> str | None:
    """Why a pipeline task may not use a template of this kind (None: it may). A task runs to completion
    (its run waits for it): a notebook or a server never does, and a server belongs to an inference service."""
    if (refusal := service.pipeline_refusal(kind)) is not None:
        return refusal
    known = KINDS.get(kind)
    if known is None or not known.batch:
        return f"a template of kind {kind} does not run to completion, as a pipeline task must"
    return None


__all__ = ["KINDS", "Build", "Kind", "pipeline_refusal"]
