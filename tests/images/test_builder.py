"""Local environment builds for real: venv + pip in the job sandbox, cached by content (from the package index on
127.0.0.1 of tests/images/conftest.py)."""
from __future__ import annotations

import os
import stat
import subprocess
import time

import pytest

from myapp.backends.local import sandbox
from myapp.images import builder
from myapp.images.builder import BuildError, build_environment


@pytest.fixture()
def home(tmp_path):
    (tmp_path / "jobs").mkdir()
    return tmp_path


def build(home, packages, lines=None, **kwargs):
    return build_environment(home / "environments", None, packages, "team-a",
                             (lines if lines is not None else []).append, uids_table=home / "jobs" / "uids.json",
                             **kwargs)


def test_a_package_list_builds_an_environment_once_then_comes_from_the_cache(home):
    lines: list[str] = []
    env, cached = build(home, ["six==1.17.0"], lines)
    assert not cached
    assert any("Successfully installed six-1.17.0" in line for line in lines), lines
    out = subprocess.run([str(env.python), "-c", "import six, sys; print(six.__version__, sys.prefix)"],
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == ["1.17.0", str(env.path)]
    # The platform owns it; nobody else may write into it (jobs get it read-only).
    for folder, dirs, files in os.walk(env.path):
        for name in [*dirs, *files]:
            info = os.lstat(os.path.join(folder, name))
            assert info.st_uid == os.geteuid()
            assert stat.S_ISLNK(info.st_mode) or not info.st_mode & 0o022, (folder, name)

    started = time.monotonic()
    again, cached = build(home, ["Six==1.17.0"], lines)
    assert cached and again == env
    assert time.monotonic() - started < 2.0


def test_pip_failure_is_the_reason_and_leaves_nothing_behind(home):
    with pytest.raises(BuildError) as caught:
        build(home, ["myapp-no-such-package-xyz==1.0"])
    assert "pip install failed (exit code 1)" in str(caught.value)
    assert "No matching distribution found for myapp-no-such-package-xyz==1.0" in str(caught.value)
    assert [p.name for p in (home / "environments").iterdir() if not p.name.startswith(".")] == []


@pytest.mark.skipif(not sandbox.detect().sandboxed, reason="needs the job sandbox (bubblewrap)")
def test_the_build_runs_sealed_off_from_the_platform(home, monkeypatch):
    """What a package's build code could do, it does as a job would: MYAPP_HOME is empty to it, the platform's
    settings are gone, and (the platform being root) it is the project's uid."""
    (home / "secret-key").write_text("s3cret")
    monkeypatch.setenv("MYAPP_TEST_LEAK", "leaked")
    probe = (f"import os; print('home:', sorted(os.listdir({str(home)!r}))); "
             "print('env:', os.environ.get('MYAPP_TEST_LEAK')); print('uid:', os.getuid())")
    real = builder._Runner.run

    def run(self, step, argv):
        real(self, step, argv)
        if step == "create the environment":  # the environment's python, in the build's sandbox
            real(self, "probe", [str(self.path / "bin" / "python"), "-c", probe])

    monkeypatch.setattr(builder._Runner, "run", run)
    lines: list[str] = []
    build(home, [], lines)
    text = "\n".join(lines)
    assert "home:" in text and "secret-key" not in text and "env: None" in text
    if os.geteuid() == 0:
        assert "uid: 0" not in text
