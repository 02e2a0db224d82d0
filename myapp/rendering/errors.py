"""Exceptions raised by rendering. All are ValueErrors: they describe bad input, not bugs."""
from __future__ import annotations


class RenderError(ValueError):
    """Base class for every error rendering raises on purpose."""


class ArgumentError(RenderError):
    """A task argument (or a resource request) is invalid.

    ``field`` is the argument name (``resources.cpu`` for resources), ``reason`` says what is wrong.
    """

    def __init__(self, field: str, reason: str):
        self.field = field
        self.reason = reason
        super().__init__(f"argument {field!r}: {reason}")


class ContextError(RenderError):
    """The RenderContext is unusable (bad namespace, forbidden service account...)."""

    def __init__(self, field: str, reason: str):
        self.field = field
        self.reason = reason
        super().__init__(f"render context {field!r}: {reason}")


class ManifestError(RenderError):
    """A rendered manifest would be rejected by the API server or an operator webhook.

    ``obj`` is ``Kind/name``, ``path`` the dotted field path inside it.
    """

    def __init__(self, obj: str, path: str, reason: str):
        self.obj = obj
        self.path = path
        self.reason = reason
        super().__init__(f"{obj}: {path or '<root>'}: {reason}")


class CatalogError(ValueError):
    """A job template folder is malformed. Names the folder and the field."""

    def __init__(self, folder: str, field: str, reason: str):
        self.folder = folder
        self.field = field
        self.reason = reason
        super().__init__(f"job template {folder!r}: field {field!r}: {reason}")
