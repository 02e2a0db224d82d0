"""ApiServerDouble: a real HTTP server speaking the subset of the Kubernetes API the backend
uses, plus a Python control API for tests (statuses, pods, logs, metrics, faults)."""
from __future__ import annotations

import copy
import json
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubernetes import client

from . import disruptions, registry
from .faults import Fault, Faults
from .pods import make_pod, terminated_state
from .readers import ReaderKubelet
from .server import DoubleHTTPServer
from .store import ApiError, Store, now_rfc3339


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    body: Any
    headers: dict[str, str] = field(default_factory=dict)  # lower-case names


@dataclass(eq=False)
class _Stream:
    kind: str  # "watch" | "log"
    pod: tuple[str, str] | None  # (namespace, pod) for log streams
    cut: bool = False


@dataclass
class Deletion:
    kind: str
    namespace: str
    name: str
    propagation: str


@dataclass
class ApiServerDouble:
    store: Store = field(default_factory=Store)
    faults: Faults = field(default_factory=Faults)
    requests: list[Request] = field(default_factory=list)
    deletions: list[Deletion] = field(default_factory=list)
    log_lines: dict[tuple[str, str, str], list[tuple[int, str]]] = field(default_factory=dict)
    # namespace -> the folder standing for its outputs claim, which reader pods read (readers.py)
    claims: dict[str, Path] = field(default_factory=dict)
    # namespace -> the folder standing for its checkpoints claim (myapp-checkpoints), which checkpoint readers
    # read and checkpoint deletes write
    checkpoint_claims: dict[str, Path] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._stopping = threading.Event()
        self._streams: list[_Stream] = []
        self._server: DoubleHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._record_lock = threading.Lock()
        self._empty_claim = tempfile.TemporaryDirectory(prefix="k8s-double-claim-")
        self.readers = ReaderKubelet(self, Path(self._empty_claim.name))

    # --- lifecycle -----------------------------------------------------------------------

    def start(self) -> ApiServerDouble:
        self._server = DoubleHTTPServer(self)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="k8s-double", daemon=True)
        self._thread.start()
        self.readers.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        with self.store.lock:
            self.store.changed.notify_all()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        self._empty_claim.cleanup()

    def __enter__(self) -> ApiServerDouble:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None, "double not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def configuration(self) -> client.Configuration:
        """A fresh client configuration pointing at the double (urllib3 retries off: the
        backend's own RetryPolicy is the only retry layer)."""
        cfg = client.Configuration(host=self.url)
        cfg.retries = False
        return cfg

    def api_client(self) -> client.ApiClient:
        return client.ApiClient(self.configuration())

    # --- objects -------------------------------------------------------------------------

    def get(self, api_version: str, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        try:
            return self.store.get(registry.by_kind(api_version, kind), namespace, name)
        except ApiError:
            return None

    def list(self, api_version: str, kind: str, namespace: str | None = None,
             label_selector: str | None = None) -> list[dict[str, Any]]:
        return self.store.list(registry.by_kind(api_version, kind), namespace, label_selector)

    def put(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Store an object as-is (no validation, status kept): what a controller would create."""
        rtype = registry.by_kind(obj["apiVersion"], obj["kind"])
        return self.store.create(rtype, obj["metadata"].get("namespace", ""), obj, keep_status=True)

    def set_status(self, api_version: str, kind: str, namespace: str, name: str,
                   status: dict[str, Any]) -> dict[str, Any]:
        """Replace an object's status, as its controller would (bumps resourceVersion, MODIFIED event)."""
        return self.store.replace_field(registry.by_kind(api_version, kind), namespace, name, "status",
                                        copy.deepcopy(status))

    def patch_metadata(self, api_version: str, kind: str, namespace: str, name: str,
                       metadata: dict[str, Any]) -> dict[str, Any]:
        return self.store.patch(registry.by_kind(api_version, kind), namespace, name, {"metadata": metadata})

    def add_node(self, name: str, *, gpus: int = 0, cpu: str = "8", memory: str = "32Gi",
                 labels: dict[str, str] | None = None, ready: bool = True, unschedulable: bool = False,
                 taints: list[dict[str, str]] | None = None) -> dict[str, Any]:
        """A Node as the kubelet reports it: allocatable resources, the Ready condition, cordoned or not."""
        allocatable = {"cpu": cpu, "memory": memory, "pods": "110", **({"nvidia.com/gpu": str(gpus)} if gpus else {})}
        spec: dict[str, Any] = {"unschedulable": True} if unschedulable else {}
        if taints:
            spec["taints"] = taints
        ready_condition = {"type": "Ready", "status": "True" if ready else "False"}
        return self.put({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels or {}},
                         "spec": spec, "status": {"allocatable": allocatable, "capacity": allocatable,
                                                  "conditions": [ready_condition]}})

    def set_node_ready(self, name: str, ready: bool | None) -> list[str]:
        """The kubelet's Ready condition (None: Unknown) and what the node lifecycle controller does about it:
        not Ready, the node is tainted NoExecute and its pods are evicted (disruptions.py). -> evicted pods."""
        return disruptions.set_node_ready(self, name, ready)

    def start_replicas(self, namespace: str, job_name: str) -> dict[str, str]:
        """A stored PyTorchJob's pods as the operator makes them, bound where kube-scheduler would: {pod: node}."""
        return disruptions.start_replicas(self, namespace, job_name)

    # --- pods, logs, metrics -------------------------------------------------------------

    def add_pod(self, namespace: str, name: str, labels: dict[str, str] | None = None, *,
                owner: tuple[str, str, str] | None = None, **kwargs: Any) -> dict[str, Any]:
        """A pod as a controller + kubelet would make it. ``owner`` = (apiVersion, kind, name) of a
        stored object: the pod gets an ownerReference and is garbage-collected with it."""
        owner_ref = None
        if owner is not None:
            parent = self.get(owner[0], owner[1], namespace, owner[2])
            owner_ref = {"apiVersion": owner[0], "kind": owner[1], "name": owner[2], "controller": True,
                         "uid": parent["metadata"]["uid"] if parent else str(uuid.uuid4())}
        return self.put(make_pod(namespace, name, labels, owner=owner_ref, **kwargs))

    def set_pod_status(self, namespace: str, name: str, status: dict[str, Any]) -> dict[str, Any]:
        """Merge ``status`` into the pod's status (lists such as containerStatuses are replaced)."""
        pods = registry.by_kind("v1", "Pod")
        return self.store.patch(pods, namespace, name, {"status": copy.deepcopy(status)}, subresource="status")

    def terminate_pod(self, namespace: str, name: str, exit_code: int = 0, reason: str | None = None,
                      message: str | None = None) -> dict[str, Any]:
        """Every container terminates: follow streams of the pod end after their last line."""
        pod = self.store.get(registry.by_kind("v1", "Pod"), namespace, name)
        statuses = [{**s, "ready": False, "started": False, "state": terminated_state(exit_code, reason, message)}
                    for s in pod["status"].get("containerStatuses") or []]
        phase = "Succeeded" if exit_code == 0 else "Failed"
        return self.set_pod_status(namespace, name, {"phase": phase, "containerStatuses": statuses})

    def delete_pod(self, namespace: str, name: str) -> None:
        self.store.delete(registry.by_kind("v1", "Pod"), namespace, name)

    def append_log(self, namespace: str, pod: str, *lines: str, container: str | None = None,
                   timestamp: float | None = None) -> None:
        """Append lines to a container's log (default: the pod's first container); open follow
        streams send them at once. Timestamps never go backwards within a container."""
        with self.store.lock:
            if container is None:
                obj = self.store.get(registry.by_kind("v1", "Pod"), namespace, pod)
                container = obj["spec"]["containers"][0]["name"]
            entries = self.log_lines.setdefault((namespace, pod, container), [])
            for text in lines:
                ts = int(timestamp * 1e9) if timestamp is not None else time.time_ns()
                if entries and ts < entries[-1][0]:
                    ts = entries[-1][0]
                entries.append((ts, text))
            self.store.changed.notify_all()

    def set_pod_metrics(self, namespace: str, pod: str, usage: dict[str, dict[str, str]],
                        timestamp: str | None = None) -> dict[str, Any]:
        """PodMetrics as metrics-server serves it: ``usage`` = {container: {"cpu": "250m", "memory": "64Mi"}};
        labels are copied from the pod (so labelSelector lists work)."""
        rtype = registry.by_kind("metrics.k8s.io/v1beta1", "PodMetrics")
        labels = ((self.get("v1", "Pod", namespace, pod) or {}).get("metadata") or {}).get("labels") or {}
        obj = {"apiVersion": "metrics.k8s.io/v1beta1", "kind": "PodMetrics",
               "metadata": {"name": pod, "namespace": namespace, "labels": labels},
               "timestamp": timestamp or now_rfc3339(), "window": "30s",
               "containers": [{"name": name, "usage": dict(values)} for name, values in usage.items()]}
        with self.store.lock:
            try:
                self.store.delete(rtype, namespace, pod)
            except ApiError:
                pass
            return self.store.create(rtype, namespace, obj, keep_status=True)

    # --- streams and faults --------------------------------------------------------------

    def inject_fault(self, method: str, path_regex: str, *, times: int = 1, status: int | None = None,
                     retry_after: float | None = None, hang: float | None = None, process: bool = False,
                     drop_after: int | None = None) -> Fault:
        """The next ``times`` requests matching (method or "*", regex searched in the URL path):
        answer ``status`` (with Retry-After), or hang ``hang`` seconds then close without an answer
        (``process``: after performing the request), or cut the stream after ``drop_after`` lines."""
        return self.faults.add(method, path_regex, times=times, status=status, retry_after=retry_after,
                               hang=hang, process=process, drop_after=drop_after)

    def drop_log_streams(self, namespace: str | None = None, pod: str | None = None) -> int:
        """Cut open follow streams (of one pod, or all) mid-way, as a broken connection would."""
        return self._cut(lambda s: s.kind == "log" and (pod is None or s.pod == (namespace, pod)))

    def compact(self) -> int:
        """etcd compaction: watches resuming from before now get 410 Gone (store.compact)."""
        return self.store.compact()

    def drop_watches(self) -> int:
        return self._cut(lambda s: s.kind == "watch")

    def open_streams(self, kind: str | None = None) -> int:
        with self.store.lock:
            return sum(1 for s in self._streams if kind in (None, s.kind))

    def _cut(self, which: Any) -> int:
        with self.store.lock:
            streams = [s for s in self._streams if which(s)]
            for stream in streams:
                stream.cut = True
            self.store.changed.notify_all()
            return len(streams)

    def _open_stream(self, kind: str, pod: tuple[str, str] | None) -> _Stream:
        stream = _Stream(kind, pod)
        with self.store.lock:
            self._streams.append(stream)
        return stream

    def _close_stream(self, stream: _Stream) -> None:
        with self.store.lock:
            if stream in self._streams:
                self._streams.remove(stream)

    # --- bookkeeping used by the server ----------------------------------------------------

    def _record(self, method: str, path: str, query: dict[str, str], raw: bytes,
                headers: dict[str, str] | None = None) -> None:
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw
        with self._record_lock:
            self.requests.append(Request(method, path, query, body, dict(headers or {})))

    def requests_matching(self, method: str, path_regex: str) -> list[Request]:
        import re

        pattern = re.compile(path_regex)
        with self._record_lock:
            return [r for r in self.requests if method in ("*", r.method) and pattern.search(r.path)]

    def _deleted(self, rtype: registry.ResourceType, namespace: str, name: str, policy: str) -> None:
        with self._record_lock:
            self.deletions.append(Deletion(rtype.kind, namespace, name, policy))

    def _collect_garbage(self, uid: str) -> None:
        """Cascade to dependents (ownerReferences), as the garbage collector does."""
        for group, plural, namespace, name in self.store.dependents(uid):
            rtype = next(t for t in registry.all_types() if (t.group, t.plural) == (group, plural))
            try:
                obj = self.store.delete(rtype, namespace, name)
            except ApiError:
                continue
            self._collect_garbage(obj["metadata"]["uid"])
