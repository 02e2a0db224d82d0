"""The job-template catalog: one folder per template under ``job-templates/``.

Each folder holds ``template.yaml`` (metadata, image, command, typed arguments, resources,
env), a README.md, the entry code and the Dockerfile of the image. ``load_catalog`` reads
and validates every folder and returns plain dicts whose keys map 1:1 onto the SQL
JobTemplate columns (plus ``path``). Any malformed folder raises CatalogError naming the
folder and the field.
"""
from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from myapp.outputs.checkpoints import GRACE_KEY, check_grace
from myapp.outputs.checkpoints import SWITCH as CHECKPOINT_SWITCH
from myapp.outputs.checkpoints import SWITCH_ARG as CHECKPOINT_SWITCH_ARG
from myapp.outputs.declarations import OUTPUTS_KEY, OutputError, check_declaration
from myapp.rendering.args import SchemaError, check_property
from myapp.rendering.errors import CatalogError
from myapp.rendering.kinds import KINDS
from myapp.rendering.kinds.training import ELASTIC_KEY, check_elastic
from myapp.rendering.names import is_dns1123_label
from myapp.rendering.pod import SECRET_REF
from myapp.rendering.policy import SECRET_LIKE
from myapp.rendering.quantity import RESOURCE_KEYS, format_cpu, format_memory, parse_quantity

# Every template's image builds with the source tree's root as its context
# (`docker build -f job-templates/<name>/Dockerfile .`): its Dockerfile copies its own files from
# job-templates/<name>/ and, where its jobs import it, the job SDK from myapp/, the one copy the platform runs.
SOURCE_ROOT = Path(__file__).resolve().parents[2]
CATALOG_FOLDER = "job-templates"
JOB_SDK = ("myapp/__init__.py", "myapp/client.py", "myapp/checkpoint.py")  # standard library only
CATALOG_ROOT = Path(os.environ.get("MYAPP_CATALOG_ROOT") or SOURCE_ROOT / CATALOG_FOLDER)
TEMPLATE_FILE = "template.yaml"
REQUIRED_FILES = ("README.md", "Dockerfile")
FIELDS = ("name", "version", "description", "category", "kind", "image", "command", "args", "outputs", "resources",
          "env", "checkpoints", "grace_period", "elastic")
OPTIONAL_FIELDS = frozenset({"args", "outputs", "env", "checkpoints", "grace_period", "elastic"})
VERSION = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?")
CATEGORY = re.compile(r"[a-z][a-z0-9-]{0,30}")
IMAGE = re.compile(r"[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*"
                   r"(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?")
ARG_NAME = re.compile(r"[a-z][a-z0-9_]{0,62}")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def catalog_root() -> Path:
    """``MYAPP_CATALOG_ROOT`` if set (read at call time), else the repo's job-templates/."""
    return Path(os.environ.get("MYAPP_CATALOG_ROOT") or CATALOG_ROOT)


def load_catalog(root: Path | None = None) -> list[dict[str, Any]]:
    """Read and validate every template folder under ``root``; sorted by name."""
    root = Path(root) if root is not None else catalog_root()
    if not root.is_dir():
        raise CatalogError(str(root), "<root>", "catalog folder does not exist")
    folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))
    return [load_template(folder) for folder in folders]


def get_template(name: str, root: Path | None = None) -> dict[str, Any]:
    for template in load_catalog(root):
        if template["name"] == name:
            return template
    raise LookupError(f"no job template named {name!r} in {root or catalog_root()}")


def load_template(folder: Path) -> dict[str, Any]:
    folder = Path(folder)
    fail = _failer(folder.name)
    path = folder / TEMPLATE_FILE
    if not path.is_file():
        raise fail(TEMPLATE_FILE, "file is missing")
    for required in REQUIRED_FILES:
        if not (folder / required).is_file():
            raise fail(required, "file is missing")
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise fail(TEMPLATE_FILE, f"is not valid YAML: {exc}") from None
    if not isinstance(raw, dict):
        raise fail(TEMPLATE_FILE, "must be a mapping")
    unknown = sorted(set(raw) - set(FIELDS))
    if unknown:
        raise fail(unknown[0], f"unknown field (allowed: {', '.join(FIELDS)})")
    missing = [f for f in FIELDS if f not in raw and f not in OPTIONAL_FIELDS]
    if missing:
        raise fail(missing[0], "is required")

    for key, pattern in (("name", None), ("version", VERSION), ("category", CATEGORY), ("image", IMAGE)):
        _string(raw, key, fail, pattern)
    _string(raw, "description", fail)
    if not is_dns1123_label(raw["name"]) or raw["name"] != folder.name:
        raise fail("name", f"must be a DNS-1123 label equal to the folder name {folder.name!r}")
    kind = raw["kind"]
    if kind not in KINDS:
        raise fail("kind", f"unknown kind {kind!r} (known: {', '.join(sorted(KINDS))})")
    command = raw["command"]
    if not isinstance(command, list) or not command or not all(isinstance(c, str) and c for c in command):
        raise fail("command", "must be a non-empty list of non-empty strings")
    args_schema = _args_schema(raw.get("args") or {}, kind, fail)
    try:  # the outputs a task of this template writes, kept in its schema (myapp/outputs/declarations.py)
        declared = check_declaration(raw.get("outputs"))
    except OutputError as exc:
        raise fail(exc.field, exc.reason) from None
    if declared:
        args_schema[OUTPUTS_KEY] = declared
    default_resources, max_resources = template_resources(raw["resources"], fail)
    # The job saves its progress and resumes from it when started again: preempting it loses little,
    # so admission stops such jobs first (myapp/admission/gate.py).
    checkpoints = raw.get("checkpoints", False)
    if not isinstance(checkpoints, bool):
        raise fail("checkpoints", f"must be true or false, got {checkpoints!r}")
    if checkpoints:  # a task turns it off with checkpoint: false (myapp/outputs/checkpoints.py)
        switch = args_schema["properties"].setdefault(CHECKPOINT_SWITCH_ARG, dict(CHECKPOINT_SWITCH))
        if switch.get("type") != "boolean":
            raise fail(f"args.{CHECKPOINT_SWITCH_ARG}", "is the checkpoint switch of a template that checkpoints: "
                                                        "a boolean")
    if "grace_period" in raw:  # SIGTERM -> grace -> SIGKILL: the time a job has to save on a stop
        try:
            args_schema[GRACE_KEY] = check_grace(raw["grace_period"])
        except ValueError as exc:
            raise fail("grace_period", str(exc)) from None
    if "elastic" in raw:  # torchrun with a min:max rendezvous (myapp/rendering/kinds/training.py)
        try:
            args_schema[ELASTIC_KEY] = check_elastic(raw["elastic"], kind)
        except ValueError as exc:
            raise fail("elastic", str(exc)) from None
    return {
        "name": raw["name"],
        "version": raw["version"],
        "description": raw["description"].strip(),
        "category": raw["category"],
        "kind": kind,
        "image": raw["image"],
        "command": list(command),
        "args_schema": args_schema,
        "default_resources": default_resources,
        "max_resources": max_resources,
        "env": _env(raw.get("env") or {}, fail),
        "checkpoints": checkpoints,
        "path": str(folder),
    }


def _failer(folder: str):
    def fail(field: str, reason: str) -> CatalogError:
        return CatalogError(folder, field, reason)
    return fail


def _string(raw: Mapping[str, Any], key: str, fail: Any, pattern: re.Pattern[str] | None = None) -> None:
    value = raw[key]
    if not isinstance(value, str) or not value.strip():
        raise fail(key, f"must be a non-empty string (quote it in YAML), got {value!r}")
    if pattern is not None and not pattern.fullmatch(value):
        raise fail(key, f"{value!r} does not match {pattern.pattern!r}")


def _args_schema(args: Any, kind: str, fail: Any) -> dict[str, Any]:
    """template.yaml ``args`` (name -> property, ``required: true`` per argument) ->
    JSON-Schema-like object schema."""
    if not isinstance(args, dict):
        raise fail("args", "must be a mapping of argument name -> schema")
    properties, required = {}, []
    for name, prop in args.items():
        if not isinstance(name, str) or not ARG_NAME.fullmatch(name):
            raise fail(f"args.{name}", "argument names must match [a-z][a-z0-9_]*")
        if not isinstance(prop, dict):
            raise fail(f"args.{name}", "must be a mapping")
        prop = dict(prop)
        is_required = prop.pop("required", False)
        if not isinstance(is_required, bool):
            raise fail(f"args.{name}.required", "must be true or false")
        try:
            check_property(name, prop)
        except SchemaError as exc:
            raise fail(f"args.{exc.field}", exc.reason) from None
        if is_required:
            required.append(name)
        properties[name] = prop
    spec = KINDS[kind]
    for name, wanted in {**spec.required_args, **spec.optional_args}.items():
        if name not in properties:
            if name in spec.required_args:
                raise fail(f"args.{name}", f"kind {kind!r} needs a {wanted} argument {name!r}")
            continue
        if properties[name]["type"] != wanted:
            raise fail(f"args.{name}.type", f"kind {kind!r} reads {name!r} as {wanted}")
        if wanted == "string" and not ({"pattern", "enum"} & set(properties[name])):
            # These strings become object names / labels / image refs: constrain them.
            raise fail(f"args.{name}.pattern", f"kind {kind!r} uses {name!r} in manifests: a pattern is required")
        if name in spec.required_args and "default" not in properties[name] and name not in required:
            raise fail(f"args.{name}.default", "needs a default or required: true")
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def template_resources(resources: Any, fail: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """A template's default and maximum, both with cpu and memory, default within max (normalised)."""
    if not isinstance(resources, dict) or set(resources) != {"default", "max"}:
        raise fail("resources", "must have exactly the keys 'default' and 'max'")
    out = []
    for section in ("default", "max"):
        given = resources[section]
        if not isinstance(given, dict):
            raise fail(f"resources.{section}", "must be a mapping of cpu/memory/gpu")
        for key in sorted(set(given) - set(RESOURCE_KEYS)):
            raise fail(f"resources.{section}.{key}", f"unknown resource (allowed: {', '.join(RESOURCE_KEYS)})")
        normal: dict[str, Any] = {}
        for key in RESOURCE_KEYS:
            if key not in given:
                if key == "gpu":
                    normal["gpu"] = 0
                    continue
                raise fail(f"resources.{section}.{key}", "is required")
            try:
                amount = parse_quantity(given[key])
                if key == "gpu" and (amount != int(amount) or amount < 0):
                    raise ValueError("gpu must be a whole number >= 0")
                if key != "gpu" and amount <= 0:
                    raise ValueError(f"{key} must be > 0")
                normal[key] = (int(amount) if key == "gpu" else given[key] if isinstance(given[key], str)
                               else format_cpu(amount) if key == "cpu" else format_memory(amount))
            except ValueError as exc:
                raise fail(f"resources.{section}.{key}", str(exc)) from None
        out.append(normal)
    default, maximum = out
    for key in RESOURCE_KEYS:
        if parse_quantity(default[key]) > parse_quantity(maximum[key]):
            raise fail(f"resources.default.{key}", f"{default[key]!r} exceeds resources.max.{key} {maximum[key]!r}")
    return default, maximum


def _env(env: Any, fail: Any) -> dict[str, str]:
    if not isinstance(env, dict):
        raise fail("env", "must be a mapping of NAME -> string")
    for name, value in env.items():
        if not isinstance(name, str) or not ENV_NAME.fullmatch(name):
            raise fail(f"env.{name}", "is not a valid environment variable name")
        if name.startswith("MYAPP_"):
            raise fail(f"env.{name}", "MYAPP_* variables are reserved for the platform's env contract")
        if not isinstance(value, str):
            raise fail(f"env.{name}", f"must be a string (quote it in YAML), got {value!r}")
        if SECRET_LIKE.search(name) and not SECRET_REF.fullmatch(value):
            raise fail(f"env.{name}", "looks like a secret: use 'secret://<secret-name>/<key>'")
        if value.startswith("secret://") and not SECRET_REF.fullmatch(value):
            raise fail(f"env.{name}", "secret reference must be 'secret://<secret-name>/<key>'")
    return dict(env)
