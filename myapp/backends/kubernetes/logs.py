"""Pod logs of one attempt, merged into one stream of LogLines tagged with their replica.

seq numbers count the lines of one container's log from its first line, so they are the same
whoever reads them and whenever: ``after={replica: seq}`` resumes without duplicates. Each
container gets a reader thread. A follow stream that breaks is reopened with ``sinceSeconds``
covering the gap (plus clock-skew slack); lines older than the last timestamp seen, and the
lines already seen at exactly that timestamp, are skipped, so nothing is lost or repeated.

The readers reach the cluster only through ``PodLogSource`` (KubernetesBackend implements it),
so this module does not import the backend and uses none of its private parts.
"""
from __future__ import annotations

import calendar
import heapq
import math
import queue
import re
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

import urllib3

from ..base import BackendError, JobRef, LogLine
from ..logcaps import LineSplitter, LogLimits
from .adapters import SIDECARS, replica_name
from .retry import KubeApiError

_TIMESTAMP = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2}) ?")
CLOCK_SKEW = 5  # seconds of slack added to sinceSeconds on reconnect
STAMP_ROOM = 40  # the kubelet's RFC3339Nano timestamp before each line, beyond the line cap
STREAM_ERRORS = (urllib3.exceptions.HTTPError, OSError, ValueError)


def parse_line(raw: str) -> tuple[int | None, str]:
    """("2024-05-01T12:00:00.5Z hello") -> (nanoseconds since the epoch, "hello")."""
    match = _TIMESTAMP.match(raw)
    if not match:
        return None, raw
    seconds = calendar.timegm(time.strptime(match.group(1), "%Y-%m-%dT%H:%M:%S"))
    nanos = int((match.group(2) or "").ljust(9, "0"))
    zone = match.group(3)
    offset = 0 if zone == "Z" else (1 if zone[0] == "+" else -1) * (int(zone[1:3]) * 3600 + int(zone[4:6]) * 60)
    return (seconds - offset) * 1_000_000_000 + nanos, raw[match.end():]


def iter_lines(response: Any, max_line: int | None = None) -> Iterator[str]:
    """Complete lines of a streamed response; a trailing partial line only at a clean end. A line beyond the
    line cap (``MYAPP_LOG_MAX_LINE``, plus its timestamp) keeps its start and says what it lost: a pod's 50 MB
    line costs no more memory than a short one."""
    splitter = LineSplitter((max_line or LogLimits.from_env().max_line) + STAMP_ROOM)
    for chunk in response.stream(amt=None, decode_content=False):
        for line in splitter.feed(chunk):
            yield line.decode()
    last = splitter.end()
    if last is not None:
        yield last.decode()


def split_lines(text: str) -> list[str]:
    """Lines of a whole log (only "\\n" ends a line, as in the kubelet's output)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


@dataclass(frozen=True)
class Target:
    """One container of one pod: what a reader reads."""

    pod: str
    uid: str
    container: str
    replica: str


def targets(pods: list[dict[str, Any]]) -> list[Target]:
    """Every non-sidecar container of every pod. Init containers are read too (tagged
    ``<replica>/<container>``): an image build runs Kaniko in one, and its log is the build's."""
    out = []
    for pod in pods:
        meta = pod.get("metadata") or {}
        spec = pod.get("spec") or {}
        names = [c["name"] for c in spec.get("containers") or []]
        main = [n for n in names if n not in SIDECARS] or names
        init = [c["name"] for c in spec.get("initContainers") or [] if c["name"] not in SIDECARS]
        replica = replica_name(pod)
        for container in init + main:
            tag = replica if main == [container] else f"{replica}/{container}"
            out.append(Target(meta.get("name", ""), meta.get("uid") or meta.get("name", ""), container, tag))
    return out


class PodLogSource(Protocol):
    """What the log readers need from one cluster. Each call is one API request under the
    source's retry policy and raises KubeApiError (with .status) when it finally fails."""

    def list_pods(self, ref: JobRef) -> list[dict[str, Any]]:
        """Every pod of the attempt (by its job-name label, or the Notebook controller's label)."""

    def read_pod(self, namespace: str, name: str) -> dict[str, Any]: ...

    def read_container_log(self, namespace: str, pod: str, container: str, tail_lines: int | None = None,
                           limit_bytes: int | None = None) -> str:
        """The container's whole current log (or its last tail_lines, at most limit_bytes), each line
        prefixed by its RFC3339Nano timestamp."""

    def open_container_log(self, namespace: str, pod: str, container: str, *, follow: bool,
                           since_seconds: int | None = None) -> Any:
        """A streaming urllib3 response (timestamps on); the caller closes it."""

    def workload_finished(self, ref: JobRef) -> bool:
        """Has the attempt's workload reached a terminal state (or gone)?"""


def _waiting(error: KubeApiError) -> bool:
    return error.status == 400 and "waiting to start" in str(error)


class _Cursor:
    """Position in one container's log: seq of the last line, its timestamp, and how many
    lines carried exactly that timestamp (to skip them again after a reconnect)."""

    def __init__(self) -> None:
        self.seq = 0
        self.last_ts: int | None = None
        self.same = 0

    def since_seconds(self) -> int | None:
        if self.last_ts is None:
            return None
        return max(1, math.ceil(time.time() - self.last_ts / 1e9) + CLOCK_SKEW)

    def lines(self, raw_lines: Iterator[str], resumed: bool) -> Iterator[tuple[int, str, float]]:
        """(seq, text, timestamp) of the lines not seen yet."""
        skip_same = self.same if resumed else 0
        for raw in raw_lines:
            ts, text = parse_line(raw)
            if resumed and ts is not None and self.last_ts is not None:
                if ts < self.last_ts:
                    continue
                if ts == self.last_ts and skip_same > 0:
                    skip_same -= 1
                    continue
            self.seq += 1
            if ts is not None:
                if ts == self.last_ts:
                    self.same += 1
                else:
                    self.last_ts, self.same = ts, 1
            yield self.seq, text, (ts / 1e9 if ts is not None else 0.0)


def read_all(source: PodLogSource, namespace: str, target: Target,
             tail: tuple[int, int] | None = None) -> list[LogLine]:
    """The whole current log of one container, or its last (lines, bytes) with ``tail`` (none if it has not
    started or is gone)."""
    try:
        if tail is None:
            text = source.read_container_log(namespace, target.pod, target.container)
        else:
            text = source.read_container_log(namespace, target.pod, target.container, tail_lines=tail[0],
                                             limit_bytes=tail[1])
    except KubeApiError as error:
        if error.status == 404 or _waiting(error):
            return []
        raise
    cursor = _Cursor()
    return [LogLine(target.replica, seq, line, ts)
            for seq, line, ts in cursor.lines(iter(split_lines(text)), resumed=False)]


def snapshot(source: PodLogSource, ref: JobRef, after: dict[str, int],
             tail: tuple[int, int] | None = None) -> Iterator[LogLine]:
    """Every pod's current log merged by timestamp, each streamed as it is consumed (or, with ``tail``, its
    last (lines, bytes): read_all, in parallel)."""
    wanted = targets(source.list_pods(ref))
    if not wanted:
        return iter(())
    if tail is None:
        return heapq.merge(*(streamed(source, ref.namespace, t, after.get(t.replica, 0)) for t in wanted),
                           key=lambda line: line.timestamp)
    with ThreadPoolExecutor(max_workers=min(8, len(wanted)), thread_name_prefix="k8s-log") as pool:
        per_target = list(pool.map(lambda t: read_all(source, ref.namespace, t, tail), wanted))
    streams = [[line for line in lines if line.seq > after.get(line.replica, 0)] for lines in per_target]
    return heapq.merge(*streams, key=lambda line: line.timestamp)


def streamed(source: PodLogSource, namespace: str, target: Target, after: int) -> Iterator[LogLine]:
    """One container's current log after seq ``after``, read as it is consumed (none if it has not started
    or is gone)."""
    try:
        response = source.open_container_log(namespace, target.pod, target.container, follow=False)
    except KubeApiError as error:
        if error.status == 404 or _waiting(error):
            return
        raise
    whole = False
    try:
        for seq, text, ts in _Cursor().lines(iter_lines(response), resumed=False):
            if seq > after:
                yield LogLine(target.replica, seq, text, ts)
        whole = True
    except STREAM_ERRORS as exc:
        raise BackendError(f"reading the log of pod {target.pod}: {exc}") from exc
    finally:
        if not whole:
            response.close()
        response.release_conn()


class _Reader(threading.Thread):
    def __init__(self, follower: Follower, target: Target):
        super().__init__(name=f"k8s-log-{target.pod}-{target.container}", daemon=True)
        self.follower, self.target = follower, target
        self.cursor = _Cursor()
        self.after = follower.after.get(target.replica, 0)
        self.response: Any = None
        self.finished = False

    def run(self) -> None:
        try:
            self._follow()
        except BaseException as exc:
            self.follower.queue.put(("error", self, exc))
        finally:
            self.follower.queue.put(("done", self, None))

    def _open(self, follow: bool, since: int | None) -> Any:
        target = self.target
        return self.follower.source.open_container_log(self.follower.ref.namespace, target.pod, target.container,
                                                       follow=follow, since_seconds=since)

    def _follow(self) -> None:
        follower, target = self.follower, self.target
        resumed = False
        while not follower.stop.is_set():
            follow = not follower.draining.is_set()
            try:
                response = self._open(follow, self.cursor.since_seconds() if resumed else None)
            except KubeApiError as error:
                if error.status == 404:
                    return  # the pod is gone
                if _waiting(error):
                    if follower.draining.is_set():
                        return
                    follower.stop.wait(follower.poll_interval)
                    continue
                raise
            self.response = response
            got, broken = 0, False
            try:
                for seq, text, ts in self.cursor.lines(iter_lines(response), resumed):
                    got += 1
                    if seq > self.after:
                        follower.queue.put(("line", self, LogLine(target.replica, seq, text, ts)))
            except STREAM_ERRORS:
                broken = True  # reconnect below, resuming after the cursor
            finally:
                self.response = None
                if broken or follower.stop.is_set():
                    response.close()
                response.release_conn()
            resumed = True
            if follower.stop.is_set() or not follow:
                return
            if not broken and self._container_done():
                return
            if not got:
                follower.stop.wait(follower.poll_interval)

    def _container_done(self) -> bool:
        """A follow stream ended cleanly: did the container terminate (or the pod vanish)?"""
        try:
            pod = self.follower.source.read_pod(self.follower.ref.namespace, self.target.pod)
        except KubeApiError as error:
            if error.status == 404:
                return True
            raise
        if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            return True
        status = pod.get("status") or {}
        for container in [*(status.get("initContainerStatuses") or []), *(status.get("containerStatuses") or [])]:
            if container.get("name") == self.target.container:
                return "terminated" in (container.get("state") or {})
        return False

    def close(self) -> None:
        response = self.response
        if response is not None:
            try:
                response.shutdown()  # unblocks a read in progress (urllib3 >= 2.3)
            except Exception:
                pass


class Follower:
    """Follow every pod of an attempt until the workload is finished and every reader drained.

    poll_interval paces pod discovery and retries; drain_timeout bounds how long containers
    still running after the workload finished are read."""

    def __init__(self, source: PodLogSource, ref: JobRef, after: dict[str, int], *, poll_interval: float,
                 drain_timeout: float):
        self.source, self.ref, self.after = source, ref, after
        self.poll_interval, self.drain_timeout = poll_interval, drain_timeout
        self.queue: queue.Queue[tuple[str, _Reader, Any]] = queue.Queue()
        self.stop = threading.Event()
        self.draining = threading.Event()  # workload finished: read what is left, do not follow
        self.readers: dict[tuple[str, str], _Reader] = {}

    def __iter__(self) -> Iterator[LogLine]:
        try:
            yield from self._run()
        finally:
            self.close()

    def _run(self) -> Iterator[LogLine]:
        finished_at: float | None = None
        while True:
            if finished_at is None and self.source.workload_finished(self.ref):
                finished_at = time.monotonic()
                self.draining.set()
            self._discover()
            yield from self._drain(self.poll_interval)
            if finished_at is not None:
                if all(r.finished for r in self.readers.values()):
                    yield from self._drain(0)
                    return
                if time.monotonic() - finished_at > self.drain_timeout:
                    self.stop.set()  # containers still running after the workload ended
                    for reader in self.readers.values():
                        reader.close()
                    for reader in self.readers.values():
                        reader.join(timeout=2)
                    yield from self._drain(0)
                    return

    def _discover(self) -> None:
        for target in targets(self.source.list_pods(self.ref)):
            key = (target.uid, target.container)
            if key not in self.readers:
                reader = _Reader(self, target)
                self.readers[key] = reader
                reader.start()

    def _drain(self, seconds: float) -> Iterator[LogLine]:
        deadline = time.monotonic() + seconds
        while True:
            try:
                kind, reader, payload = self.queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return
            if kind == "line":
                yield payload
            elif kind == "done":
                reader.finished = True
            elif isinstance(payload, BackendError):
                raise payload
            else:
                raise BackendError(f"reading the log of pod {reader.target.pod}: {payload}") from payload

    def close(self) -> None:
        self.stop.set()
        for reader in self.readers.values():
            reader.close()
