"""How the Kubernetes backend puts one object on the cluster, a mixin of KubernetesBackend: create, and on
409 adopt what is there (converging the kinds attempts share by name, CONVERGE_KINDS, to the submitted
spec with a merge patch); and a resource group's cluster-scoped Volcano Queue brought to the spec the
platform renders (read-modify-replace, other workers updating it at once). ``backend.py``'s submit
decides what to apply, in which order, and what the JobRef holds.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

import pydantic

from ...rendering.contract import PRIORITY_CLASS
from ..base import BackendError, InvalidManifest, ObjectRef, PermanentBackendError
from .resources import KubeApi, kind_of
from .retry import KubeApiError

# Objects other attempts may legitimately share by name (a stable Service, the traffic split of
# a canary): on 409 they are brought to the submitted spec with a merge patch, not just adopted.
CONVERGE_KINDS = frozenset({"Service", "VirtualService", "HorizontalPodAutoscaler", "ConfigMap", "InferenceService"})


def _ident(ref: ObjectRef) -> str:
    return f"{ref.kind}/{ref.name}"


def _covers(actual: Any, desired: Any) -> bool:
    """Does ``actual`` already contain ``desired`` (server-side defaults may add more)?"""
    if isinstance(desired, Mapping):
        return isinstance(actual, Mapping) and all(_covers(actual.get(k), v) for k, v in desired.items())
    if isinstance(desired, list):
        return (isinstance(actual, list) and len(actual) == len(desired)
                and all(_covers(a, d) for a, d in zip(actual, desired, strict=True)))
    return actual == desired


# The Queue spec keys the platform renders (templates/volcano-queue.yaml.j2): one it no longer renders is removed.
_OWNED_SPEC = frozenset({"weight", "reclaimable", "capability", "deserved"})
_SHARED_UPDATES = 3  # read-modify-replace rounds when other workers update the same Queue at once


class ObjectApply:
    """Creates, adopts and converges one object; brings a shared Queue to its spec."""

    api: KubeApi
    dry_run: bool
    _retry: Callable[[str, Callable[[], Any]], Any]

    def _apply_shared(self, obj: dict[str, Any]) -> None:
        """Create-or-update a cluster-scoped object: on 409, replace the spec keys the platform renders and
        its labels unless the stored object already has them (so a resubmit writes nothing); spec keys the
        platform does not render (set by hand, e.g. a parent queue) and the status stay."""
        meta = obj.get("metadata")
        if not isinstance(meta, Mapping) or not meta.get("name") or meta.get("namespace"):
            raise InvalidManifest(f"submit: {obj.get('kind')} is cluster-scoped: metadata.name and no namespace")
        api_version, kind, name = obj["apiVersion"], obj["kind"], meta["name"]
        what = f"{kind}/{name}"
        try:
            self._retry(f"create {what}", lambda: self.api.create_cluster(obj, self.dry_run))
            return
        except KubeApiError as error:
            if error.status in (400, 422) or isinstance(error.__cause__, pydantic.ValidationError):
                raise InvalidManifest(str(error)) from error
            if error.status == 403:  # the account lacks the cluster-wide grant: asking again cannot help
                raise PermanentBackendError(
                    f"{error}: the platform may not manage Volcano Queues on this cluster; apply the opt-in "
                    f"component install/components/volcano (kubectl apply -k install/with-volcano), which grants "
                    f"its worker account create, get and update on scheduling.volcano.sh queues and adds the "
                    f"PriorityClass {PRIORITY_CLASS}, or turn gang scheduling off for the resource group") from error
            if error.status != 409:
                raise
        for attempt in range(_SHARED_UPDATES):
            existing = self._retry(f"get {what}", lambda: self.api.get_cluster(api_version, kind, name))
            kept = {k: v for k, v in (existing.get("spec") or {}).items() if k not in _OWNED_SPEC}
            spec = {**kept, **(obj.get("spec") or {})}
            labels = {**(existing.get("metadata", {}).get("labels") or {}), **(meta.get("labels") or {})}
            if existing.get("spec") == spec and existing.get("metadata", {}).get("labels") == labels:
                return
            body = {**existing, "spec": spec, "metadata": {**existing["metadata"], "labels": labels}}
            try:
                self._retry(f"update {what}", functools.partial(self.api.replace_cluster, body, self.dry_run))
                return
            except KubeApiError as error:
                # 409: another worker changed it since the read (its resourceVersion): read again.
                if error.status != 409 or attempt == _SHARED_UPDATES - 1:
                    raise

    def _create_or_adopt(self, obj: dict[str, Any], ref: ObjectRef) -> None:
        try:
            self._retry(f"create {_ident(ref)}", lambda: self.api.create(obj, self.dry_run))
            return
        except KubeApiError as error:
            # 400 / 422: the API server (or the client's schema) refuses the object; asking again cannot help.
            if error.status in (400, 422) or isinstance(error.__cause__, pydantic.ValidationError):
                raise InvalidManifest(str(error)) from error
            if error.status != 409:
                raise
        existing = self._retry(f"get {_ident(ref)}", lambda: self.api.get(ref))
        if (existing.get("metadata") or {}).get("deletionTimestamp"):
            # A stopped notebook's CR still being deleted: adopting it would adopt its end.
            raise BackendError(f"{_ident(ref)} is still being deleted; try again shortly")
        if ref.kind not in CONVERGE_KINDS:
            return
        desired = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "metadata", "status")}
        meta = {k: obj["metadata"][k] for k in ("labels", "annotations") if obj["metadata"].get(k)}
        if meta:
            desired["metadata"] = meta
        # A custom resource (the VirtualService) gets no server-side defaults: its spec must be exactly the
        # submitted one (a removed mirror is a difference); built-ins only have to contain it.
        exact = kind_of(ref.api_version, ref.kind).typed is None and existing.get("spec") != obj.get("spec")
        if exact or not _covers(existing, desired):
            self._retry(f"update {_ident(ref)}", lambda: self.api.patch(ref, desired, self.dry_run))
