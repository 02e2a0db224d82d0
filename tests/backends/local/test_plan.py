"""Planning without running: entry-code mapping, $(VAR) expansion, port remapping, kinds."""
from __future__ import annotations

import sys

import pytest

from myapp.backends.base import BackendError, UnsupportedKind
from myapp.backends.local.commands import EntryMap, remap_ports
from myapp.backends.local.container_env import expand
from myapp.backends.local.plan import Planner
from myapp.rendering.catalog import SOURCE_ROOT, catalog_root
from tests.backends.local.support import make_ctx, render_template, workload


def planner(tmp_path) -> Planner:
    return Planner(workdir=tmp_path, catalog_root=catalog_root())


def test_entry_map_follows_dockerfile_copies(tmp_path):
    """Sources are paths in the build context, the source tree's root: the catalog's files wherever the
    catalog is (here tmp_path), the job SDK the platform's own; nothing else has a local copy."""
    folder = tmp_path / "tpl"
    (folder / "src" / "pkg").mkdir(parents=True)
    (folder / "main.py").write_text("")
    (folder / "start.sh").write_text("")
    (folder / "src" / "pkg" / "mod.py").write_text("")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "shared.py").write_text("")
    (folder / "Dockerfile").write_text(
        "FROM python:3.11\nWORKDIR /app\nCOPY job-templates/tpl/main.py ./\n"
        "COPY --chmod=0755 job-templates/tpl/start.sh /usr/local/bin/start\n"
        "COPY job-templates/tpl/src/ /opt/src\nCOPY --from=builder /x /y\n"
        "COPY [\"job-templates/tpl/main.py\", \"job-templates/tpl/start.sh\", \"/multi/\"]\n"
        "COPY job-templates/other/shared.py myapp/checkpoint.py myapp/app.py main.py ../x job-templates/../setup.py "
        "/lib/\n")
    entry = EntryMap(folder)
    assert entry.map("/app/main.py") == str(folder / "main.py")
    assert entry.map("/usr/local/bin/start") == str(folder / "start.sh")
    assert entry.map("/opt/src/pkg/mod.py") == str(folder / "src" / "pkg" / "mod.py")
    assert entry.map("/multi/start.sh") == str(folder / "start.sh")
    assert entry.map("/lib/shared.py") == str(tmp_path / "other" / "shared.py")
    assert entry.map("/lib/checkpoint.py") == str(SOURCE_ROOT / "myapp" / "checkpoint.py")
    for unmapped in ("/lib/app.py", "/lib/main.py", "/lib/x", "/lib/setup.py", "/y", "--flag"):
        assert entry.map(unmapped) == unmapped  # not the job SDK, not in the build context, another image's
    assert EntryMap(None).map("/app/main.py") == "/app/main.py"


def test_every_catalog_entry_point_maps_to_the_catalog(tmp_path):
    for name in ("python", "pytorch-ddp", "deploy-service", "model-register", "xgboost", "tf-distributed"):
        assert EntryMap(catalog_root() / name).map("/app/main.py") == str(catalog_root() / name / "main.py")


def test_plan_of_pytorch_ddp(tmp_path):
    ref, run = planner(tmp_path).plan(render_template("pytorch-ddp", {"workers": 1}))
    assert run["mode"] == "training" and run["success"] == ["master-0"] and run["backoff_limit"] == 0
    master = run["replicas"][0]
    assert master["name"] == "master-0" and master["restart_policy"] == "Never"
    argv = master["containers"][-1]["argv"]
    assert argv[:2] == [sys.executable, str(catalog_root() / "pytorch-ddp" / "main.py")]
    assert argv[2:4] == ["--epochs", "20"]
    assert ref.job_name == run["job_name"] and ref.primary.kind == "PyTorchJob"
    assert run["cwd"] == str(tmp_path / ref.namespace / ref.job_name)


def test_plan_of_deploy_service_remaps_the_port(tmp_path):
    ref, run = planner(tmp_path).plan(render_template("deploy-service", {"service_name": "digits", "version": "v3"}))
    assert ref.primary.kind == "Deployment" and ref.job_name == "digits-v3"
    assert {o.kind for o in ref.objects} == {"Deployment", "Service", "HorizontalPodAutoscaler", "VirtualService"}
    replica = run["replicas"][0]
    port = replica["ports"]["http"]
    argv = replica["containers"][-1]["argv"]
    assert argv[argv.index("--port") + 1] == str(port) != "8080"
    assert replica["ready"] == {"type": "tcp", "port": port}
    assert replica["url"] == f"http://127.0.0.1:{port}"


def test_expand_and_remap_helpers():
    assert expand("$(A)-$(B)-$$(A)-$(A", {"A": "1"}) == "1-$(B)-$(A)-$(A"
    argv, env = remap_ports(["srv", "--port", "8080", "--metrics-port=9090", "8080"],
                             {"PORT": "8080", "OTHER": "8080"}, {8080: 1234, 9090: 4321})
    assert argv == ["srv", "--port", "1234", "--metrics-port=4321", "8080"]
    assert env == {"PORT": "1234", "OTHER": "8080"}


@pytest.mark.parametrize("namespace", ["secrets", "configmaps", "data", "a.b", "-x", "x" * 64])
def test_namespaces_are_labels_and_never_a_folder_of_the_workdir(tmp_path, namespace):
    """workdir/secrets/<namespace>/ and workdir/<namespace>/<job>/ must never meet."""
    manifests = render_template("python")
    workload(manifests)["metadata"]["namespace"] = namespace  # a manifest not rendered by the platform
    with pytest.raises(BackendError, match="is not a valid namespace"):
        planner(tmp_path).plan(manifests)


def test_secrets_are_read_from_the_project_folder(tmp_path):
    manifests = render_template("model-register", {"model_name": "m", "model_version": "1", "model_path": "/m.pt"},
                                ctx=make_ctx(namespace="team-a"))
    (tmp_path / "secrets" / "team-b" / "myapp-api-token").mkdir(parents=True)
    (tmp_path / "secrets" / "team-b" / "myapp-api-token" / "token").write_text("theirs")
    _, run = planner(tmp_path).plan(manifests)
    assert run["failure"].endswith(f"create the file {tmp_path / 'secrets/team-a/myapp-api-token/token'}")
    (tmp_path / "secrets" / "team-a" / "myapp-api-token").mkdir(parents=True)
    (tmp_path / "secrets" / "team-a" / "myapp-api-token" / "token").write_text("ours\n")
    _, run = planner(tmp_path).plan(manifests)
    assert run["failure"] is None and run["replicas"][0]["containers"][-1]["env"]["PLATFORM_API_TOKEN"] == "ours"


def test_one_workload_per_submit(tmp_path):
    manifests = render_template("python") + render_template("python")
    with pytest.raises(BackendError, match="exactly one workload"):
        planner(tmp_path).plan(manifests)
    with pytest.raises(BackendError):
        planner(tmp_path).plan([])


def test_unknown_kinds_are_unsupported(tmp_path):
    manifests = [*render_template("python"), {"apiVersion": "example.com/v1", "kind": "Widget",
                                              "metadata": {"name": "w"}}]
    with pytest.raises(UnsupportedKind, match="Widget"):
        planner(tmp_path).plan(manifests)


def test_pod_without_command_is_unsupported(tmp_path):
    manifests = render_template("python")
    container = workload(manifests)["spec"]["template"]["spec"]["containers"][0]
    del container["command"]
    with pytest.raises(UnsupportedKind, match="entrypoint"):
        planner(tmp_path).plan(manifests)


def test_gang_podgroup_is_accepted(tmp_path):
    from myapp.rendering import RenderContext, ResourceGroup

    ctx = RenderContext(project="p", namespace="proj-p", run_id=1, task="t", service_account="proj-p-runner",
                        resource_group=ResourceGroup(name="g", gang_scheduling=True))
    manifests = render_template("pytorch-ddp", {"workers": 1}, ctx=ctx)
    assert manifests[0]["kind"] == "PodGroup"
    ref, run = planner(tmp_path).plan(manifests)
    assert ref.primary.kind == "PyTorchJob" and len(run["replicas"]) == 2


def test_plan_of_elastic_pytorch_runs_torchrun_at_the_masters_address(tmp_path):
    from myapp.rendering import render
    from myapp.rendering.catalog import load_template
    from tests.rendering.test_elastic import elastic_copy

    catalog = tmp_path / "catalog"
    template = load_template(elastic_copy(catalog, elastic={"min": 1, "max": 3}))
    ref, run = Planner(workdir=tmp_path / "work", catalog_root=catalog).plan(
        render(template, {"workers": 1}, make_ctx()))
    ports = set()
    for replica in run["replicas"]:
        argv, env = replica["containers"][-1]["argv"], replica["containers"][-1]["env"]
        assert argv[:3] == [sys.executable, "-m", "torch.distributed.run"]  # torchrun, from the job's python
        assert argv[3] == "--nnodes=1:3" and f"--rdzv-id={ref.job_name}" in argv
        assert f"--rdzv-endpoint=127.0.0.1:{env['MASTER_PORT']}" in argv
        assert argv[argv.index("--max-restarts=3") + 1] == str(catalog / "pytorch-ddp" / "main.py")
        ports.add(env["MASTER_PORT"])
    assert len(ports) == 1  # one rendezvous for the gang
    assert run["elastic"] == {"min": 1, "max": 3}  # the supervisor's floor for going on without a replica


@pytest.mark.parametrize(("policy", "expected"), [
    ({"minReplicas": 2}, {"min": 2, "max": 2}), ({"maxReplicas": 3}, {"min": 3, "max": 3}),
    ({"rdzvBackend": "c10d"}, {"min": 2, "max": 2}),  # both from the Workers' count, as the operator does
    (None, None)])
def test_the_plan_keeps_the_elastic_range_as_the_operator_defaults_it(tmp_path, policy, expected):
    manifests = render_template("pytorch-ddp", {"workers": 2})
    if policy is not None:
        workload(manifests)["spec"]["elasticPolicy"] = policy
    _, run = planner(tmp_path).plan(manifests)
    assert run["elastic"] == expected


def test_an_elastic_range_upside_down_is_refused_naming_it(tmp_path):
    manifests = render_template("pytorch-ddp", {"workers": 2})
    workload(manifests)["spec"]["elasticPolicy"] = {"minReplicas": 3, "maxReplicas": 2}
    with pytest.raises(BackendError, match="minReplicas <= maxReplicas"):
        planner(tmp_path).plan(manifests)
