"""Local jobs that name an environment image run with that environment: its python, its packages,
bound read-only into the sandbox; other images (and other projects) keep the host's Python."""
from __future__ import annotations

import json

import pytest

from myapp.images import environments
from myapp.images.builder import build_environment
from tests.backends.local.support import (
    NAMESPACE,
    Backends,
    finished,
    lines_of,
    make_ctx,
    python_script,
    render_template,
    workload,
)

IMAGE = "registry.local/team/six-env:1"
PROBE = """
import json, os, sys
try:
    import six
    version = six.__version__
except ImportError:
    version = None
try:
    open(os.path.join(sys.prefix, 'written-by-a-job'), 'w').close()
    wrote = True
except OSError:
    wrote = False
print('PROBE ' + json.dumps({'six': version, 'prefix': sys.prefix, 'wrote': wrote,
                             'path0': os.environ['PATH'].split(':')[0]}), flush=True)
"""


@pytest.fixture()
def backends(tmp_path):
    factory = Backends(tmp_path / "work")  # the environments are beside it, as in MYAPP_HOME
    yield factory
    factory.stop_all()


@pytest.fixture()
def env(tmp_path):
    root = tmp_path / "environments"
    found, _ = build_environment(root, None, ["six==1.17.0"], NAMESPACE, lambda line: None,
                                 uids_table=tmp_path / "work" / "uids.json")
    environments.register(root, NAMESPACE, IMAGE, found.hash)
    return found


def probe(backend, image: str, namespace: str = NAMESPACE) -> dict:
    manifests = render_template("python", ctx=make_ctx(namespace=namespace))
    python_script(manifests, PROBE)
    for container in workload(manifests)["spec"]["template"]["spec"]["containers"]:
        container["image"] = image
    ref = backend.submit(manifests)
    status = finished(backend, ref)
    lines = [line for line in lines_of(backend, ref) if line.startswith("PROBE ")]
    assert lines, (status, lines_of(backend, ref))
    return json.loads(lines[-1][6:])


def test_a_job_naming_the_image_runs_with_its_environment_read_only(backends, env, tmp_path):
    backend = backends(environments=tmp_path / "environments")
    seen = probe(backend, IMAGE)
    assert seen == {"six": "1.17.0", "prefix": str(env.path), "wrote": False, "path0": str(env.bin)}


def test_other_images_and_other_projects_keep_the_hosts_python(backends, env, tmp_path):
    backend = backends(environments=tmp_path / "environments")
    assert probe(backend, "python:3.11-slim")["prefix"] != str(env.path)
    assert probe(backend, IMAGE, namespace="proj-other")["prefix"] != str(env.path)


SEALED = """
import json, os, sys
import yaml  # a package of the platform's venv, which the default environment chains
print('PROBE ' + json.dumps({'prefix': sys.prefix, 'secret_key': os.path.exists(os.environ['SECRET_FILE']),
                             'variables': sorted(k for k in os.environ if k in ('SECRET_KEY', 'DATABASE_URL'))}),
      flush=True)
"""


def test_the_platforms_default_environment_runs_any_projects_job_sealed_off(backends, tmp_path, monkeypatch):
    """`myapp init`'s local default (myapp/images/defaults.py): every project's jobs naming it run its python,
    which imports the platform's packages, and see neither the platform's variables nor MYAPP_HOME."""
    from myapp.images.defaults import ensure_local_environment

    root = tmp_path / "environments"
    default, _made = ensure_local_environment(root)
    environments.register_shared(root, "myapp/python-ml:3.11", default.hash)
    (tmp_path / "secret_key").write_text("s3cret")  # MYAPP_HOME's, beside the jobs' and environments' folders
    monkeypatch.setenv("SECRET_KEY", "s3cret")
    monkeypatch.setenv("DATABASE_URL", "postgresql://platform/db")
    backend = backends(environments=root, extra_env={"SECRET_FILE": str(tmp_path / "secret_key")})
    for namespace in (NAMESPACE, "proj-other"):
        manifests = render_template("python", ctx=make_ctx(namespace=namespace))
        python_script(manifests, SEALED)
        for container in workload(manifests)["spec"]["template"]["spec"]["containers"]:
            container["image"] = "myapp/python-ml:3.11"
        ref = backend.submit(manifests)
        status = finished(backend, ref)
        lines = [line for line in lines_of(backend, ref) if line.startswith("PROBE ")]
        assert lines, (status, lines_of(backend, ref))
        assert json.loads(lines[-1][6:]) == {"prefix": str(default.path), "secret_key": False, "variables": []}
