"""Registry of workload kinds: template.yaml ``kind`` -> builder."""
from __future__ import annotations

from . import imagebuild, job, notebook, service, serving, training, volcano
from .base import Build, Kind

KINDS: dict[str, Kind] = {kind.name: kind for kind in (
    job.KIND, imagebuild.KIND, training.PYTORCH, training.TENSORFLOW, training.XGBOOST,
    training.MPI, volcano.KIND, service.KIND, notebook.KIND,
    serving.MODEL_SERVER, serving.ROUTER, serving.TRAFFIC, serving.KSERVE,
)}

__all__ = ["KINDS", "Build", "Kind"]
