"""Jinja2 manifest templates -> Python dicts.

Safety model: templates under ``templates/`` are trusted source; user values only ever
arrive as render variables (data) and must be emitted through ``| tojson``. The
``finalize`` hook enforces that: any ``{{ expr }}`` whose result did not come out of
``tojson`` aborts the render, so a forgotten filter fails loudly instead of letting a value
with ``: `` or a newline rewrite the YAML structure. ``tojson`` produces a JSON scalar /
flow collection, which YAML parses back to exactly the same data.
"""
from __future__ import annotations

import json
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2
import yaml
from jinja2.sandbox import SandboxedEnvironment

REPO_ROOT = Path(__file__).resolve().parents[2]
TEMPLATES_DIR = Path(os.environ.get("MYAPP_TEMPLATES_DIR", REPO_ROOT / "templates"))
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available: ~10x faster

# Characters YAML would not keep verbatim inside a double-quoted scalar: C0/C1 controls,
# DEL, the Unicode line/paragraph separators (folded as line breaks), BOM and non-characters.
_YAML_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]")


class JsonText(str):
    """Marker type: text produced by ``tojson`` (safe to place in a template)."""


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def _not_json(value: Any) -> Any:
    if isinstance(value, jinja2.Undefined):
        str(value)  # StrictUndefined raises UndefinedError naming the missing variable
    raise TypeError(f"{type(value).__name__} is not JSON data")


def tojson(value: Any) -> JsonText:
    """JSON for ``value`` that YAML parses back unchanged (non-ASCII kept as UTF-8)."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(", ", ": "), default=_not_json)
    return JsonText(_YAML_UNSAFE.sub(_escape, text))


def _finalize(value: Any) -> Any:
    if isinstance(value, JsonText):
        return value
    raise jinja2.TemplateError(f"template output {value!r} must go through '| tojson'")


def make_environment(sandboxed: bool = True) -> jinja2.Environment:
    """The manifest Jinja environment. ``sandboxed=False`` exists for the benchmark baseline."""
    cls = SandboxedEnvironment if sandboxed else jinja2.Environment
    env = cls(
        loader=jinja2.FileSystemLoader(str(TEMPLATES_DIR)),
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # output is YAML/JSON, not HTML; tojson does the quoting
        finalize=_finalize if sandboxed else None,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        auto_reload=False,
    )
    env.filters["tojson"] = tojson
    return env


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    return make_environment()


def render_text(template_name: str, data: dict[str, Any]) -> str:
    return environment().get_template(template_name).render(data)


def render_object(template_name: str, data: dict[str, Any]) -> dict[str, Any]:
    """Render one manifest template and parse it into a dict."""
    text = render_text(template_name, data)
    obj = yaml.load(text, Loader=_Loader)
    if not isinstance(obj, dict):
        raise jinja2.TemplateError(f"template {template_name} did not produce a mapping")
    return obj
