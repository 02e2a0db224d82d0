"""Execution backends: Kubernetes (scale-out) and local processes (the embedded default)."""
from .base import (  # noqa: F401
    DISRUPTIONS,
    EVICTED,
    NODE_LOST,
    REPLICA_LOST,
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
