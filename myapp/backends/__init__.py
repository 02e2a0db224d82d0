"""Execution backends: Kubernetes (scale-out) and local processes (the embedded default)."""
from .base import (  # noqa: F401
    Backend,
    BackendError,
    InvalidManifest,
    JobRef,
    JobState,
    LogArchive,
    LogLine,
    MetricSample,
    ObjectRef,
    PermanentBackendError,
    Status,
    UnsupportedKind,
)
