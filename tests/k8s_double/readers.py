"""The kubelet's part for the platform's outputs reader pods (myapp/rendering/kinds/outputs_reader.py):
the container's own command runs here, with python, against a folder standing for the claim it mounts: the
namespace's outputs claim (``ApiServerDouble.claims``) or checkpoints claim (``checkpoint_claims``; a
namespace without one has an empty claim), and its output and exit are reported as the kubelet would (log
lines, a terminated container, phase Succeeded or Failed)."""
from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from myapp.outputs.checkpoints import VOLUME as CHECKPOINTS
from myapp.rendering.contract import OUTPUTS_READER_LABEL

from .pods import terminated_state
from .store import ApiError

if TYPE_CHECKING:
    from .double import ApiServerDouble


class ReaderKubelet:
    def __init__(self, double: ApiServerDouble, empty_claim: Path):
        self.double, self.empty_claim = double, empty_claim
        self.seen: list[dict[str, Any]] = []  # every reader pod run, as created
        self.exit_code: int | None = None  # set: every reader exits with it (a failing reader)
        self._thread = threading.Thread(target=self._loop, name="k8s-double-readers", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _loop(self) -> None:
        while not self.double._stopping.wait(0.02):
            for pod in self.double.list("v1", "Pod", label_selector=OUTPUTS_READER_LABEL):
                if not (pod.get("status") or {}).get("phase"):
                    self._run(pod)

    def _run(self, pod: dict[str, Any]) -> None:
        self.seen.append(pod)
        meta, (container,) = pod["metadata"], pod["spec"]["containers"]
        (volume,) = pod["spec"]["volumes"]
        (mount,) = container["volumeMounts"]
        claims = (self.double.checkpoint_claims if volume["persistentVolumeClaim"]["claimName"] == CHECKPOINTS
                  else self.double.claims)
        claim, at = str(claims.get(meta["namespace"], self.empty_claim)), mount["mountPath"]
        argv = [sys.executable if part == "python" else part for part in container["command"]]
        argv = [claim + part[len(at):] if part == at or part.startswith(at + "/") else part for part in argv]
        done = subprocess.run(argv, capture_output=True, timeout=60, check=False)
        code = done.returncode if self.exit_code is None else self.exit_code
        lines = (done.stdout + done.stderr).decode().splitlines()
        try:
            self.double.append_log(meta["namespace"], meta["name"], *lines, container=container["name"])
            self.double.set_pod_status(meta["namespace"], meta["name"], {
                "phase": "Succeeded" if code == 0 else "Failed",
                "containerStatuses": [{"name": container["name"], "image": container["image"], "imageID": "",
                                       "ready": False, "restartCount": 0, "state": terminated_state(code)}]})
        except ApiError:  # deleted meanwhile: the worker gave up on it
            pass
