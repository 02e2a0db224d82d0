"""The example that proves the local backend: train with DDP (Master + Worker), then serve the model.

pytorch-ddp is rendered from the catalog with workers=1 and run by LocalBackend as two host
processes talking gloo over loopback; its checkpoint is then served by deploy-service, and a
digit of the dataset posted to /predict comes back correct. Needs torch and scikit-learn.
"""
from __future__ import annotations

import json
import re
import urllib.request

import pytest

from myapp.backends.base import JobState
from tests.backends.local.support import NAMESPACE, finished, render_template, running, workload

pytestmark = pytest.mark.slow  # real training and serving jobs


TOKEN = "the-services-token"  # what the serving controller gives a model server from the service's Secret


def post(url: str, body: dict) -> dict:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", "X-Router-Token": TOKEN})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def test_train_ddp_then_serve_the_model(backend):
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    # The project's data folder: what one job writes there, the next one of the project reads.
    model = backend.data_dir(NAMESPACE) / "models" / "digits.pt"
    train = render_template("pytorch-ddp", {"workers": 1, "epochs": 12, "output_path": str(model)}, task="train")
    ref = backend.submit(train)
    assert ref.primary.kind == "PyTorchJob"
    status = finished(backend, ref, timeout=120)
    assert status.state is JobState.SUCCEEDED, status.reason
    assert status.replicas == {"Master": {"active": 0, "succeeded": 1, "failed": 0, "restarts": 0},
                               "Worker": {"active": 0, "succeeded": 1, "failed": 0, "restarts": 0}}
    lines = [line.line for line in backend.logs(ref) if line.replica == "master-0"]
    accuracy = float(next(re.fullmatch(r"test accuracy: ([0-9.]+)", x).group(1) for x in lines
                          if x.startswith("test accuracy")))
    assert accuracy >= 0.9
    assert model.is_file()

    serve = render_template("deploy-service", {"service_name": "digits", "version": "v1",
                                               "model_path": str(model)}, task="serve")
    container = workload(serve)["spec"]["template"]["spec"]["containers"][0]
    container.setdefault("env", []).append({"name": "SERVING_TOKEN", "value": TOKEN})
    service = backend.submit(serve)
    status = running(backend, service, timeout=60)
    assert status.state is JobState.RUNNING, status.reason
    assert status.url.startswith("http://127.0.0.1:")
    with urllib.request.urlopen(status.url + "/healthz", timeout=10) as response:
        assert json.loads(response.read())["model_loaded"] is True

    features, labels = load_digits(return_X_y=True)
    _, x_test, _, y_test = train_test_split(features, labels, test_size=0.2, random_state=42, stratify=labels)
    predictions = post(status.url + "/predict", {"instances": x_test.tolist()})["predictions"]
    served_accuracy = sum(int(p == y) for p, y in zip(predictions, y_test, strict=True)) / len(y_test)
    assert round(served_accuracy, 4) == accuracy  # the served model is the trained one (printed to 4 places)
    index = next(i for i, (p, y) in enumerate(zip(predictions, y_test, strict=True)) if p == y)
    digit = x_test[index].tolist()
    assert len(digit) == 64
    assert post(status.url + "/predict", {"instances": [digit]}) == {"predictions": [int(y_test[index])]}

    backend.cancel(service)
    assert backend.status(service).state is JobState.CANCELLED
