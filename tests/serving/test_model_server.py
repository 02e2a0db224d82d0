"""The model server (job-templates/deploy-service/main.py) loads each framework it claims and checks
requests against the version's signature before the model sees them."""
from __future__ import annotations

import pytest

from tests.serving.support import Client, digits_models, model_server


@pytest.fixture(scope="module")
def digits(tmp_path_factory):
    return digits_models(tmp_path_factory.mktemp("digits"))


def torch_models(folder):
    import torch

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10)).eval()
    scripted, onnx = folder / "net.pt", folder / "net.onnx"
    torch.jit.script(net).save(str(scripted))
    torch.onnx.export(net, torch.zeros(1, 64), str(onnx), input_names=["x"], dynamic_axes={"x": {0: "n"}},
                      dynamo=False)
    return net, scripted, onnx


@pytest.mark.parametrize("framework", ["torchscript", "onnx"])
def test_torchscript_and_onnx_answer_like_the_network(tmp_path, digits, framework):
    import torch

    net, scripted, onnx = torch_models(tmp_path)
    images = digits[2][:5]
    with torch.no_grad():
        logits = net(torch.tensor(images, dtype=torch.float32))
    with model_server(scripted if framework == "torchscript" else onnx, "v7", framework) as url:
        status, headers, body = Client(url).call("POST", "/predict", {"instances": images})
    assert status == 200 and headers["x-model-version"] == "v7"
    assert body["predictions"] == logits.argmax(dim=1).tolist()  # scores per class: the class


def test_sklearn_answers_and_bad_requests_name_the_field(digits):
    first, _, images, labels = digits
    with model_server(first, "v1", "sklearn", {"shape": [None, 64], "dtype": "float32"}) as url:
        client = Client(url)
        status, _, body = client.call("POST", "/predict", {"instances": images})
        assert status == 200 and sum(p == y for p, y in zip(body["predictions"], labels, strict=True)) >= 16
        for request, field, reason in [
            ({"instances": [images[0][:10]]}, "instances[0]", "must have 64 values, not 10"),
            ({"instances": [[*images[0][:63], "x"]]}, "instances[0][63]", "must be a number (float32)"),
            ({"instances": []}, "instances", "must be a non-empty list"),
            ({"inputs": images}, "instances", 'is required: {"instances": [...]}'),
            ({"instances": [5]}, "instances[0]", "must be a list of 64 values"),
        ]:
            status, _, body = client.call("POST", "/predict", request)
            assert status == 400 and body["errors"] == [{"field": field, "reason": reason}], (request, body)
