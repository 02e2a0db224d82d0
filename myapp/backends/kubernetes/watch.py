"""Kubernetes watch events: which runs' objects changed, as they change, instead of at the next poll.

One `RunWatch` per cluster watches, across namespaces, what the platform submits and what it
starts (Jobs, the training CRs, Volcano Jobs, pods), selected by the platform's managed-by label,
and keeps the run ids (RUN_LABEL) of the objects that changed until `changed_runs()` takes them.
Each kind's watch resumes from the last resourceVersion it saw (events and bookmarks), relists
on 410 Gone (its version was compacted away: every listed run counts as changed, since what
happened in between is unknown) and reconnects with capped exponential backoff after errors.
A fresh start is a list too, so a restarted watcher misses nothing either.

The watcher lives in the beat process (one per platform: `start_in_beat`), which requests the
changed runs at once; the controller's timers stay as the slow safety net for whatever a watch
misses while it is down.
"""
from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kubernetes import client, watch
from kubernetes.client.exceptions import ApiException

from ...rendering.contract import MANAGED_BY, MANAGED_BY_LABEL, RUN_LABEL

log = logging.getLogger(__name__)
SELECTOR = f"{MANAGED_BY_LABEL}={MANAGED_BY}"
GONE = 410
NOT_SERVED = 404  # the kind's API is not installed (no training operator, no Volcano)
ABSENT_RECHECK = 300.0  # seconds before asking again whether such a kind is served now


@dataclass(frozen=True)
class Watched:
    """One kind the watcher follows, cluster-wide: typed (an API class's list_*_for_all_namespaces)
    or custom (group, version, plural)."""

    name: str
    typed: tuple[str, str] | None = None
    custom: tuple[str, str, str] | None = None

    def lister(self, api_client: client.ApiClient) -> Callable[..., Any]:
        if self.typed:
            api, method = self.typed
            return getattr(getattr(client, api)(api_client), method)
        assert self.custom is not None
        group, version, plural = self.custom
        custom = client.CustomObjectsApi(api_client)

        def list_custom(**kwargs: Any) -> Any:
            return custom.list_cluster_custom_object(group, version, plural, **kwargs)
        list_custom.__doc__ = ":return: object"  # Watch reads the return type from the docstring
        return list_custom


# What a task attempt's status is read from: its workload and its pods (a pod scheduled, pulling,
# running or failing changes the attempt's status before the workload's does).
WATCHED = (
    Watched("pods", typed=("CoreV1Api", "list_pod_for_all_namespaces")),
    Watched("jobs", typed=("BatchV1Api", "list_job_for_all_namespaces")),
    *(Watched(plural, custom=("kubeflow.org", "v1", plural)) for plural in ("tfjobs", "pytorchjobs", "xgboostjobs",
                                                                          "mpijobs")),
    Watched("volcano jobs", custom=("batch.volcano.sh", "v1alpha1", "jobs")),
)


def run_of(obj: Any) -> int | None:
    """The run id an object (a raw dict) belongs to, from its RUN_LABEL; None if it has none."""
    if not isinstance(obj, dict):
        return None
    value = ((obj.get("metadata") or {}).get("labels") or {}).get(RUN_LABEL)
    return int(value) if isinstance(value, str) and value.isdigit() else None


class Backoff:
    """Capped exponential backoff with jitter; reset after a watch that delivered."""

    def __init__(self, base: float = 0.5, cap: float = 30.0):
        self.base, self.cap, self.failures = base, cap, 0

    def next(self) -> float:
        self.failures += 1
        delay = min(self.cap, self.base * 2 ** (self.failures - 1))
        return delay * random.uniform(0.8, 1.0)

    def reset(self) -> None:
        self.failures = 0


class KindWatch:
    """list, then watch from the list's resourceVersion, forever (until stopped)."""

    def __init__(self, what: Watched, api_client: client.ApiClient, report: Callable[[Iterable[int]], None],
                 stop: threading.Event, *, timeout_seconds: int = 300, backoff: Backoff | None = None):
        self.what, self.report, self.stop = what, report, stop
        self.list = what.lister(api_client)
        self.timeout_seconds = timeout_seconds
        self.backoff = backoff or Backoff()
        self.resource_version: str | None = None  # None: list first
        self.relists = 0  # lists done (the first included): a 410 Gone adds one
        self.watching = threading.Event()  # set while a watch request is open
        # Set while the cluster does not serve the kind: nothing of it can change, so it counts as watched.
        self.absent = threading.Event()
        self._watch: watch.Watch | None = None

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                if self.resource_version is None:
                    self._relist()
                    self.backoff.reset()  # the API server answers again
                self._follow()
            except ApiException as error:
                if error.status == GONE:  # compacted past our version: the list is the truth again
                    log.info("watch %s: %s, listing again", self.what.name, error.reason)
                    self.resource_version = None
                    continue
                if error.status == NOT_SERVED:
                    self._absent()
                    continue
                self._pause(f"{error.status} {error.reason}")
            except Exception as error:  # a watch must outlive any error: reconnect
                self._pause(error)
            finally:
                self.watching.clear()

    def _absent(self) -> None:
        if not self.absent.is_set():
            log.info("watch %s: not served by this cluster; asking again every %g s", self.what.name, ABSENT_RECHECK)
        self.absent.set()
        self.resource_version = None
        self.stop.wait(ABSENT_RECHECK)

    def _pause(self, error: object) -> None:
        if self.stop.is_set():
            return  # stopping cut the connection: nothing to report
        delay = self.backoff.next()
        log.warning("watch %s: %s; again in %.1f s", self.what.name, error, delay)
        self.stop.wait(delay)

    def _relist(self) -> None:
        listed = self.list(label_selector=SELECTOR, _preload_content=False, _request_timeout=30)
        try:
            body = _json(listed)
        finally:
            listed.release_conn()
        self.absent.clear()
        self.report(r for r in map(run_of, body.get("items") or []) if r is not None)
        self.resource_version = str((body.get("metadata") or {}).get("resourceVersion") or "")
        self.relists += 1

    def _follow(self) -> None:
        self._watch = watch.Watch()
        if self.stop.is_set():  # halted before this Watch existed: do not open another for minutes
            return
        stream = self._watch.stream(self.list, label_selector=SELECTOR, resource_version=self.resource_version,
                                    allow_watch_bookmarks=True, timeout_seconds=self.timeout_seconds,
                                    _request_timeout=(10, self.timeout_seconds + 30))
        self.watching.set()
        for event in stream:  # an ERROR event (410 Gone among them) is raised by the Watch as an ApiException
            if self.stop.is_set():
                self._watch.stop()
                break
            obj = event.get("raw_object") or {}
            version = (obj.get("metadata") or {}).get("resourceVersion")
            if version:
                self.resource_version = str(version)
                self.backoff.reset()
            if event.get("type") != "BOOKMARK" and (run_id := run_of(obj)) is not None:
                self.report([run_id])

    def halt(self) -> None:
        if self._watch is not None:
            self._watch.stop()


class RunWatch:
    """Every WATCHED kind of one cluster, each in a daemon thread; `changed_runs()` takes what they saw."""

    def __init__(self, api_client: client.ApiClient, *, kinds: tuple[Watched, ...] = WATCHED,
                 timeout_seconds: int = 300, backoff: Callable[[], Backoff] = Backoff,
                 notify: threading.Event | None = None):
        self._changed: set[int] = set()
        self._lock = threading.Lock()
        # Set when runs are waiting in changed_runs(); one Event may be shared by several clusters' watches.
        self.changed = notify or threading.Event()
        self.stop_event = threading.Event()
        # A client of its own: each watch holds a connection for minutes, the backend's calls keep theirs.
        self.api_client = client.ApiClient(api_client.configuration)
        self.watches = [KindWatch(kind, self.api_client, self._report, self.stop_event,
                                  timeout_seconds=timeout_seconds, backoff=backoff()) for kind in kinds]
        self._threads: list[threading.Thread] = []

    def start(self) -> RunWatch:
        for kind_watch in self.watches:
            thread = threading.Thread(target=kind_watch.run, name=f"watch {kind_watch.what.name}", daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop every watch; waits up to `timeout` in all for their threads (daemons: a stream still
        opening ends with its server-side timeout)."""
        self.stop_event.set()
        deadline = time.monotonic() + timeout
        pairs = list(zip(self.watches, self._threads, strict=True))
        while pairs and time.monotonic() < deadline:
            # Halted again while alive: a watch whose request was being sent had no connection to cut yet.
            for kind_watch, thread in pairs:
                kind_watch.halt()
                thread.join(0.02)
            pairs = [(k, t) for k, t in pairs if t.is_alive()]
        self.api_client.close()

    def _report(self, run_ids: Iterable[int]) -> None:
        ids = set(run_ids)
        if ids:
            with self._lock:
                self._changed |= ids
            self.changed.set()

    def live(self) -> bool:
        """Every kind's watch is open now (its events are arriving), or the cluster does not serve the kind."""
        return all(w.watching.is_set() or w.absent.is_set() for w in self.watches)

    def changed_runs(self) -> set[int]:
        with self._lock:
            out, self._changed = self._changed, set()
        return out


def _json(response: Any) -> dict[str, Any]:
    import json

    data = response.data
    return json.loads(data) if data else {}
