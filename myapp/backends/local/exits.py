"""The supervisor's answer to a replica's end (a mixin of ``Supervisor``): the next init container, a restart
per the replica's restart policy (exponential delay, the job's backoff limit), its success, or the job's
failure; a training rank killed from outside is lost (``replica-lost``: the platform restarts the gang from
its checkpoint), except in elastic PyTorch, whose gang goes on without a replica gone for good while at least
``minReplicas`` remain (torchrun's agents re-form it from its checkpoint, as on Kubernetes).
"""
from __future__ import annotations

import signal
import time
from typing import Any

from ..base import REPLICA_LOST
from .procs import signal_group
from .replicas import Replica, container_exit_code, failure_reason, killed


class ReplicaExits:
    """What a replica's exit means for the job; Supervisor holds the state these read and write."""
    spec: dict[str, Any]
    settings: dict[str, Any]
    mode: str
    replicas: list[Replica]
    by_leader: dict[int, Replica]
    failures: int
    note: str
    cause: str | None
    left: set[str]  # replicas an elastic gang went on without

    def launch(self, replica: Replica) -> None:
        raise NotImplementedError

    def on_exit(self, replica: Replica, code: int) -> str | None:
        """A container ended: next init stage, restart, success or a fatal failure (returned)."""
        code = container_exit_code(code)
        container = replica.spec["containers"][replica.stage]
        ran = time.time() - replica.started_at
        self._forget_process(replica, code)
        if container["init"] and code == 0:
            replica.stage += 1
            self.launch(replica)
            return None
        replica.last_line = self._last_line(replica)
        if code == 0 and replica.spec["restart_policy"] != "Always":
            replica.phase = "succeeded"
            return None
        retryable = self._retryable(replica, code)
        if code != 0 and (not retryable or self._backoff_exhausted()):
            replica.phase = "failed"
            signum = killed(code)
            how = f"was killed (signal {signum})" if signum is not None else f"exited with code {code}"
            short = self._short_of_elastic_minimum(replica, how) if not retryable else ""
            if short is None:  # the gang re-forms without it
                return None
            if self.mode == "training" and not retryable and signum is not None:
                # A rank lost, not restarted in place (the platform's templates: Never): the rest would wait
                # for it forever. The gang stops; the platform starts it again from its checkpoint.
                self.cause = REPLICA_LOST
                return f"{replica.name} {how}{short}"
            return failure_reason(replica, code, limit_reached=retryable) + short
        if code != 0:
            self.failures += 1
        self._schedule_restart(replica, container, code, ran)
        return None

    def _short_of_elastic_minimum(self, replica: Replica, how: str) -> str | None:
        """None when an elastic PyTorch gang goes on without ``replica``, gone for good (said in the job's
        reason); else what the job's failure adds. The Master hosts the rendezvous: the gang ends with it."""
        elastic = self.spec.get("elastic")
        if not elastic or replica.type == "Master":
            return ""
        staying = sum(1 for r in self.replicas if r.phase != "failed")
        total, least = len(self.replicas), elastic["min"]
        if staying < least:
            return f"; {staying} of {total} replicas left, fewer than the elastic job's minimum of {least}"
        self.left.add(replica.name)
        self.note = f"{replica.name} {how}; going on with {staying} of {total} replicas (elastic, at least {least})"
        return None

    def _forget_process(self, replica: Replica, code: int) -> None:
        if replica.ident is not None:
            signal_group(replica.ident.pid, signal.SIGKILL)  # the container is gone: so is all it started
            self.by_leader.pop(replica.ident.pid, None)
        replica.proc, replica.ident = None, None
        replica.exit_code = code

    def _last_line(self, replica: Replica) -> str:
        deadline = time.monotonic() + 1.0
        while replica.log.open_streams and time.monotonic() < deadline:
            time.sleep(0.005)  # let the pump relay the last lines before we quote them
        return replica.log.last_line()

    def _retryable(self, replica: Replica, code: int) -> bool:
        """Would the replica's restart policy run it again after ``code``? (A Job replaces a failed pod.)"""
        return {"Always": True, "OnFailure": code != 0, "ExitCode": code >= 128,
                "Never": self.mode == "batch"}.get(replica.spec["restart_policy"], False)

    def _backoff_exhausted(self) -> bool:
        limit = self.spec.get("backoff_limit")
        return limit is not None and self.failures >= limit

    def _schedule_restart(self, replica: Replica, container: dict[str, Any], code: int, ran: float) -> None:
        """Exponential delay, reset after a long enough run; a new pod runs its init containers again."""
        replica.restarts += 1
        if ran >= self.settings["backoff_reset"]:
            replica.backoff_steps = 0
        delay = min(self.settings["restart_delay"] * 2 ** replica.backoff_steps, self.settings["max_restart_delay"])
        replica.backoff_steps += 1
        replica.phase = "backoff"
        replica.next_start = time.time() + delay
        if replica.spec["restart_policy"] == "Never" or container["init"]:
            replica.stage = 0
        if self.mode == "service":
            self.note = (f"CrashLoopBackOff: {replica.name} exited with code {code}, restart {replica.restarts} "
                         f"in {delay:.1f} s" + (f": {replica.last_line}" if replica.last_line else ""))
