"""MyApp ML platform. `myapp.app.create_app` builds the web app; `myapp.cli` is the command."""
from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from typing import Any

DEFERRED = "rfc3987_syntax"


def defer_iri_grammar() -> None:
    """jsonschema imports `rfc3987_syntax` (installed with the notebook extra) on import, for its "iri"
    formats, and that module builds its Lark grammar on import: 1.8 CPU s in every platform process and
    every `myapp` command, none of which checks an IRI. A stand-in takes its place until its checker is
    first called (or anything else of it is used), which imports the real module then."""
    spec = None if DEFERRED in sys.modules else importlib.util.find_spec(DEFERRED)
    if spec is None:
        return

    def real() -> types.ModuleType:
        if sys.modules.get(DEFERRED) is stand_in:
            sys.modules.pop(DEFERRED, None)
        return importlib.import_module(DEFERRED)

    class StandIn(types.ModuleType):
        def __getattr__(self, name: str) -> Any:
            if name.startswith("__"):  # what an import asks of a module (`from ... import` asks __path__)
                raise AttributeError(name)
            return getattr(real(), name)

    def is_valid_syntax(*args: Any, **kwargs: Any) -> Any:
        return real().is_valid_syntax(*args, **kwargs)

    stand_in = StandIn(DEFERRED)
    stand_in.__path__ = list(spec.submodule_search_locations or [])  # its submodules import as before
    stand_in.is_valid_syntax = is_valid_syntax  # type: ignore[attr-defined]
    sys.modules[DEFERRED] = stand_in


defer_iri_grammar()
