"""The local backend: rendered manifests run as processes on this machine (the embedded default).

``LocalBackend`` implements ``myapp.backends.base.Backend``; see docs/backends-local.md.
Imports are lazy so the per-job supervisor process (``python -m
myapp.backends.local.supervisor``) starts without loading the planner or the catalog.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .backend import LocalBackend
    from .gpu import GpuDevice, GpuPool, nvml_devices

__all__ = ["GpuDevice", "GpuPool", "LocalBackend", "nvml_devices"]


def __getattr__(name: str) -> Any:
    if name == "LocalBackend":
        from .backend import LocalBackend

        return LocalBackend
    if name in ("GpuDevice", "GpuPool", "nvml_devices"):
        from . import gpu

        return getattr(gpu, name)
    raise AttributeError(name)
