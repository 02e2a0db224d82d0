"""The environment a local replica gets: the container env, secrets, and what operators inject."""
from __future__ import annotations

import json
import os

import pytest

from myapp.backends.base import JobState
from tests.backends.local.support import (
    NAMESPACE,
    PRINT_ENV,
    env_of,
    finished,
    lines_of,
    make_ctx,
    print_env_and_wait,
    python_script,
    render_template,
    workload,
)

pytestmark = pytest.mark.slow  # every test runs real jobs


def test_env_contract_secret_and_no_platform_leak(backend, monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgresql://platform-secret@db/myapp")  # the worker's own env
    secret = backend.workdir / "secrets" / NAMESPACE / "myapp-api-token" / "token"
    secret.parent.mkdir(parents=True)
    secret.write_text("s3cr3t-token\n")
    ctx = make_ctx("register", attempt=2)
    manifests = render_template("model-register", {"model_name": "digits", "model_version": "1",
                                                   "model_path": "/tmp/model.pt"}, ctx=ctx)
    python_script(manifests, PRINT_ENV)
    ref = backend.submit(manifests)
    status = finished(backend, ref)
    assert status.state is JobState.SUCCEEDED, status.reason
    env = env_of(backend, ref)["job-0"]
    assert {k: env[k] for k in env if k.startswith("MYAPP_")} == {
        "MYAPP_PROJECT": "local", "MYAPP_PIPELINE": "backend-tests", "MYAPP_RUN_ID": str(ctx.run_id),
        "MYAPP_TASK": "register", "MYAPP_ATTEMPT": "2", "MYAPP_CPU": "500m", "MYAPP_MEMORY": "512Mi",
        "MYAPP_GPU": "0"}
    assert env["PLATFORM_API_TOKEN"] == "s3cr3t-token"
    assert env["PLATFORM_API_URL"].startswith("http://")
    assert "DATABASE_URL" not in env
    assert env["CUDA_VISIBLE_DEVICES"] == ""
    assert env["HOSTNAME"] == f"{ref.job_name}-0"
    assert env["PATH"].split(os.pathsep)[0] == os.path.dirname(backend.python)


def test_missing_secret_fails_with_clear_reason(backend):
    manifests = render_template("model-register", {"model_name": "digits", "model_version": "1",
                                                   "model_path": "/tmp/model.pt"})
    ref = backend.submit(manifests)
    status = finished(backend, ref)
    assert status.state is JobState.FAILED
    assert status.reason.startswith("CreateContainerConfigError: job-0: secret 'myapp-api-token' key 'token'")
    assert str(backend.workdir / "secrets" / NAMESPACE / "myapp-api-token" / "token") in status.reason


def test_template_entry_code_runs_from_the_catalog_folder(backend):
    """`python /app/main.py` maps to job-templates/model-register/main.py via its Dockerfile."""
    secret = backend.workdir / "secrets" / NAMESPACE / "myapp-api-token" / "token"
    secret.parent.mkdir(parents=True)
    secret.write_text("x")
    manifests = render_template("model-register", {"model_name": "digits", "model_version": "7",
                                                   "model_path": "/tmp/model.pt", "dry_run": True,
                                                   "metrics": '{"accuracy": 0.97}'})
    ref = backend.submit(manifests)
    status = finished(backend, ref)
    assert status.state is JobState.SUCCEEDED, status.reason
    record = json.loads("\n".join(lines_of(backend, ref)))
    assert record["version"] == 7 and record["metrics"] == {"accuracy": 0.97} and record["project"] == "local"


def test_working_folder_per_attempt(backend):
    manifests = render_template("python", {"script": "import os; print(os.getcwd())"})
    ref = backend.submit(manifests)
    assert finished(backend, ref).state is JobState.SUCCEEDED
    assert lines_of(backend, ref) == [str(backend.workdir / ref.namespace / ref.job_name)]


def test_pytorchjob_master_worker_env(backend):
    manifests = render_template("pytorch-ddp", {"workers": 2})
    python_script(manifests, print_env_and_wait(3))
    ref = backend.submit(manifests)
    assert finished(backend, ref).state is JobState.SUCCEEDED
    envs = env_of(backend, ref)
    assert sorted(envs) == ["master-0", "worker-0", "worker-1"]
    ports = {env["MASTER_PORT"] for env in envs.values()}
    assert len(ports) == 1 and ports.pop().isdigit()
    for replica, rank in (("master-0", 0), ("worker-0", 1), ("worker-1", 2)):
        env = envs[replica]
        assert (env["MASTER_ADDR"], env["WORLD_SIZE"], env["RANK"]) == ("127.0.0.1", "3", str(rank))
        assert (env["PET_MASTER_ADDR"], env["PET_MASTER_PORT"]) == ("127.0.0.1", env["MASTER_PORT"])
        assert (env["PET_NNODES"], env["PET_NODE_RANK"], env["PET_NPROC_PER_NODE"]) == ("3", str(rank), "1")
        assert env["OMP_NUM_THREADS"] == "1" and env["MYAPP_TASK"] == "job"


def test_xgboostjob_env(backend):
    manifests = render_template("xgboost", {"workers": 1})
    python_script(manifests, print_env_and_wait(2))
    ref = backend.submit(manifests)
    assert finished(backend, ref).state is JobState.SUCCEEDED
    envs = env_of(backend, ref)
    assert [envs[r]["RANK"] for r in ("master-0", "worker-0")] == ["0", "1"]
    assert {envs[r]["WORLD_SIZE"] for r in envs} == {"2"}
    assert envs["master-0"]["MASTER_PORT"] == envs["worker-0"]["MASTER_PORT"]
    assert "PET_NNODES" not in envs["master-0"]


def test_tfjob_tf_config(backend):
    manifests = render_template("tf-distributed", {"ps": 1, "workers": 2})
    python_script(manifests, print_env_and_wait(4))
    ref = backend.submit(manifests)
    assert finished(backend, ref).state is JobState.SUCCEEDED
    envs = env_of(backend, ref)
    assert sorted(envs) == ["chief-0", "ps-0", "worker-0", "worker-1"]
    configs = {replica: json.loads(env["TF_CONFIG"]) for replica, env in envs.items()}
    cluster = configs["chief-0"]["cluster"]
    assert sorted(cluster) == ["chief", "ps", "worker"]
    assert [len(cluster[t]) for t in ("chief", "ps", "worker")] == [1, 1, 2]
    addresses = [a for t in cluster.values() for a in t]
    assert all(a.startswith("127.0.0.1:") for a in addresses) and len(set(addresses)) == 4
    for replica, (kind, index) in {"chief-0": ("chief", 0), "ps-0": ("ps", 0), "worker-0": ("worker", 0),
                                   "worker-1": ("worker", 1)}.items():
        assert configs[replica]["cluster"] == cluster
        assert configs[replica]["task"] == {"type": kind, "index": index}


def test_dollar_references_in_args_are_expanded(backend):
    manifests = render_template("python")
    container = workload(manifests)["spec"]["template"]["spec"]["containers"][0]
    container["command"] = ["python", "-c", "import sys; print(sys.argv[1:])", "$(MYAPP_TASK)", "$$(KEEP)",
                            "$(UNDEFINED)"]
    container.pop("args")
    ref = backend.submit(manifests)
    assert finished(backend, ref).state is JobState.SUCCEEDED
    assert lines_of(backend, ref) == ["['job', '$(KEEP)', '$(UNDEFINED)']"]


@pytest.mark.parametrize("key", ["..", "a/b"])
def test_secret_keys_cannot_escape_the_secrets_folder(backend, key):
    manifests = render_template("model-register", {"model_name": "digits", "model_version": "1",
                                                   "model_path": "/tmp/model.pt"})
    container = workload(manifests)["spec"]["template"]["spec"]["containers"][0]
    container["env"][-1]["valueFrom"]["secretKeyRef"]["key"] = key
    ref = backend.submit(manifests)
    status = finished(backend, ref)
    assert status.state is JobState.FAILED and "invalid secret key" in status.reason
