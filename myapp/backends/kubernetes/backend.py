"""KubernetesBackend: submit rendered manifests to one cluster and follow what they become."""
from __future__ import annotations

import base64
import copy
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from kubernetes import client, config

from ...outputs import s3 as outputs_s3
from ...outputs.checkpoints import VOLUME as CHECKPOINTS_VOLUME
from ...outputs.declarations import VOLUME as OUTPUTS_VOLUME
from ...outputs.reader import Chunk, Listing
from ...rendering.contract import CANCELLED_ANNOTATION, JOB_NAME_LABEL, MANAGED_BY, MANAGED_BY_LABEL
from ...rendering.pod import pod_templates
from ..base import (
    Backend,
    BackendError,
    InvalidManifest,
    JobRef,
    JobState,
    LogArchive,
    LogLine,
    MetricSample,
    ObjectRef,
    Status,
    UnsupportedKind,
)
from . import adapters, notebooks
from . import logs as logs_mod
from . import metrics as metrics_mod
from . import outputs as outputs_mod
from . import retry as retry_mod
from .apply import ObjectApply, _ident
from .resources import KubeApi, kind_of, pod_selector
from .retry import KubeApiError, RetryPolicy
from .watch import RunWatch

# What cancel deletes: the workload and its gang-scheduling PodGroup (Services etc. stay for cleanup).
CANCEL_KINDS = frozenset({"PodGroup"})
# What a submission without a workload may hold: a serving service's front Service and traffic split
# (myapp/serving, serving-traffic). Nothing runs, so it has no pods, logs or metrics: cancel deletes it all.
ROUTING_KINDS = frozenset({"Service", "VirtualService", "HorizontalPodAutoscaler"})
DEFAULT_RETRY = RetryPolicy()


def _is_shared(obj: Mapping[str, Any]) -> bool:
    """A cluster-scoped object many jobs share (a resource group's Volcano Queue)."""
    try:
        return not kind_of(str(obj.get("apiVersion", "")), str(obj.get("kind", ""))).namespaced
    except UnsupportedKind:
        return False


def _job_name(obj: Mapping[str, Any]) -> str:
    """The JOB_NAME_LABEL value the workload puts on its pods (falls back to its name)."""
    for template in pod_templates(obj):
        labels = (template.template.get("metadata") or {}).get("labels") or {}
        if labels.get(JOB_NAME_LABEL):
            return labels[JOB_NAME_LABEL]
    return obj["metadata"]["name"]


class KubernetesBackend(ObjectApply, Backend):

    """The Backend protocol on one Kubernetes cluster (see docs/backends-kubernetes.md).

    ``api_client`` should come from a Configuration with ``retries = False`` (``from_cluster``
    does that) so ``retry`` is the only retry layer. ``sleep`` is used for backoff only;
    ``poll_interval`` paces log following, ``drain_timeout`` bounds how long a follow keeps
    reading containers that still run after the workload finished.
    """

    name = "kubernetes"

    def __init__(self, api_client: client.ApiClient, *, dry_run: bool = False, retry: RetryPolicy = DEFAULT_RETRY,
                 prometheus_url: str | None = None, sleep: Callable[[float], None] = time.sleep,
                 poll_interval: float = 1.0, drain_timeout: float = 30.0):
        self.api_client = api_client
        self.dry_run = dry_run
        self.retry = retry
        self.prometheus_url = prometheus_url or None
        self.sleep = sleep
        self.poll_interval = poll_interval
        self.drain_timeout = drain_timeout
        self.api = KubeApi(api_client, retry.request_timeout)
        self._cancelled: set[tuple[str, str]] = set()
        self._lock = threading.Lock()
        self._watch: RunWatch | None = None  # in the beat process only (start_watch)
        # The shared-cache key under which the beat says this cluster's watch is live (tasks.watch_clusters):
        # the controller then polls its attempts as a slow safety net only. None: not a Cluster row's.
        self.watch_key: str | None = None

    @classmethod
    def from_cluster(cls, cluster: Any, **kwargs: Any) -> KubernetesBackend:
        """See the module-level ``from_cluster``."""
        return from_cluster(cluster, **kwargs)

    def close(self) -> None:
        self.stop_watch()
        self.api_client.close()

    # --- events (watch.py) ---------------------------------------------------------------

    def start_watch(self, **kwargs: Any) -> RunWatch:
        """Watch the cluster's platform objects from now on (once per process: the beat's);
        changed_runs() then reports the runs whose objects changed."""
        with self._lock:
            if self._watch is None:
                self._watch = RunWatch(self.api_client, **kwargs).start()
            return self._watch

    def stop_watch(self) -> None:
        with self._lock:
            running, self._watch = self._watch, None
        if running is not None:
            running.stop()

    def events_live(self) -> bool:
        """This process watches the cluster and every watch is open."""
        return self._watch is not None and self._watch.live()

    def changed_runs(self) -> set[int]:
        """The runs whose Jobs, training jobs or pods changed since the last call (watch events);
        none where this process does not watch: the controller's timers find those changes."""
        return self._watch.changed_runs() if self._watch is not None else set()

    def _retry(self, what: str, fn: Callable[[], Any]) -> Any:
        return retry_mod.call(what, fn, self.retry, self.sleep)

    # --- submit --------------------------------------------------------------------------

    @staticmethod
    def _ref(obj: Mapping[str, Any]) -> ObjectRef:
        if not isinstance(obj, Mapping) or not isinstance(obj.get("metadata"), Mapping):
            raise InvalidManifest("submit: every manifest needs apiVersion, kind and metadata")
        kind_of(obj.get("apiVersion", ""), obj.get("kind", ""))  # UnsupportedKind
        meta = obj["metadata"]
        if not meta.get("name") or not meta.get("namespace"):
            raise InvalidManifest(f"submit: {obj['kind']} needs metadata.name and metadata.namespace")
        return ObjectRef(obj["apiVersion"], obj["kind"], meta["namespace"], meta["name"])

    def submit(self, manifests: list[dict[str, Any]]) -> JobRef:
        """Create every object in order; an existing one (409) is adopted. The same attempt
        submitted twice creates nothing new and returns an equal JobRef. A resource group's Volcano
        Queue (cluster-scoped, shared by the group's jobs) is brought to the submitted spec first and
        is not part of the JobRef: cancel and cleanup leave it."""
        objects = [copy.deepcopy(dict(m)) for m in manifests]
        store = outputs_s3.settings()
        if store is not None:  # outputs in the S3-compatible store, not the project's claim (docs/outputs.md)
            objects = outputs_s3.to_store(objects, store)
        shared = [obj for obj in objects if isinstance(obj, Mapping) and _is_shared(obj)]
        objects = [obj for obj in objects if not (isinstance(obj, Mapping) and _is_shared(obj))]
        for queue in shared:
            self._apply_shared(queue)
        refs = [self._ref(obj) for obj in objects]
        workloads = [i for i, r in enumerate(refs) if kind_of(r.api_version, r.kind).workload]
        if not workloads and not (refs and all(r.kind in ROUTING_KINDS for r in refs)):
            raise InvalidManifest("submit: no workload (Job, Deployment, training job, Notebook, Volcano Job) "
                                  f"among {[_ident(r) for r in refs]}, and not only routing "
                                  f"({', '.join(sorted(ROUTING_KINDS))})")
        if len({r.namespace for r in refs}) != 1:
            raise InvalidManifest(f"submit: manifests span namespaces {sorted({r.namespace for r in refs})}")
        # Routing only: the VirtualService (else the first object) stands for the rest; its name is the job name.
        first = workloads[0] if workloads else next((i for i, r in enumerate(refs) if r.kind == "VirtualService"), 0)
        primary, job_name = refs[first], _job_name(objects[first])
        with self._lock:  # a notebook started again after a stop keeps its name: not cancelled any more
            self._cancelled.discard((primary.namespace, job_name))
        for obj, ref in zip(objects, refs, strict=True):
            self._create_or_adopt(obj, ref)
        return JobRef(backend=self.name, namespace=primary.namespace, job_name=job_name,
                      primary=primary, objects=tuple(refs))

    # --- status --------------------------------------------------------------------------

    def _was_cancelled(self, ref: JobRef) -> bool:
        with self._lock:
            return (ref.namespace, ref.job_name) in self._cancelled

    def _get_optional(self, ref: ObjectRef) -> dict[str, Any] | None:
        try:
            return self._retry(f"get {_ident(ref)}", lambda: self.api.get(ref))
        except KubeApiError as error:
            if error.status == 404:
                return None
            raise

    @staticmethod
    def _url(ref: JobRef) -> str | None:
        primary = ref.primary
        services = [o for o in ref.objects if o.kind == "Service"]
        stable = [s for s in services if s.name != primary.name]  # the version-independent entry point
        chosen = (stable or services)[0] if (stable or services) else None
        return f"http://{chosen.name}.{chosen.namespace}.svc.cluster.local" if chosen else None

    def status(self, ref: JobRef) -> Status:
        if self._was_cancelled(ref):
            return Status(JobState.CANCELLED, "cancelled")
        if _routing_only(ref):  # nothing runs: in place or not
            missing = [_ident(o) for o in ref.objects if self._get_optional(o) is None]
            if missing:
                return Status(JobState.FAILED, f"{', '.join(missing)} gone (deleted outside the platform?)")
            return Status(JobState.RUNNING, "routing in place", url=self._url(ref))
        obj = self._get_optional(ref.primary)
        if obj is None:
            return Status(JobState.FAILED, f"{_ident(ref.primary)} no longer exists (deleted outside the platform?)")
        if ref.primary.kind == "Notebook":  # served at its NB_PREFIX; trouble fails it at once
            return notebooks.status(obj, self.list_pods(ref))
        base = adapters.workload_status(obj)
        if base.state is JobState.CANCELLED:
            return base
        podgroups = ([self._get_optional(o) for o in ref.objects if o.kind == "PodGroup"]
                     if base.state is JobState.PENDING else [])
        return adapters.combine(base, self.list_pods(ref), podgroups, self._url(ref) or base.url, ref.primary.kind)

    # --- pods and their logs: the logs.PodLogSource the log readers use ------------------

    def list_pods(self, ref: JobRef) -> list[dict[str, Any]]:
        if _routing_only(ref):
            return []
        selector = pod_selector(ref.primary.kind, ref.primary.api_version, ref.primary.name, ref.job_name)
        return self._retry(f"list pods {selector}", lambda: self.api.list_pods(ref.namespace, selector))

    def read_pod(self, namespace: str, name: str) -> dict[str, Any]:
        return self._retry(f"get pod {name}", lambda: self.api.get_pod(namespace, name))

    def read_container_log(self, namespace: str, pod: str, container: str, tail_lines: int | None = None,
                           limit_bytes: int | None = None) -> str:
        return self._retry(f"read log of pod {pod}", lambda: self.api.read_log(
            namespace, pod, container, tail_lines=tail_lines, limit_bytes=limit_bytes))

    def open_container_log(self, namespace: str, pod: str, container: str, *, follow: bool,
                           since_seconds: int | None = None) -> Any:
        return self._retry(f"open log of pod {pod}", lambda: self.api.stream_log(
            namespace, pod, container, follow=follow, since_seconds=since_seconds))

    def workload_finished(self, ref: JobRef) -> bool:
        """Cheap terminal check for log following: the primary object alone."""
        if self._was_cancelled(ref) or _routing_only(ref):
            return True
        obj = self._get_optional(ref.primary)
        return obj is None or adapters.workload_status(obj).state in adapters.TERMINAL

    # --- logs and metrics ----------------------------------------------------------------

    def logs(self, ref: JobRef, follow: bool = False, after: dict[str, int] | None = None) -> Iterator[LogLine]:
        after = dict(after or {})
        if follow:
            yield from logs_mod.Follower(self, ref, after, poll_interval=self.poll_interval,
                                         drain_timeout=self.drain_timeout)
        else:
            yield from logs_mod.snapshot(self, ref, after)

    def recent_logs(self, ref: JobRef, lines: int, limit_bytes: int) -> list[LogLine]:
        """The last ``lines`` (at most ``limit_bytes``) of each container, merged by time: a bounded read of a
        long-running server's log (a service's sampled request lines). seq counts from the tail's start."""
        return list(logs_mod.snapshot(self, ref, {}, tail=(lines, limit_bytes)))

    def metrics(self, ref: JobRef, since: float | None = None) -> list[MetricSample]:
        if _routing_only(ref):
            return []
        pods = self.list_pods(ref)
        if self.prometheus_url:
            def call(what: str, fn: Callable[[], Any]) -> Any:
                return retry_mod.call(what, fn, self.retry, self.sleep, errors=(metrics_mod.PrometheusError,),
                                      retryable=metrics_mod.is_retryable)
            return metrics_mod.from_prometheus(self.prometheus_url, ref.namespace, pods, since, call,
                                               timeout=self.retry.read_timeout)
        selector = pod_selector(ref.primary.kind, ref.primary.api_version, ref.primary.name, ref.job_name)
        items = self._retry("list PodMetrics (metrics.k8s.io)", lambda: self.api.pod_metrics(ref.namespace, selector))
        return metrics_mod.from_metrics_api(items, pods, since)

    # --- cancel and cleanup --------------------------------------------------------------

    def _delete(self, ref: ObjectRef, propagation: str) -> None:
        try:
            self._retry(f"delete {_ident(ref)}", lambda: self.api.delete(ref, propagation))
        except KubeApiError as error:
            if error.status != 404:
                raise

    def _delete_pods(self, ref: JobRef) -> None:
        if _routing_only(ref):
            return
        selector = pod_selector(ref.primary.kind, ref.primary.api_version, ref.primary.name, ref.job_name)
        self._retry(f"delete pods {selector}", lambda: self.api.delete_pods(ref.namespace, selector))

    def cancel(self, ref: JobRef) -> None:
        """Mark the workload cancelled (annotation + in-process marker), then delete it, its
        PodGroup and its pods. status() reports CANCELLED from then on. A routing-only submission
        (no workload: nothing to annotate, no pods) has every object deleted."""
        with self._lock:
            self._cancelled.add((ref.namespace, ref.job_name))
        if _routing_only(ref):
            for obj in reversed(ref.objects):
                self._delete(obj, "Background")
            return
        try:
            patch = {"metadata": {"annotations": {CANCELLED_ANNOTATION: "true"}}}
            self._retry(f"annotate {_ident(ref.primary)}", lambda: self.api.patch(ref.primary, patch))
        except KubeApiError as error:
            if error.status != 404:
                raise
        self._delete(ref.primary, "Foreground")
        for obj in ref.objects:
            if obj.kind in CANCEL_KINDS:
                self._delete(obj, "Foreground")
        self._delete_pods(ref)

    # --- secrets ------------------------------------------------------------------------

    def put_secret(self, namespace: str, name: str, data: dict[str, str]) -> None:
        """Create the Secret, or replace it (409: a re-put, or a create whose answer was lost)."""
        body = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                "metadata": {"name": name, "namespace": namespace, "labels": {MANAGED_BY_LABEL: MANAGED_BY}},
                "data": {key: base64.b64encode(value.encode()).decode() for key, value in data.items()}}
        try:
            self._retry(f"create Secret/{name}", lambda: self.api.create_secret(body, self.dry_run))
            return
        except KubeApiError as error:
            if error.status != 409:
                raise
        self._retry(f"replace Secret/{name}", lambda: self.api.replace_secret(body, self.dry_run))

    def delete_secret(self, namespace: str, name: str) -> None:
        try:
            self._retry(f"delete Secret/{name}", lambda: self.api.delete_secret(namespace, name))
        except KubeApiError as error:
            if error.status != 404:
                raise

    def fetch_outputs(self, namespace: str, task_run_id: int, relative_dir: str, into: Path) -> Listing:
        """A finished attempt's folder on the project's outputs claim, copied into ``into`` by a
        short-lived reader pod (outputs.py; docs/outputs.md)."""
        return outputs_mod.fetch(self, namespace, task_run_id, relative_dir, into)

    def fetch_output_chunk(self, namespace: str, task_run_id: int, relative_dir: str, path: str, index: int,
                           length: int, purpose: str = "chunk") -> Chunk:
        """One chunk of a file left on the claim (of a download, or its preview), read by a reader pod
        (outputs.py; docs/outputs.md)."""
        return outputs_mod.fetch_chunk(self, namespace, task_run_id, relative_dir, path, index, length, purpose)

    def read_running_output(self, namespace: str, task_run_id: int, relative_dir: str, path: str,
                            length: int) -> Chunk:
        """The start of one file of an attempt that still runs, off the claim, by a reader pod (outputs.py;
        its metrics while it runs: myapp/outputs/live.py)."""
        return outputs_mod.fetch_live(self, namespace, task_run_id, relative_dir, path, length)

    def read_checkpoint(self, namespace: str, task_run_id: int, relative_dir: str) -> dict[str, Any] | None:
        """The newest complete checkpoint's manifest in a running attempt's task folder on the checkpoints
        claim, read by a reader pod (outputs.py; kept and paced by myapp/outputs/live.py for admission)."""
        return outputs_mod.fetch_checkpoint(self, namespace, task_run_id, relative_dir)

    def delete_checkpoints(self, namespace: str, run_ids: list[int]) -> None:
        """Deleted runs' folders removed from the project's checkpoints claim by a short-lived pod (outputs.py;
        myapp/pipelines/checkpoint_cleanup.py)."""
        outputs_mod.delete_checkpoints(self, namespace, run_ids)

    def cleanup(self, ref: JobRef, archive: LogArchive) -> None:
        """Archive every pod's log (streamed into the archive, which keeps it within the log caps), then
        delete every submitted object and leftover pod. Idempotent: objects already gone are fine, and an
        existing archive is never replaced by an empty one once the pods are gone."""
        archive.write(ref, self.logs(ref), keep_lines=True)
        for obj in reversed(ref.objects):
            if obj.kind == "PersistentVolumeClaim" and obj.name in (OUTPUTS_VOLUME, CHECKPOINTS_VOLUME):
                continue  # the project's outputs or checkpoints volume: every run's, not this attempt's alone
            self._delete(obj, "Background")
        self._delete_pods(ref)


def _routing_only(ref: JobRef) -> bool:
    """A submission without a workload (ROUTING_KINDS only): its primary is not a workload."""
    return not kind_of(ref.primary.api_version, ref.primary.kind).workload


def _field(cluster: Any, name: str) -> Any:
    value = cluster.get(name) if isinstance(cluster, Mapping) else getattr(cluster, name, None)
    return getattr(value, "value", value)  # enums (ClusterKind) -> their value


def from_cluster(cluster: Any, *, config_file: str | None = None, **kwargs: Any) -> KubernetesBackend:
    """A backend for one Cluster row (or any mapping / object with the same fields), with its
    own Configuration: kubeconfig context, or the in-cluster service account. The library's
    global default configuration is never touched, so several clusters coexist."""
    name = _field(cluster, "name") or "<unnamed>"
    if _field(cluster, "kind") not in (None, "kubernetes"):
        raise BackendError(f"cluster {name} is not a Kubernetes cluster ({_field(cluster, 'kind')})")
    configuration = client.Configuration()
    configuration.retries = False  # RetryPolicy is the only retry layer
    try:
        if _field(cluster, "in_cluster"):
            config.load_incluster_config(client_configuration=configuration)
            api_client = client.ApiClient(configuration)
        elif _field(cluster, "kube_context"):
            api_client = config.new_client_from_config(config_file=config_file, context=_field(cluster, "kube_context"),
                                                       client_configuration=configuration)
        else:
            raise BackendError(f"cluster {name}: set kube_context or in_cluster")
    except config.ConfigException as exc:
        raise BackendError(f"cluster {name}: {exc}") from exc
    kwargs.setdefault("prometheus_url", _field(cluster, "prometheus_url"))
    backend = KubernetesBackend(api_client, **kwargs)
    if _field(cluster, "id") is not None:  # what the beat's watch of this cluster is known by (watch_key)
        backend.watch_key = f"kubernetes-watch:{_field(cluster, 'id')}"
    return backend
