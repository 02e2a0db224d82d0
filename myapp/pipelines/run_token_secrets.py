"""The run's platform API token on the backends, the part of the run controller (a mixin of RunController) that
puts its Secret where an attempt mounting it runs, revokes the token in the transaction that ends the run, and
deletes the Secrets after that commit (or, for what a crashed worker left, from beat's tick); the token itself
is myapp/auth/run_tokens.py's.
"""
from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

import sqlalchemy as sa

from ..auth import run_tokens
from ..backends import Backend, BackendError
from ..extensions import db
from ..models import PipelineRun, Project, RunToken, Task, TaskRun
from ..rendering.contract import run_token_secret

log = logging.getLogger(__name__)


class RunTokenSecrets:
    """Put, revoke and release a run's token Secret; RunController holds the state these read and write."""
    backend_for: Callable[[Task], Backend]
    now: Callable[[], dt.datetime]
    _ended: set[int]  # runs ended here: their token Secrets go after the commit
    _tokens_put: set[int]  # backends (id) this pass has put the run's token Secret on: once each

    if TYPE_CHECKING:
        def _project_namespace(self, run: PipelineRun) -> str: ...

    def release_tokens(self) -> int:
        """Beat: what ended runs left behind (a worker that died right after the commit that ended
        one): their tokens revoked, their Secrets deleted. Returns how many runs it finished."""
        candidates = run_tokens.release_candidates()
        db.session.commit()
        return sum(self._release_token(run_id) for run_id in candidates)

    def _put_token(self, run: PipelineRun, attempt: TaskRun, backend: Backend, token: RunToken | None = None) -> None:
        """The run's token Secret, where an attempt that mounts it runs, before it is submitted
        (the local backend reads it at submit). Put again by every pass that submits such an attempt:
        idempotent, the same token, and there even if an earlier put was lost with a crashed worker;
        once per backend in a pass however many attempts it submits (a read of the token row, a
        signature and a backend call each)."""
        if id(backend) in self._tokens_put or not run_tokens.mounts_token(attempt.manifests, run.id):
            return
        # The row _submit_created read with the attempts (under the same lock), else read (or, for a run
        # started before run tokens existed, made) now.
        row = token if token is not None else run_tokens.issue(run, self.now())
        namespace = self._project_namespace(run)  # not read again after the commit of new attempts
        backend.put_secret(namespace, run_token_secret(run.id), run_tokens.secret_data(row))
        self._tokens_put.add(id(backend))

    def _revoke_token(self, run: PipelineRun) -> None:
        """In the transaction that ends the run: from its commit on, the API refuses the token."""
        run_tokens.revoke(run.id, self.now())
        self._ended.add(run.id)

    def _release_ended(self) -> None:
        for run_id in sorted(self._ended):
            self._release_token(run_id)
        self._ended.clear()

    def _release_token(self, run_id: int) -> bool:
        """Delete an ended run's token Secret wherever its attempts mounted it, then mark it released.
        Idempotent; on a backend error the beat tick's release_tokens tries again. True when done."""
        row = db.session.scalar(sa.select(RunToken).where(RunToken.pipeline_run_id == run_id))
        run = db.session.get(PipelineRun, run_id)
        if row is None or row.released_at is not None or run is None:
            db.session.commit()
            return row is None or row.released_at is not None
        if not run.is_finished and row.revoked_at is None:
            db.session.commit()
            return False  # still active: its jobs need it
        if row.revoked_at is None:  # ended by a path that did not revoke
            row.revoked_at = self.now()
        namespace = db.session.get(Project, run.project_id).namespace
        backends: dict[int, Backend] = {}
        for attempt in db.session.scalars(sa.select(TaskRun).where(TaskRun.pipeline_run_id == run_id)):
            if run_tokens.mounts_token(attempt.manifests, run_id):
                backend = self.backend_for(db.session.get(Task, attempt.task_id))
                backends[id(backend)] = backend
        try:
            for backend in backends.values():
                backend.delete_secret(namespace, run_token_secret(run_id))
        except BackendError as exc:
            log.warning("run %s: token Secret not deleted yet: %s", run_id, exc)
            db.session.commit()  # the revocation stands
            return False
        row.released_at = self.now()
        db.session.commit()
        return True
