"""Manifest rendering: job templates + task arguments + context -> Kubernetes manifests.

Pure: no network, no database, deterministic. See docs/rendering.md.
"""
from .args import validate_args
from .context import RenderContext, ResourceGroup
from .errors import ArgumentError, CatalogError, ContextError, ManifestError, RenderError
from .render import render
from .validate import validate_manifest, validate_manifests

__all__ = [
    "ArgumentError", "CatalogError", "ContextError", "ManifestError", "RenderContext", "RenderError",
    "ResourceGroup", "render", "validate_args", "validate_manifest", "validate_manifests",
]
