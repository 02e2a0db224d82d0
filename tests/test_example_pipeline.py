"""The Quick start's promise, end to end: `myapp init`, `myapp run`, run the demo pipeline in the
platform (DDP training on 2 local processes, model registered through the API by the job itself,
model served by an inference service the run's serve task asked for) and get a correct prediction through
the service's stable URL; deleting the service stops its servers.

On the embedded default the first-week walk (tests/e2e/test_first_week.py) runs the demo on its platform
(`myapp init`, `myapp run`) and asserts the same through `check_demo_run` and `check_demo_service`; this
test runs them on the platform of the PostgreSQL + Redis pass (marker `second_pass`)."""
from __future__ import annotations

import signal
import subprocess

import pytest
import requests

from tests.support import MYAPP, free_port, healthy, wait_until

# the whole platform, and real training and serving jobs
pytestmark = [pytest.mark.slow, pytest.mark.backends, pytest.mark.second_pass]


def check_demo_run(base: str, api: requests.Session, run_id: int, lr: float) -> dict:
    """A finished digits run: trained on both replicas (logs and metrics of each, archived), its model
    version registered by the job with the run's parameters and metrics. Returns that version."""
    attempts = api.get(f"{base}/api/v1/task_run/", params={"pipeline_run_id": run_id}).json()["items"]
    state = api.get(f"{base}/api/v1/pipeline_run/{run_id}").json()["state"]
    assert state == "succeeded", (state, [(t["state"], t["reason"]) for t in attempts])
    assert all(t["attempt"] == 1 for t in attempts)

    train = next(t for t in attempts if t["manifests"][0]["kind"] == "PyTorchJob")
    logs = api.get(f"{base}/api/v1/task_run/{train['id']}/logs", params={"search": "accuracy"}).json()
    # every replica the job declares is listed (the silent worker too); the lines are the master's
    assert logs["replicas"] == ["master-0", "worker-0"] and logs["items"][0]["line"].startswith("test accuracy")
    assert {item["replica"] for item in logs["items"]} == {"master-0"}
    all_logs = api.get(f"{base}/api/v1/task_run/{train['id']}/logs").json()
    assert "master-0" in all_logs["replicas"] and len(all_logs["items"]) > len(logs["items"])  # archived
    assert api.get(f"{base}/api/v1/task_run/{train['id']}/logs", params={"limit": 0}).status_code == 400
    samples = api.get(f"{base}/api/v1/task_run/{train['id']}/metrics").json()["items"]
    assert samples and {s["replica"] for s in samples} <= {"master-0", "worker-0"}

    versions = api.get(f"{base}/api/v1/model_version/", params={"name": "digits"}).json()["items"]
    version = [v for v in versions if v["run_id"] == run_id]  # the version links back to its run
    assert len(version) == 1 and version[0]["uri"].endswith(f"digits-{run_id}.pt"), versions
    # ... and records it: the run's parameters and the last value of each metric its training reported
    assert float(version[0]["params"]["lr"]) == lr
    assert {"loss", "accuracy"} <= set(version[0]["metrics"]) and version[0]["metrics"]["accuracy"] > 0.8
    return version[0]


def check_demo_service(base: str, api: requests.Session, versions: list[dict]) -> dict:
    """The service the demo's serve task made (its servers are the service's, not the run's) serves one of
    the runs' versions and answers through its stable URL, naming the version that answered."""
    from sklearn.datasets import load_digits

    service = api.get(f"{base}/api/v1/inference_service/", params={"name": "digits"}).json()["items"][0]
    served = [v for v in versions if v["id"] == service["model_version_id"]]
    assert service["state"] == "running" and served, (service, versions)
    features, labels = load_digits(return_X_y=True)
    answer = api.post(f"{base}{service['endpoint']}predict", json={"instances": features[:100].tolist()},
                      timeout=30)
    assert answer.status_code == 200 and answer.headers["X-Model-Version"] == f"v{served[0]['version']}"
    predictions = answer.json()["predictions"]
    # as good as the version's test accuracy says (> 0.8: the slower learning rate's model is the weaker)
    assert sum(int(p == y) for p, y in zip(predictions, labels[:100], strict=True)) >= 80
    return service


def test_demo_pipeline_trains_registers_and_serves(tmp_path, platform_env):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = platform_env(tmp_path) | {"MYAPP_BASE_URL": base, "MYAPP_TICK_SECONDS": "1",
                                    "MYAPP_ADMIN_PASSWORD": "s3cret-for-test"}
    init = subprocess.run([*MYAPP, "init"], env=env, capture_output=True, text=True, timeout=180)
    assert init.returncode == 0, init.stderr
    assert "pipeline: digits" in init.stdout
    platform = subprocess.Popen([*MYAPP, "run", "--port", str(port), "--notebook-port", str(free_port()),
                                 "--web-workers", "1"], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    service_id = None
    try:
        wait_until(lambda: healthy(base), timeout=90, interval=0.5, what=f"the platform to answer {base}/health")
        token = requests.post(f"{base}/api/v1/security/login", timeout=10, json={
            "username": "admin", "password": "s3cret-for-test", "provider": "db"}).json()["access_token"]
        api = requests.Session()
        api.headers["Authorization"] = f"Bearer {token}"
        pipeline = api.get(f"{base}/api/v1/pipeline/", params={"name": "digits"}).json()["items"][0]
        run = api.post(f"{base}/api/v1/pipeline_run/", json={"pipeline_id": pipeline["id"]}).json()
        wait_until(lambda: api.get(f"{base}/api/v1/pipeline_run/{run['id']}").json()["state"]
                   in ("succeeded", "failed", "cancelled"), timeout=300, interval=1,
                   what=lambda: "the demo run to finish; its attempts: "
                   f"{api.get(f'{base}/api/v1/task_run/', params={'pipeline_run_id': run['id']}).json()}")
        version = check_demo_run(base, api, run["id"], lr=0.05)
        assert len(api.get(f"{base}/api/v1/model_version/", params={"name": "digits"}).json()["items"]) == 1
        service_id = check_demo_service(base, api, [version])["id"]
    finally:
        if service_id is not None:  # the service outlives the run by design: deleting it stops its servers
            api.delete(f"{base}/api/v1/inference_service/{service_id}", timeout=30)
            wait_until(lambda: api.get(f"{base}/api/v1/inference_service/{service_id}", timeout=30).status_code
                       == 404, timeout=60, interval=0.5, what="the service to be gone")
        platform.send_signal(signal.SIGINT)
        platform.wait(60)
