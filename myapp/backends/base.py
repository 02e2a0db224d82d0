"""The one interface every execution backend implements (Kubernetes, local processes).

A backend takes rendered manifests and makes them run; it never decides what to render.
Identity is deterministic: the same task attempt always renders the same object names,
so submitting twice adopts what exists instead of creating anything new.
"""
from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


class JobState(str, enum.Enum):
    """The states a backend can report; myapp.pipelines.backend_calls.TASK_STATE_OF_JOB maps each to a TaskState."""

    PENDING = "pending"
    WAITING = "waiting"  # waiting for resources: unschedulable, queued by Volcano, quota
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


@dataclass(frozen=True)
class ObjectRef:
    api_version: str
    kind: str
    namespace: str
    name: str


@dataclass(frozen=True)
class JobRef:
    """What a backend returns from submit and takes everywhere else (JSON-able via as_dict)."""

    backend: str
    namespace: str
    job_name: str  # value of myapp.rendering.contract.JOB_NAME_LABEL; selects every pod / process of the attempt
    primary: ObjectRef  # the workload whose status is the task's status
    objects: tuple[ObjectRef, ...] = ()  # everything submitted, for cancel and cleanup

    def as_dict(self) -> dict[str, Any]:
        def obj(o: ObjectRef) -> dict[str, str]:
            return {"api_version": o.api_version, "kind": o.kind, "namespace": o.namespace, "name": o.name}

        return {"backend": self.backend, "namespace": self.namespace, "job_name": self.job_name,
                "primary": obj(self.primary), "objects": [obj(o) for o in self.objects]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> JobRef:
        return cls(backend=data["backend"], namespace=data["namespace"], job_name=data["job_name"],
                   primary=ObjectRef(**data["primary"]), objects=tuple(ObjectRef(**o) for o in data["objects"]))


# A pending Status whose reason starts so is fetching its image (a notebook shows "pulling").
PULLING_IMAGE = "pulling image"


@dataclass(frozen=True)
class Status:
    state: JobState
    reason: str = ""  # human-readable: "ImagePullBackOff: image x not found", "OOMKilled", ...
    replicas: dict[str, dict[str, int]] = field(default_factory=dict)  # {"Worker": {"active": 2, ...}}
    exit_code: int | None = None
    url: str | None = None  # services and notebooks: where to reach them
    # A FAILED job that the machine, not its program, ended (one of DISRUPTIONS): the controller stops the
    # rest of its gang and starts the task again from its checkpoint, away from ``lost_nodes``.
    cause: str | None = None
    lost_nodes: tuple[str, ...] = ()


# Why a replica was lost under a job that did nothing wrong (Status.cause, TaskRun.cause): its process was
# killed (local), its pod evicted (the Eviction API, the kubelet under node pressure) or its node lost
# (NotReady or unreachable: the node lifecycle controller deletes its pods).
REPLICA_LOST, EVICTED, NODE_LOST = "replica-lost", "evicted", "node-lost"
DISRUPTIONS = frozenset({REPLICA_LOST, EVICTED, NODE_LOST})


@dataclass(frozen=True)
class LogLine:
    replica: str  # "master-0", "worker-1", ...
    seq: int  # per replica, increasing: followers resume after the last seq they saw
    line: str
    timestamp: float


@dataclass(frozen=True)
class MetricSample:
    timestamp: float
    replica: str
    cpu_cores: float | None = None
    memory_bytes: int | None = None
    gpu_utilization: float | None = None  # percent, 0..100
    gpu_memory_bytes: int | None = None


class BackendError(RuntimeError):
    """The backend could not do what was asked (after its own retries); the message says why.

    Transient unless it is a PermanentBackendError: the same call may succeed later (an unreachable
    API server, a timeout), so the controller tries again a bounded number of times."""


class PermanentBackendError(BackendError):
    """Asking again cannot help: the attempt fails at once with this reason."""


class UnsupportedKind(PermanentBackendError):
    """This backend cannot run this kind at all (e.g. Kaniko or Istio routing on the local backend)."""


class InvalidManifest(PermanentBackendError):
    """The manifests themselves are refused (missing fields, rejected by the API server's validation)."""


@runtime_checkable
class Backend(Protocol):
    name: str

    def submit(self, manifests: list[dict[str, Any]]) -> JobRef:
        """Create every object, or adopt it if it exists (idempotent per task attempt)."""

    def status(self, ref: JobRef) -> Status: ...

    def logs(self, ref: JobRef, follow: bool = False,
             after: dict[str, int] | None = None) -> Iterator[LogLine]:
        """Lines of every replica, merged; `after` maps replica -> last seq seen (no duplicates)."""

    def metrics(self, ref: JobRef, since: float | None = None) -> list[MetricSample]: ...

    def cancel(self, ref: JobRef) -> None:
        """Stop every pod / process of the attempt; status then reports cancelled."""

    def cleanup(self, ref: JobRef, archive: LogArchive) -> None:
        """Archive the logs, then delete what submit created."""

    def put_secret(self, namespace: str, name: str, data: dict[str, str]) -> None:
        """Create the Secret ``name`` in the project's namespace with exactly ``data`` (key -> text),
        or replace the one there: idempotent. Jobs mount it by secretKeyRef (the run's API token)."""

    def delete_secret(self, namespace: str, name: str) -> None:
        """Delete the Secret; one already gone is fine (idempotent)."""

    def changed_runs(self) -> set[int]:
        """Runs whose jobs started or finished since the last call, each change reported once (beat
        reconciles them at once instead of at their timer). A backend without such events keeps this
        default (it must then subclass Backend to inherit it): the timers alone find its changes."""
        return set()


class LogArchive(Protocol):
    def write(self, ref: JobRef, lines: Iterable[LogLine], *, keep_lines: bool = False) -> None:
        """Keep ``lines`` (consumed as they come), within the log caps; with ``keep_lines`` an archive with
        lines is not replaced by an empty one."""

    def read(self, ref: JobRef) -> list[LogLine]: ...
