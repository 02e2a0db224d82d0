"""A training replica killed from outside (the OOM killer, an operator, a lost machine) on the local backend:
the supervisor stops the rest of the gang and reports the job failed by the machine (Status.cause
replica-lost), which the run controller answers by starting the whole gang again from its checkpoint."""
from __future__ import annotations

import os
import signal

from myapp.backends import REPLICA_LOST, JobState
from tests.backends.local.support import finished, host_pid, pid_alive, python_script, render_template
from tests.support import wait_until


def test_a_killed_replica_stops_its_gang_as_lost_not_failed(backend):
    manifests = render_template("pytorch-ddp", {"workers": 1})
    python_script(manifests, "import os, time; open('master-pid', 'w').write(str(os.getpid())); time.sleep(60)",
                  "Master")
    python_script(manifests, "import os, time; open('worker-pid', 'w').write(str(os.getpid())); time.sleep(60)",
                  "Worker")
    ref = backend.submit(manifests)
    folder = backend.job_dir(ref)
    pids = {}
    for name in ("master", "worker"):
        path = folder / f"{name}-pid"
        wait_until(lambda path=path: path.exists() and path.read_text(), what=f"the {name}")
        pids[name] = host_pid(backend, ref, f"{name}-0", int(path.read_text()))

    os.kill(pids["worker"], signal.SIGKILL)
    status = finished(backend, ref)
    assert status.state is JobState.FAILED and status.cause == REPLICA_LOST
    assert status.reason == "worker-0 was killed (signal 9)"
    assert not pid_alive(pids["master"])  # the rest of the gang is stopped, not left waiting for its rank


def test_a_replica_that_fails_by_itself_is_no_loss(backend):
    manifests = render_template("pytorch-ddp", {"workers": 1})
    python_script(manifests, "import time; time.sleep(60)", "Master")
    python_script(manifests, "raise SystemExit('bad data')", "Worker")
    status = finished(backend, backend.submit(manifests))
    assert status.state is JobState.FAILED and status.cause is None
    assert status.reason == "worker-0 exited with code 1: bad data"
