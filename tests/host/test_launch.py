"""The platform's processes as the platform user (myapp/host/launch.py), for real: a user namespace mapping only
that user, a spare uid as its root and the projects' uids; no root on the host, no Celery warning, and still
one uid per project for the sandboxes, started from inside it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import psutil

PROBE = r"""
import json, os, subprocess, sys, warnings
import celery.platforms
from myapp.backends.local import sandbox
out = {"uid": os.getuid(), "euid": os.geteuid(), "home": os.environ["HOME"]}
for name, path in (("root_only", sys.argv[1]), ("platform_file", sys.argv[2]), ("hidden", sys.argv[3])):
    try:
        out[name] = open(path).read()
    except OSError as exc:
        out[name] = type(exc).__name__
os.chown(sys.argv[2], sandbox.uid_base() + 3, sandbox.uid_base() + 3)  # the worker gives a project its folder
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    celery.platforms.check_privileges({"json"})
out["celery_warnings"] = [str(w.message) for w in caught]
isolation = sandbox.detect()
out["mode"] = isolation.mode
config = sandbox._config(isolation.mode, isolation.bwrap, sandbox.uid_base() + 7, sandbox._View())
job = subprocess.run(sandbox.wrap(config, ["id", "-u"], "probe", gpus=False), capture_output=True, text=True)
out["job"] = (job.returncode, job.stdout.strip(), job.stderr.strip())
print(json.dumps(out))
"""


def test_the_platform_user_has_no_root_and_still_gives_each_project_its_uid(tmp_path):
    from myapp.backends.local import sandbox
    from myapp.host import platform_user

    home = tmp_path / "home"  # under pytest's 0700 folder of root's: reached through the namespace's tmpfs
    home.mkdir()
    (home / "secret_key").write_text("the platform's")
    os.chmod(home / "secret_key", 0o600)
    hidden = tmp_path / "hidden"
    hidden.write_text("root's")
    os.chmod(hidden, 0o644)  # readable by all, but in a folder of root's nobody else may enter
    fd, root_only = tempfile.mkstemp(dir="/tmp")  # in plain sight, root's alone (0600)
    os.close(fd)
    platform = platform_user.prepare(home)
    assert platform is not None and platform.uid != 0
    try:
        done = subprocess.run(platform.command([sys.executable, "-c", PROBE, root_only, str(home / "secret_key"),
                                                str(hidden)], platform_user.reach(home)),
                              capture_output=True, text=True, timeout=120)
    finally:
        os.unlink(root_only)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert (seen["uid"], seen["euid"]) == (platform.uid, platform.uid)
    assert seen["home"] == str(home)
    assert seen["root_only"] == "PermissionError"  # the host's root is mapped nowhere in the namespace
    assert seen["hidden"] == "FileNotFoundError"  # only MYAPP_HOME is bound where root's folder was
    assert seen["platform_file"] == "the platform's"  # what root made in MYAPP_HOME was handed over
    assert os.stat(home / "secret_key").st_uid == sandbox.uid_base() + 3
    assert seen["celery_warnings"] == []
    assert seen["mode"] == sandbox.UID
    assert seen["job"] == [0, str(sandbox.uid_base() + 7), ""]


def test_the_command_gets_signals_and_its_exit_code_comes_back(tmp_path):
    from myapp.host import platform_user

    home = tmp_path / "home"
    home.mkdir()
    platform = platform_user.prepare(home)
    assert platform is not None
    exited = subprocess.run(platform.command([sys.executable, "-c", "raise SystemExit(7)"],
                                             platform_user.reach(home)), timeout=60)
    assert exited.returncode == 7
    waiting = subprocess.Popen(platform.command([sys.executable, "-c", "import time; print('up', flush=True); "
                                                 "time.sleep(60)"], platform_user.reach(home)),
                               stdout=subprocess.PIPE, text=True)
    assert waiting.stdout is not None and waiting.stdout.readline() == "up\n"
    waiting.terminate()  # what `myapp run` does at Ctrl-C: the launcher passes it on
    assert waiting.wait(timeout=30) == 128 + 15
    # The launcher killed (what `myapp run` does to one that outlives a stop's grace): nothing is left behind.
    hung = subprocess.Popen(platform.command([sys.executable, "-c", "import signal, time; print('up', flush=True); "
                                              "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"],
                                             platform_user.reach(home)), stdout=subprocess.PIPE, text=True)
    assert hung.stdout is not None and hung.stdout.readline() == "up\n"
    command = psutil.Process(hung.pid).children()
    assert len(command) == 1 and command[0].uids().real == platform.uid
    hung.kill()
    hung.wait(timeout=30)
    _gone, alive = psutil.wait_procs(command, timeout=30)
    assert not alive
