"""The double's storage: objects, a global resourceVersion, the event history watches read,
label selectors, JSON merge patch and strict validation. No HTTP in here."""
from __future__ import annotations

import copy
import re
import threading
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from myapp.rendering import semantics
from myapp.rendering.schemas import (
    builtin_validator,
    crd_validator,
    object_meta_validator,
)

from .registry import ResourceType

Key = tuple[str, str, str, str]  # group, plural, namespace ("" if cluster-scoped), name


def now_rfc3339() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class ApiError(Exception):
    """Becomes a metav1.Status response body."""

    def __init__(self, code: int, reason: str, message: str, details: dict[str, Any] | None = None,
                 headers: dict[str, str] | None = None):
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message
        self.details = details or {}
        self.headers = headers or {}

    def status(self) -> dict[str, Any]:
        body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": self.message, "reason": self.reason, "code": self.code}
        if self.details:
            body["details"] = self.details
        return body


def not_found(rtype: ResourceType, name: str) -> ApiError:
    return ApiError(404, "NotFound", f'{rtype.qualified} "{name}" not found',
                    {"name": name, "group": rtype.group, "kind": rtype.plural})


# --- label selectors ---------------------------------------------------------------------

_SET_TERM = re.compile(r"^\s*([^\s!=]+)\s+(in|notin)\s+\(([^)]*)\)\s*$")


def _split_terms(selector: str) -> list[str]:
    terms, depth, current = [], 0, ""
    for char in selector:
        depth += char == "("
        depth -= char == ")"
        if char == "," and depth == 0:
            terms.append(current)
            current = ""
        else:
            current += char
    terms.append(current)
    return [t.strip() for t in terms if t.strip()]


def label_matcher(selector: str | None):
    """labelSelector syntax: a=b, a==b, a!=b, a, !a, a in (x,y), a notin (x,y)."""
    checks = []
    for term in _split_terms(selector or ""):
        match = _SET_TERM.match(term)
        if match:
            key, op, values = match.group(1), match.group(2), {v.strip() for v in match.group(3).split(",")}
            if op == "in":
                checks.append(lambda labels, k=key, vs=values: labels.get(k) in vs)
            else:
                checks.append(lambda labels, k=key, vs=values: labels.get(k) not in vs)
        elif "!=" in term:
            key, value = (p.strip() for p in term.split("!=", 1))
            checks.append(lambda labels, k=key, v=value: labels.get(k) != v)
        elif "=" in term:
            key, value = (p.strip() for p in re.split(r"==?", term, maxsplit=1))
            checks.append(lambda labels, k=key, v=value: labels.get(k) == v)
        elif term.startswith("!"):
            absent = term[1:].strip()
            checks.append(lambda labels, k=absent: k not in labels)
        else:
            checks.append(lambda labels, k=term: k in labels)
    return lambda labels: all(check(labels or {}) for check in checks)


def field_matcher(selector: str | None):
    """fieldSelector: dotted paths with = / == / != (metadata.name, status.phase, ...)."""
    checks = []
    for term in _split_terms(selector or ""):
        negate = "!=" in term
        path, value = (p.strip() for p in re.split(r"!=|==?", term, maxsplit=1))
        parts = path.split(".")

        def get(obj, parts=parts):
            for part in parts:
                obj = obj.get(part) if isinstance(obj, dict) else None
            return "" if obj is None else str(obj)
        checks.append(lambda o, g=get, v=value, n=negate: (g(o) != v) if n else (g(o) == v))
    return lambda obj: all(check(obj) for check in checks)


# --- patches -----------------------------------------------------------------------------

def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch (strategic merge is treated the same way by the double)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


# --- validation --------------------------------------------------------------------------

def _path(parts: Iterable[Any]) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def validation_causes(rtype: ResourceType, api_version: str, obj: dict[str, Any]) -> list[dict[str, str]]:
    """Strict schema (unknown fields rejected) plus API-server semantics, as Status causes."""
    errors: list[tuple[str, str]] = []
    if rtype.custom:
        checks = [(crd_validator(api_version, rtype.kind), obj, []),
                  (object_meta_validator(), obj.get("metadata"), ["metadata"])]
    else:
        validator = builtin_validator(api_version, rtype.kind)
        checks = [(validator, obj, [])] if validator is not None else []
    for validator, instance, prefix in checks:
        for error in validator.iter_errors(instance):
            errors.append((_path([*prefix, *error.absolute_path]), error.message))
    if not errors:  # semantics assume a structurally valid object
        problems = semantics.object_names(obj) if rtype.custom else semantics.check(obj)
        errors.extend(problems)
    return [{"reason": "FieldValueInvalid", "field": field, "message": message}
            for field, message in sorted(set(errors))]


# --- the store ---------------------------------------------------------------------------

@dataclass
class Event:
    rv: int
    type: str  # ADDED / MODIFIED / DELETED
    key: Key
    obj: dict[str, Any]


class Store:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)  # notified on every write / log append
        self.objects: dict[Key, dict[str, Any]] = {}
        self.events: list[Event] = []
        self.rv = 0
        self.compacted_rv = 0  # watches from an older resourceVersion get 410 Gone (compact())

    def compact(self) -> int:
        """Forget the event history up to now, as etcd's compaction does: a watch resuming from an
        older resourceVersion is answered 410 Gone and must list again. Returns the compacted version."""
        with self.lock:
            self.events.clear()
            self.compacted_rv = self.rv
            return self.rv

    def _bump(self, event_type: str, key: Key, obj: dict[str, Any]) -> None:
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)
        self.events.append(Event(self.rv, event_type, key, copy.deepcopy(obj)))
        self.changed.notify_all()

    @staticmethod
    def key(rtype: ResourceType, namespace: str, name: str) -> Key:
        return rtype.group, rtype.plural, namespace if rtype.namespaced else "", name

    def get(self, rtype: ResourceType, namespace: str, name: str) -> dict[str, Any]:
        with self.lock:
            obj = self.objects.get(self.key(rtype, namespace, name))
            if obj is None:
                raise not_found(rtype, name)
            return copy.deepcopy(obj)

    def list(self, rtype: ResourceType, namespace: str | None, label_selector: str | None = None,
             field_selector: str | None = None) -> list[dict[str, Any]]:
        labels_ok, fields_ok = label_matcher(label_selector), field_matcher(field_selector)
        with self.lock:
            return [copy.deepcopy(obj) for (group, plural, ns, _), obj in sorted(self.objects.items())
                    if (group, plural) == (rtype.group, rtype.plural) and namespace in (None, ns)
                    and labels_ok(obj["metadata"].get("labels")) and fields_ok(obj)]

    def create(self, rtype: ResourceType, namespace: str, obj: dict[str, Any], *, dry_run: bool = False,
               keep_status: bool = False) -> dict[str, Any]:
        obj = copy.deepcopy(obj)
        meta = obj.setdefault("metadata", {})
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = meta["generateName"] + uuid.uuid4().hex[:5]
        name = meta.get("name")
        if not name:
            raise ApiError(422, "Invalid", f"{rtype.kind} is invalid: metadata.name: Required value",
                           {"kind": rtype.plural, "causes": [{"reason": "FieldValueRequired",
                                                               "field": "metadata.name", "message": "Required value"}]})
        if rtype.namespaced:
            meta["namespace"] = namespace
        with self.lock:
            key = self.key(rtype, namespace, name)
            if key in self.objects:
                raise ApiError(409, "AlreadyExists", f'{rtype.qualified} "{name}" already exists',
                               {"name": name, "group": rtype.group, "kind": rtype.plural})
            if rtype.status_subresource and not keep_status:
                obj.pop("status", None)
            meta.update(uid=str(uuid.uuid4()), creationTimestamp=now_rfc3339(), generation=1)
            if dry_run:
                meta["resourceVersion"] = str(self.rv)
                return obj
            self.objects[key] = obj
            self._bump("ADDED", key, obj)
            return copy.deepcopy(obj)

    def replace(self, rtype: ResourceType, namespace: str, name: str, obj: dict[str, Any], *,
                subresource: str = "", dry_run: bool = False) -> dict[str, Any]:
        """PUT: the object becomes `obj` (nested keys it lacks are gone), the server's metadata kept; a
        resourceVersion other than the stored one is a 409 Conflict (optimistic concurrency)."""
        with self.lock:
            key = self.key(rtype, namespace, name)
            current = self.objects.get(key)
            if current is None:
                raise not_found(rtype, name)
            asked = (obj.get("metadata") or {}).get("resourceVersion")
            if asked is not None and asked != current["metadata"].get("resourceVersion"):
                raise ApiError(409, "Conflict", f'Operation cannot be fulfilled on {rtype.qualified} "{name}": the '
                                                "object has been modified; please apply your changes to the latest "
                                                "version and try again", {"name": name, "kind": rtype.plural})
            if subresource == "status":
                updated = {**copy.deepcopy(current), "status": copy.deepcopy(obj.get("status"))}
            else:
                updated = copy.deepcopy(obj)
                updated["metadata"] = {**(updated.get("metadata") or {}), **{
                    k: current["metadata"][k] for k in ("name", "namespace", "uid", "creationTimestamp",
                                                        "resourceVersion", "generation") if k in current["metadata"]}}
                if rtype.status_subresource:
                    updated.pop("status", None)
                    if "status" in current:
                        updated["status"] = copy.deepcopy(current["status"])
            return self._store_update(key, current, updated, dry_run)

    def patch(self, rtype: ResourceType, namespace: str, name: str, patch: dict[str, Any], *,
              subresource: str = "", dry_run: bool = False) -> dict[str, Any]:
        with self.lock:
            key = self.key(rtype, namespace, name)
            current = self.objects.get(key)
            if current is None:
                raise not_found(rtype, name)
            if subresource == "status":
                patch = {"status": patch.get("status")} if "status" in patch else {}
            elif rtype.status_subresource:
                patch = {k: v for k, v in patch.items() if k != "status"}
            meta_patch = dict(patch.get("metadata") or {})
            for immutable in ("name", "namespace", "uid", "creationTimestamp", "resourceVersion", "generation"):
                meta_patch.pop(immutable, None)
            if "metadata" in patch:
                patch = {**patch, "metadata": meta_patch}
            return self._store_update(key, current, merge_patch(current, patch), dry_run)

    def _store_update(self, key: Any, current: dict[str, Any], updated: dict[str, Any],
                      dry_run: bool) -> dict[str, Any]:
        """The end of a replace or patch (lock held): a changed spec bumps the generation; a dry run
        answers without storing; a real change is stored and watched as MODIFIED."""
        if updated.get("spec") != current.get("spec"):
            updated["metadata"]["generation"] = current["metadata"].get("generation", 1) + 1
        if dry_run:
            return updated
        if updated != current:
            self.objects[key] = updated
            self._bump("MODIFIED", key, updated)
        return copy.deepcopy(updated)

    def replace_field(self, rtype: ResourceType, namespace: str, name: str, field: str, value: Any) -> dict[str, Any]:
        """Replace one top-level field wholesale (a controller writing status)."""
        with self.lock:
            key = self.key(rtype, namespace, name)
            if key not in self.objects:
                raise not_found(rtype, name)
            obj = self.objects[key]
            obj[field] = value
            self._bump("MODIFIED", key, obj)
            return copy.deepcopy(obj)

    def delete(self, rtype: ResourceType, namespace: str, name: str, *, dry_run: bool = False) -> dict[str, Any]:
        with self.lock:
            key = self.key(rtype, namespace, name)
            obj = self.objects.get(key)
            if obj is None:
                raise not_found(rtype, name)
            if not dry_run:
                del self.objects[key]
                self._bump("DELETED", key, obj)
            return copy.deepcopy(obj)

    def dependents(self, uid: str) -> list[Key]:
        """Objects whose ownerReferences name ``uid`` (the garbage collector's view)."""
        with self.lock:
            return [key for key, obj in self.objects.items()
                    if any(ref.get("uid") == uid for ref in obj["metadata"].get("ownerReferences") or [])]
