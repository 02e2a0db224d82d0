"""Outputs in an S3-compatible store (a real S3 server, moto's, started here): on Kubernetes (the API-server
double) pods get an emptyDir, the download of the upstream folders they name and the upload sidecar instead
of the project's claim; the transfer scripts move files to and from the store; the platform lists, previews,
downloads, zips and deletes attempts' outputs there and keeps what a finished attempt left."""
from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import zipfile
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from tests.pipelines.support import make_pipeline, task_states
from tests.support import free_port, wait_until

CHECKPOINTS_VOLUME = {"name": "myapp-checkpoints", "persistentVolumeClaim": {"claimName": "myapp-checkpoints"}}

BUCKET = "outputs"
PREFIX = "platform"
METRICS = json.dumps({"step": 0, "name": "loss", "value": 0.5}).encode() + b"\n"


@pytest.fixture()
def s3(monkeypatch) -> Iterator:
    """A real S3 server on a loopback port, a bucket, and the platform configured to use it."""
    import boto3
    from moto.server import ThreadedMotoServer

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    try:
        client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                              aws_access_key_id="moto", aws_secret_access_key="moto-secret")
        client.create_bucket(Bucket=BUCKET)
        for key, value in {"MYAPP_OUTPUTS_S3_BUCKET": BUCKET, "MYAPP_OUTPUTS_S3_URL": endpoint,
                           "MYAPP_OUTPUTS_S3_PREFIX": PREFIX, "MYAPP_OUTPUTS_S3_ACCESS_KEY_ID": "moto",
                           "MYAPP_OUTPUTS_S3_SECRET_ACCESS_KEY": "moto-secret"}.items():
            monkeypatch.setenv(key, value)
        client.endpoint = endpoint  # type: ignore[attr-defined]
        yield client
    finally:
        server.stop()


def keys(s3, prefix: str) -> list[str]:
    return sorted(item["Key"] for item in s3.list_objects_v2(Bucket=BUCKET, Prefix=prefix).get("Contents", []))


def run_on_double(app, catalog, double, k8s_backend, tmp_path, before_end) -> tuple[int, dict]:
    """make -> use on the Kubernetes double; before_end(job) runs for each Job before it is marked done
    (what its pod would have done)."""
    from myapp.backends.archive import FileLogArchive
    from myapp.pipelines.controller import RunController

    run_id, _ = make_pipeline(app, catalog, {
        "make": {"args": {"command": "echo 1,2 > $MYAPP_OUTPUT_DIR/data.csv", "outputs": ["data.csv"]}},
        "use": {"args": {"command": "cat '{{ tasks.make.outputs.data.csv }}'"}},
    }, [("make", "use")])
    controller = RunController(lambda task: k8s_backend, archive=FileLogArchive(tmp_path / "logs"))
    seen: dict[str, dict] = {}

    def step() -> str:
        for job in double.list("batch/v1", "Job"):
            meta = job["metadata"]
            if meta["name"] not in seen:
                seen[meta["name"]] = job
                before_end(job)
            double.set_status("batch/v1", "Job", meta["namespace"], meta["name"],
                              {"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]})
        with app.app_context():
            return controller.reconcile(run_id).value

    wait_until(lambda: step() == "succeeded", timeout=60, what=lambda: f"the run: {task_states(app, run_id)}")
    return run_id, {job["metadata"]["labels"]["myapp.io/task"]: job for job in seen.values()}


def test_kubernetes_attempts_keep_their_outputs_in_the_store(app, catalog, double, k8s_backend, tmp_path, s3, admin):
    from myapp.extensions import db
    from myapp.models import Project, Task, TaskRun
    from myapp.pipelines import outputs_cleanup

    def upload(job: dict) -> None:  # what the job's upload sidecar does when its main container has ended
        own = job["spec"]["template"]["spec"]["containers"][0]["volumeMounts"][1]["subPath"]
        base = f"{PREFIX}/{job['metadata']['namespace']}/{own}"
        s3.put_object(Bucket=BUCKET, Key=f"{base}/data.csv", Body=b"x,y\n1,2\n")
        s3.put_object(Bucket=BUCKET, Key=f"{base}/metrics.jsonl", Body=METRICS)
        s3.put_object(Bucket=BUCKET, Key=f"{base}/plots/loss.png", Body=b"\x89PNG\r\n\x1a\nfake")
        s3.put_object(Bucket=BUCKET, Key=f"{base}0/elsewhere.txt", Body=b"attempt 10's, not attempt 1's")
        s3.put_object(Bucket=BUCKET, Key=f"{PREFIX}/{job['metadata']['namespace']}/{own.split('/')[0]}0/x.txt",
                      Body=b"another run's")

    run_id, jobs = run_on_double(app, catalog, double, k8s_backend, tmp_path, upload)
    with app.app_context():
        rows = dict(db.session.execute(sa.select(Task.name, TaskRun).join(Task)
                                       .where(TaskRun.pipeline_run_id == run_id)).tuples().all())
        namespace = db.session.get(Project, rows["make"].project_id).namespace
        make = rows["make"]
        assert make.backend == "kubernetes"
        assert make.outputs == [{"path": "data.csv", "size": 8, "preview": "csv"},
                                {"path": "metrics.jsonl", "size": len(METRICS), "preview": "metrics"},
                                {"path": "plots/loss.png", "size": 12, "preview": "image"}]
        assert make.reported_metrics == [{"step": 0, "name": "loss", "value": 0.5}]
    # The pods: an emptyDir instead of the claim, the upstream folder downloaded, the own one uploaded.
    assert double.get("v1", "PersistentVolumeClaim", namespace, "myapp-outputs") is None
    pod = jobs["use"]["spec"]["template"]["spec"]
    # The checkpoints stay on their claim: they must outlive the attempt's pod.
    assert pod["volumes"] == [{"name": "myapp-outputs", "emptyDir": {}},
                              CHECKPOINTS_VOLUME]
    download, upload_sidecar = pod["initContainers"]
    assert (download["name"], download["args"]) == ("outputs-download", [f"{run_id}/make/1"])
    assert "restartPolicy" not in download
    assert (upload_sidecar["name"], upload_sidecar["args"], upload_sidecar["restartPolicy"]) == (
        "outputs-upload", [f"{run_id}/use/1"], "Always")
    env = {e["name"]: e.get("value", e.get("valueFrom")) for e in upload_sidecar["env"]}
    assert env["MYAPP_S3_BASE"] == f"s3://{BUCKET}/{PREFIX}/{namespace}"
    assert env["AWS_ENDPOINT_URL"] == s3.endpoint
    assert env["AWS_SECRET_ACCESS_KEY"] == {"secretKeyRef": {"name": "myapp-outputs-s3",
                                                              "key": "AWS_SECRET_ACCESS_KEY"}}
    assert "moto-secret" not in json.dumps(jobs)  # the platform's own credentials never reach a job
    assert [c["name"] for c in jobs["make"]["spec"]["template"]["spec"]["initContainers"]] == ["outputs-upload"]

    # The platform reads the store: listing, preview, download, image, zip; nothing outside the folder.
    url = f"/api/v1/task_run/{make.id}"
    listed = admin.get(f"{url}/outputs").get_json()
    assert [f["path"] for f in listed["files"]] == ["data.csv", "metrics.jsonl", "plots/loss.png"]
    preview = admin.get(f"{url}/output?path=data.csv&preview=1")
    assert preview.status_code == 200 and preview.mimetype == "text/plain" and preview.data == b"x,y\n1,2\n"
    download_answer = admin.get(f"{url}/output?path=data.csv")
    assert download_answer.headers["Content-Disposition"].startswith("attachment")
    assert download_answer.data == b"x,y\n1,2\n"
    image = admin.get(f"{url}/output?path=plots/loss.png")
    assert image.mimetype == "image/png" and image.data.startswith(b"\x89PNG")
    assert admin.get(f"{url}/output?path=missing.txt").status_code == 404
    assert admin.get(f"{url}/output?path=../make/elsewhere.txt").status_code == 400
    with zipfile.ZipFile(io.BytesIO(admin.get(f"{url}/output").data)) as zf:
        assert sorted(zf.namelist()) == ["data.csv", "metrics.jsonl", "plots/loss.png"]
        assert zf.read("data.csv") == b"x,y\n1,2\n"

    # Deleting the run deletes its objects in the store, and only its own.
    assert admin.delete(f"/api/v1/pipeline_run/{run_id}").status_code == 200
    with app.app_context():
        assert outputs_cleanup.remove_due() == 1  # the worker after the commit (pipelines/outputs_cleanup.py)
    assert keys(s3, f"{PREFIX}/{namespace}/{run_id}/") == []
    assert keys(s3, f"{PREFIX}/{namespace}/") == [f"{PREFIX}/{namespace}/{run_id}0/x.txt"]


def test_an_unreachable_store_answers_503_and_the_worker_goes_on(app, catalog, admin, monkeypatch):
    from myapp.extensions import db
    from myapp.models import PipelineRun, Project, TaskRun, TaskState
    from myapp.outputs import store as outputs_store

    monkeypatch.setenv("MYAPP_OUTPUTS_S3_BUCKET", BUCKET)
    monkeypatch.setenv("MYAPP_OUTPUTS_S3_URL", f"http://127.0.0.1:{free_port()}")  # nobody listens
    monkeypatch.setenv("MYAPP_OUTPUTS_S3_ACCESS_KEY_ID", "moto")
    monkeypatch.setenv("MYAPP_OUTPUTS_S3_SECRET_ACCESS_KEY", "moto-secret")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    run_id, ids = make_pipeline(app, catalog, {"make": {}}, [])
    with app.app_context():
        run = db.session.get(PipelineRun, run_id)
        row = TaskRun(project_id=run.project_id, pipeline_run_id=run_id, task_id=ids["make"], attempt=1,
                      state=TaskState.RUNNING, backend="kubernetes", output_dir=f"{run_id}/make/1")
        db.session.add(row)
        db.session.commit()
        task_run = row.id
    answer = admin.get(f"/api/v1/task_run/{task_run}/outputs")
    assert answer.status_code == 503 and "outputs store cannot be reached" in answer.get_json()["message"]
    # The worker recording the attempt's end goes on: the outputs are read live from the store later.
    with app.app_context():
        attempt = db.session.get(TaskRun, task_run)
        attempt.transition(TaskState.SUCCEEDED, None, attempt.created_at)
        outputs_store.record(attempt, db.session.get(Project, attempt.project_id).namespace)
        db.session.commit()
        assert (attempt.state, attempt.outputs) == (TaskState.SUCCEEDED, None)


# ---- the transfer scripts, run for real: sh, the pod's env, and an `aws s3 sync` against the server ----

AWS_SHIM = textwrap.dedent('''\
    #!{python}
    """`aws s3 sync [--only-show-errors] SRC DST` (one side s3://), enough of aws-cli for the scripts."""
    import os, pathlib, sys
    import boto3
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    assert args[:2] == ["s3", "sync"], args
    src, dst = args[2:4]
    s3 = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"], region_name=os.environ["AWS_DEFAULT_REGION"])
    if dst.startswith("s3://"):
        bucket, _, prefix = dst[5:].partition("/")
        for path in pathlib.Path(src).rglob("*"):
            if path.is_file():
                s3.upload_file(str(path), bucket, prefix + path.relative_to(src).as_posix())
    else:
        bucket, _, prefix = src[5:].partition("/")
        for item in s3.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", []):
            target = pathlib.Path(dst, item["Key"][len(prefix):])
            target.parent.mkdir(parents=True, exist_ok=True)
            s3.download_file(bucket, item["Key"], str(target))
''')


def waiting(pid: int) -> bool:
    """The process sleeps (in `wait`, its trap set): /proc's state field."""
    with open(f"/proc/{pid}/stat") as fh:
        return fh.read().split()[2] == "S"


def transfer_env(container: dict, mount: str, shim_dir: str) -> dict[str, str]:
    env = {"PATH": f"{shim_dir}:{os.environ['PATH']}",
           "AWS_ACCESS_KEY_ID": "moto", "AWS_SECRET_ACCESS_KEY": "moto-secret"}  # what the Secret would give
    env |= {e["name"]: e["value"] for e in container["env"] if "value" in e}
    env["MOUNT"] = mount  # the emptyDir, here a folder
    return env


def test_the_transfer_scripts_download_upstream_and_upload_at_the_end(s3, tmp_path):
    from myapp.outputs import s3 as outputs_s3
    from myapp.outputs.declarations import attempt_dir, container_path, mount

    store = outputs_s3.settings()
    assert store is not None
    shim = tmp_path / "bin" / "aws"
    shim.parent.mkdir()
    shim.write_text(AWS_SHIM.format(python=sys.executable))
    shim.chmod(0o755)
    upstream, own = attempt_dir(7, "make", 1), attempt_dir(7, "use", 1)
    s3.put_object(Bucket=BUCKET, Key=f"{PREFIX}/team-a/{upstream}/data.csv", Body=b"a,b\n")
    pod = {"containers": [{"name": "main", "image": "python",
                           "args": ["--command", f"cat {container_path(upstream, 'data.csv')}"]}]}
    mount(pod, own)
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "use", "namespace": "team-a"},
           "spec": {"template": {"spec": pod}}}
    (pod_spec,) = [o["spec"]["template"]["spec"] for o in outputs_s3.to_store([job], store)]
    download, upload = pod_spec["initContainers"]
    folder = tmp_path / "outputs"

    ran = subprocess.run([*download["command"], *download["args"]],
                         env=transfer_env(download, str(folder), str(shim.parent)),
                         capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert (folder / upstream / "data.csv").read_bytes() == b"a,b\n"

    # The sidecar waits; the main container writes; the kubelet's SIGTERM makes it upload and exit 0.
    sidecar = subprocess.Popen([*upload["command"], *upload["args"]],
                               env=transfer_env(upload, str(folder), str(shim.parent)))
    (folder / own / "sub").mkdir(parents=True)
    (folder / own / "sub" / "result.txt").write_text("done\n")
    wait_until(lambda: waiting(sidecar.pid), what="the sidecar waiting")
    assert keys(s3, f"{PREFIX}/team-a/{own}/") == []  # nothing before the end
    sidecar.send_signal(signal.SIGTERM)
    assert sidecar.wait(timeout=60) == 0
    assert keys(s3, f"{PREFIX}/team-a/{own}/") == [f"{PREFIX}/team-a/{own}/sub/result.txt"]
