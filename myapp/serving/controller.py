"""The serving controller: makes a service's backend objects match its row, one idempotent pass at a
time (the worker's ``myapp.reconcile_service``; beat's tick requests services whose next look is due).

Desired (the row): the versions of the split and the shadow, replicas, autoscaling, ``deleting``.
Actual (the backend): one model-server job per wanted version, and locally one router job whose
routes the pass pushes (``PUT /_router/config``) once every weighted version answers. A version no
longer wanted is stopped only after the router stopped sending it traffic. Every job's key is written
to ``InferenceService.jobs`` *before* it is submitted ({"submitting": true}), so a worker killed
between the submit and the commit leaves a key the next pass resolves (submit adopts the job, or
stops it if it is not wanted any more): nothing is orphaned. Platform restarts lose nothing: the
local jobs run under their own supervisors and the pass re-adopts them from the stored references.

On a cluster whose serving engine is KServe (``Cluster.serving_engine``, the service's resource group's
cluster), a service is one KServe InferenceService instead (key ``kserve``): its predictor is the newest
weighted version with its weight as ``canaryTrafficPercent`` (KServe sends the rest to the revision it last
rolled out), patched in place on each change, running once its Ready condition is True. KServe splits
between two revisions only (a third weighted version fails the service with that reason) and mirrors
nothing: a shadow is its own InferenceService (``kserve-shadow``) behind a front of the platform's
(``mirror``: Service + VirtualService ``<service>-mirror``, the service's URL while it exists). An engine
changed under a running service is the same as any change: the new objects first, the old ones retired once
the new ones answer.
"""
from __future__ import annotations

import datetime as dt
import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass

import sqlalchemy as sa

from ..backends import Backend, BackendError, JobRef, JobState, LogArchive, PermanentBackendError, Status
from ..extensions import db
from ..models import InferenceService, ModelVersion, Project, ServiceState, utcnow
from ..rendering import RenderError
from . import manifests
from .placement import service_cluster, service_engine
from .router_client import RouterUnavailable, control, router_token
from .specs import _mirrored, _server_status, _spec, _version_spec
from .traffic import router_routes, wanted_versions

log = logging.getLogger(__name__)
ROUTER = "router"
TRAFFIC = "traffic"
KSERVE = "kserve"
KSERVE_SHADOW = "kserve-shadow"
MIRROR = "mirror"
SETTLED_CHECK = dt.timedelta(seconds=30)  # a running service is looked at this often (re-adopt, restart)
CONVERGING_CHECK = dt.timedelta(seconds=1)
FAILED_CHECK = dt.timedelta(seconds=10)
CLAIM = dt.timedelta(minutes=5)  # longer than any pass; a worker killed mid-pass frees it after this
DEAD = frozenset({JobState.FAILED, JobState.CANCELLED, JobState.SUCCEEDED})  # a server should never end
TOKEN_MARK = "token"  # on jobs submitted since router and servers pass the service's token (_predates_token)


@dataclass
class Pass:
    service: InferenceService
    backend: Backend
    spec: manifests.ServiceSpec
    versions: dict[int, ModelVersion]
    problems: list[str]
    failed: bool = False
    token_put: bool = False  # the service's token Secret written in this pass


def version_key(version_id: int) -> str:
    return f"v{version_id}"


class ServingController:
    def __init__(self, backend_for: Callable[[InferenceService], Backend], secret_key: str,
                 archive: LogArchive | None = None, engine_for: Callable[[InferenceService], str] | None = None):
        self.backend_for = backend_for
        self.secret_key = secret_key
        self.archive = archive
        self.engine_for = engine_for or service_engine  # "kserve": KServe InferenceServices (installed there)

    # ---- one pass ----------------------------------------------------------------------------
    def reconcile(self, service_id: int) -> bool:
        """One pass; True when no quick second look is needed: the service is where it should be, is
        gone, or failed (it is looked at again on its timer or when it changes). A service another pass
        holds is left to it (False: look again in a second)."""
        now = utcnow()
        claimed = db.session.execute(sa.update(InferenceService).where(
            InferenceService.id == service_id,
            sa.or_(InferenceService.claimed_until.is_(None), InferenceService.claimed_until < now),
        ).values(claimed_until=now + CLAIM).execution_options(synchronize_session=False)).rowcount
        db.session.commit()
        if not claimed:
            return db.session.get(InferenceService, service_id) is None
        try:
            return self._pass(service_id)
        finally:
            db.session.rollback()
            db.session.execute(sa.update(InferenceService).where(InferenceService.id == service_id)
                               .values(claimed_until=None).execution_options(synchronize_session=False))
            db.session.commit()

    def _pass(self, service_id: int) -> bool:
        service = db.session.get(InferenceService, service_id)
        if service is None:
            return True
        project = db.session.get(Project, service.project_id)
        ids = wanted_versions(service.traffic, service.shadow_version_id) if not service.deleting else set()
        rows = db.session.scalars(sa.select(ModelVersion).where(ModelVersion.id.in_(
            ids | {service.model_version_id} | {int(k[1:]) for k in service.jobs if k.startswith("v")}))).all()
        cluster = service_cluster(service)
        p = Pass(service, self.backend_for(service), _spec(service, project, cluster), {v.id: v for v in rows}, [])
        kserve = self.engine_for(service) == "kserve" and p.backend.name != "local"
        if kserve:
            routed = self._kserve(p)
            keep = {KSERVE} | ({KSERVE_SHADOW, MIRROR} if _mirrored(service) else set())
        else:
            self._versions(p, ids)
            routed = self._route(p, ids)
            keep = {version_key(v) for v in ids} | {ROUTER, TRAFFIC}
        if routed or service.deleting:
            self._retire(p, set() if service.deleting else keep)
        settled = self._finish(p, keep, routed)
        db.session.commit()
        return settled

    def _save_jobs(self, service: InferenceService, jobs: dict) -> None:
        service.jobs = dict(jobs)
        db.session.commit()  # a key is stored before its submit and after it: never a job nobody knows

    def _submit_or_patch(self, p: Pass, key: str, entry: dict | None,
                         render: Callable[[], list[dict]]) -> JobRef | None:
        """A first submission, or a changed one: the same objects patched in place by the submit (409 ->
        merge patch), so the traffic never lacks a route; the stored reference stays until then."""
        if not (entry and "backend" in entry):
            return self._submit(p, key, render)
        try:
            self._put_token(p)  # a service from before the model servers read it has none on Kubernetes
            return p.backend.submit(render())
        except (BackendError, RenderError) as exc:
            p.problems.append(f"{key}: cannot change: {exc}")
            p.failed = p.failed or isinstance(exc, (PermanentBackendError, RenderError))
            return None

    def _put_token(self, p: Pass) -> None:
        """The service's token in its Secret before anything reading it is submitted; once per pass."""
        if not p.token_put:
            p.backend.put_secret(p.spec.namespace, manifests.router_secret(p.service.id),
                                 {manifests.ROUTER_SECRET_KEY: router_token(self.secret_key, p.service.id)})
            p.token_put = True

    def _submit(self, p: Pass, key: str, render: Callable[[], list[dict]]) -> JobRef | None:
        jobs = dict(p.service.jobs)
        if "submitting" not in jobs.get(key, {}):
            jobs[key] = {"submitting": True}
            self._save_jobs(p.service, jobs)
        try:
            self._put_token(p)
            ref = p.backend.submit(render())
        except (BackendError, RenderError) as exc:
            p.problems.append(f"{key}: cannot start: {exc}")
            p.failed = p.failed or isinstance(exc, (PermanentBackendError, RenderError))
            return None
        jobs[key] = {**ref.as_dict(), TOKEN_MARK: True}
        self._save_jobs(p.service, jobs)
        return ref

    def _versions(self, p: Pass, ids: set[int]) -> None:
        status = {}
        for vid in sorted(ids):
            key, row = version_key(vid), p.versions.get(vid)
            if row is None:
                p.problems.append(f"model version {vid} no longer exists")
                p.failed = True
                continue
            entry = p.service.jobs.get(key)
            ref = JobRef.from_dict(entry) if entry and "backend" in entry else None
            if entry and ref is not None and self._predates_token(p, key, entry):
                status[str(vid)] = {"state": "pending", "reason": p.problems[-1], "url": None}
                continue
            if ref is None:
                ref = self._submit(p, key, functools.partial(manifests.model_server, p.spec, _version_spec(row)))
            if ref is None:
                status[str(vid)] = {"state": "failed" if p.failed else "pending", "reason": p.problems[-1], "url": None}
                continue
            try:
                current = p.backend.status(ref)
            except BackendError as exc:
                status[str(vid)] = {"state": "pending", "reason": f"status unknown: {exc}", "url": None}
                continue
            if current.state in DEAD:  # its supervisor or pods are gone: start it again
                p.problems.append(f"v{row.version} ended ({current.state.value}: {current.reason}); restarting")
                self._stop(p, key, ref)
            status[str(vid)] = {"state": current.state.value, "reason": current.reason, "url": current.url,
                                "label": f"v{row.version}"}
        p.service.versions_status = status

    def _route(self, p: Pass, ids: set[int]) -> bool:
        """Send the traffic where the row says; True once it goes there."""
        if p.service.deleting:
            return False
        status = p.service.versions_status
        weighted = [int(k) for k, w in p.service.traffic.items() if w > 0]
        missing = [status.get(str(v), {}).get("label", f"version {v}") for v in weighted
                   if status.get(str(v), {}).get("state") != "running" or not status[str(v)].get("url")]
        if missing:
            p.problems.append(f"waiting for {', '.join(missing)} to answer")
            return False
        labels = {int(k): v.get("label", k) for k, v in status.items()}
        if p.backend.name != "local":
            return self._route_kubernetes(p, labels)
        router = self._router(p)
        if router is None:
            return False
        urls = {int(k): v["url"] for k, v in status.items() if v.get("url")}
        config = {"generation": p.service.generation, **router_routes(
            p.service.traffic, p.service.shadow_version_id, p.service.mirror_percent, urls, labels)}
        token = router_token(self.secret_key, p.service.id)
        try:
            if control(router, token, "GET", "/_router/config") != {
                    "generation": config["generation"], "routes": config["routes"], "mirror": config["mirror"]}:
                control(router, token, "PUT", "/_router/config", config)
        except RouterUnavailable as exc:
            p.problems.append(str(exc))
            return False
        p.service.url = router
        return True

    def _router(self, p: Pass) -> str | None:
        entry = p.service.jobs.get(ROUTER)
        ref = JobRef.from_dict(entry) if entry and "backend" in entry else None
        if entry and ref is not None and self._predates_token(p, ROUTER, entry):
            return None
        if ref is None:
            ref = self._submit(p, ROUTER, lambda: manifests.router(p.spec))
        if ref is None:
            return None
        try:
            current = p.backend.status(ref)
        except BackendError as exc:
            p.problems.append(f"router: status unknown: {exc}")
            return None
        if current.state in DEAD:
            p.problems.append(f"router ended ({current.state.value}: {current.reason}); restarting")
            self._stop(p, ROUTER, ref)
            return None
        if current.state != JobState.RUNNING or not current.url:
            p.problems.append("waiting for the router to start")
            return None
        return current.url

    def _predates_token(self, p: Pass, key: str, entry: dict) -> bool:
        """A local job started before router and servers passed the service's token (an old router leaves a
        new server answering 401; an old server answers anyone): stopped, the next pass starts it again."""
        if p.backend.name != "local" or entry.get(TOKEN_MARK):
            return False
        p.problems.append(f"{key}: restarting it, started before the servers asked for the service's token")
        self._stop(p, key, JobRef.from_dict(entry))
        return True

    def _route_kubernetes(self, p: Pass, labels: dict[int, str]) -> bool:
        entry = p.service.jobs.get(TRAFFIC)
        if entry and entry.get("generation") == p.service.generation and "backend" in entry:
            return True
        split = {int(k): w for k, w in p.service.traffic.items()}

        def render() -> list[dict]:
            return manifests.traffic(p.spec, split, labels, p.service.shadow_version_id, p.service.mirror_percent)

        ref = self._submit_or_patch(p, TRAFFIC, entry, render)
        if ref is None:
            return False
        self._save_jobs(p.service, {**p.service.jobs, TRAFFIC: {**ref.as_dict(), "generation": p.service.generation}})
        p.service.url = f"http://{p.spec.name}.{p.spec.namespace}.svc.cluster.local"
        return True

    def _kserve(self, p: Pass) -> bool:
        """The service as one KServe InferenceService (and a shadow's own with the mirroring front); True
        once the traffic goes where the row says."""
        service = p.service
        if service.deleting:
            return False
        weighted = {int(k): w for k, w in service.traffic.items() if w > 0}
        canaries = sorted(v for v in weighted if v != service.model_version_id)
        if len(canaries) > 1:
            p.problems.append("KServe serves the stable version and at most one canary: remove the third version")
            p.failed = True
            return False
        newest = canaries[0] if canaries else service.model_version_id
        shadow = _mirrored(service)
        for vid in (newest, shadow):
            if vid is not None and vid not in p.versions:
                p.problems.append(f"model version {vid} no longer exists")
                p.failed = True
                return False
        labels = {vid: f"v{p.versions[vid].version}" if vid in p.versions else f"version {vid}" for vid in weighted}
        current = self._kserve_object(p, KSERVE, functools.partial(
            manifests.kserve, p.spec, _version_spec(p.versions[newest]), weighted.get(newest, 100)))
        status = {str(vid): _server_status(current, labels[vid]) for vid in weighted}
        shadowed = None
        if shadow is not None:
            shadowed = self._kserve_object(p, KSERVE_SHADOW, functools.partial(
                manifests.kserve, p.spec, _version_spec(p.versions[shadow]), shadow=True))
            status[str(shadow)] = _server_status(shadowed, f"v{p.versions[shadow].version}")
        service.versions_status = status
        if current is None or current.state != JobState.RUNNING or not current.url:
            return False
        if shadow is None:
            service.url = current.url
            return True
        if shadowed is None or shadowed.state != JobState.RUNNING:
            return False  # the copies start once the shadow answers (the primary serves meanwhile)
        entry = service.jobs.get(MIRROR)
        if not (entry and entry.get("generation") == service.generation and "backend" in entry):
            ref = self._submit_or_patch(p, MIRROR, entry,
                                        functools.partial(manifests.mirror, p.spec, service.mirror_percent))
            if ref is None:
                return False
            self._save_jobs(service, {**service.jobs, MIRROR: {**ref.as_dict(), "generation": service.generation}})
        service.url = f"http://{p.spec.name}-{manifests.MIRROR}.{p.spec.namespace}.svc.cluster.local"
        return True

    def _kserve_object(self, p: Pass, key: str, render: Callable[[], list[dict]]) -> Status | None:
        """One InferenceService submitted (or patched in place) once per generation, and its status."""
        entry = p.service.jobs.get(key)
        if entry and "backend" in entry and entry.get("generation") == p.service.generation:
            ref: JobRef | None = JobRef.from_dict(entry)
        else:
            ref = self._submit_or_patch(p, key, entry, render)
        if ref is None:
            return None
        self._save_jobs(p.service, {**p.service.jobs, key: {**ref.as_dict(), "generation": p.service.generation}})
        try:
            current = p.backend.status(ref)
        except BackendError as exc:
            p.problems.append(f"{key}: status unknown: {exc}")
            return None
        if current.state in DEAD:  # deleted outside the platform: submitted again by the next pass
            p.problems.append(f"{key}: the InferenceService ended ({current.state.value}: {current.reason}); "
                              "restarting")
            self._stop(p, key, ref)
            return None
        if current.state != JobState.RUNNING or not current.url:
            p.problems.append(f"{key}: waiting for the InferenceService to be ready"
                              + (f": {current.reason}" if current.reason else ""))
        return current

    def _retire(self, p: Pass, keep: set[str]) -> None:
        for key in sorted(set(p.service.jobs) - keep):
            entry = p.service.jobs[key]
            if "backend" in entry:
                self._stop(p, key, JobRef.from_dict(entry))
            else:  # submitted by a pass that died before its commit: adopt it to stop it
                row = p.versions.get(int(key[1:])) if key.startswith("v") else None
                render: Callable[[], list[dict]] | None = None
                if row is not None:
                    render = functools.partial(manifests.model_server, p.spec, _version_spec(row))
                elif key == ROUTER:
                    render = functools.partial(manifests.router, p.spec)
                elif key in (KSERVE, KSERVE_SHADOW) and p.service.model_version_id in p.versions:  # the name matters
                    render = functools.partial(manifests.kserve, p.spec,
                                               _version_spec(p.versions[p.service.model_version_id]),
                                               shadow=key == KSERVE_SHADOW)
                elif key == MIRROR:
                    render = functools.partial(manifests.mirror, p.spec, 100)
                elif key == TRAFFIC:  # only its objects' names matter (the service's): adopted to be deleted
                    split = {int(k): w for k, w in p.service.traffic.items()}
                    render = functools.partial(manifests.traffic, p.spec, split, {v: version_key(v) for v in split},
                                               None, 0)
                if render is None:
                    jobs = dict(p.service.jobs)
                    jobs.pop(key)
                    self._save_jobs(p.service, jobs)
                    continue
                try:
                    self._put_token(p)  # the local backend reads it at submit
                    ref = p.backend.submit(render())
                except (BackendError, RenderError) as exc:
                    p.problems.append(f"{key}: cannot stop: {exc}")
                    continue
                self._stop(p, key, ref)

    def _stop(self, p: Pass, key: str, ref: JobRef) -> None:
        """Stop and remove one job, then forget its key. The pass's writes are committed first: the calls take
        seconds (a cancel waits out a grace period, a cleanup archives logs) and must not hold the service's
        row; the key stays stored until the job is gone, so a worker that dies meanwhile leaves it to the next
        pass."""
        db.session.commit()
        try:
            p.backend.cancel(ref)
            if self.archive is not None:
                p.backend.cleanup(ref, self.archive)
        except BackendError as exc:
            p.problems.append(f"{key}: cannot stop yet: {exc}")
            return
        jobs = dict(p.service.jobs)
        jobs.pop(key, None)
        self._save_jobs(p.service, jobs)

    def _finish(self, p: Pass, keep: set[str], routed: bool) -> bool:
        service = p.service
        if service.deleting:
            if not service.jobs:
                service_id = service.id
                db.session.commit()  # no row held while the backend deletes; a worker dying here leaves it to beat
                p.backend.delete_secret(p.spec.namespace, manifests.router_secret(service_id))
                gone = db.session.get(InferenceService, service_id)
                if gone is not None:
                    db.session.delete(gone)
                return True
            service.reason = "deleting: " + ("; ".join(p.problems) or "stopping the servers")
            service.next_check_at = utcnow() + CONVERGING_CHECK
            return False
        settled = routed and not p.problems and set(service.jobs) - {ROUTER, TRAFFIC} == keep - {ROUTER, TRAFFIC}
        service.state = ServiceState.RUNNING if settled else ServiceState.FAILED if p.failed else ServiceState.PENDING
        service.reason = "; ".join(p.problems)
        service.next_check_at = utcnow() + (SETTLED_CHECK if settled else FAILED_CHECK if p.failed
                                            else CONVERGING_CHECK)
        return settled or p.failed  # a failure waits for a change (or its timer), not for the next second


def release(item: dict, backend: Backend, archive: LogArchive | None) -> None:
    """Stop what a deleted project's service ran (``release.project_services``): every job, its token's
    Secret. Idempotent: a job already gone is fine."""
    for entry in item["refs"]:
        ref = JobRef.from_dict(entry)
        backend.cancel(ref)
        if archive is not None:
            backend.cleanup(ref, archive)
    backend.delete_secret(item["namespace"], manifests.router_secret(item["service_id"]))


def due_services(now: dt.datetime | None = None) -> list[int]:
    """Services whose next look is due (beat's tick requests them)."""
    now = now or utcnow()
    return list(db.session.scalars(sa.select(InferenceService.id).where(
        sa.or_(InferenceService.next_check_at.is_(None), InferenceService.next_check_at <= now))))
