"""The model server (job-templates/deploy-service/main.py) loads each framework it claims, checks
requests against the version's signature before the model sees them, and answers only callers with the
service's token (the router, or the platform's forwarder on Kubernetes)."""
from __future__ import annotations

import http.client
import json

import pytest

from tests.serving.support import SERVICE_TOKEN, Client, digits_models, model_server

AUTH = {"X-Router-Token": SERVICE_TOKEN}


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
        status, headers, body = Client(url, AUTH).call("POST", "/predict", {"instances": images})
    assert status == 200 and headers["x-model-version"] == "v7"
    assert body["predictions"] == logits.argmax(dim=1).tolist()  # scores per class: the class


def test_sklearn_answers_and_bad_requests_name_the_field(digits):
    first, _, images, labels = digits
    with model_server(first, "v1", "sklearn", {"shape": [None, 64], "dtype": "float32"}) as url:
        client = Client(url, AUTH)
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


def test_a_caller_without_the_services_token_gets_401_and_probes_still_answer(digits):
    """A job on the same host (or in the cluster) calling a model server directly: no prediction."""
    first, _, images, _ = digits
    with model_server(first, "v1") as url:
        for headers in ({}, {"X-Router-Token": "not-it"}, {"X-Router-Token": SERVICE_TOKEN + "x"}):
            status, _, body = Client(url, headers).call("POST", "/predict", {"instances": images[:1]})
            assert status == 401 and "X-Router-Token" in body["message"], (headers, body)
            assert Client(url, headers).call("GET", "/anything")[0] == 401
        assert Client(url).call("GET", "/healthz")[0] == 200  # probes carry no secret
        assert Client(url, AUTH).call("POST", "/predict", {"instances": images[:1]})[0] == 200
    with model_server(first, "v1", token="") as url:  # started without one: nobody gets in
        assert Client(url, {"X-Router-Token": ""}).call("POST", "/predict", {"instances": images[:1]})[0] == 401


def test_deeply_nested_json_is_a_400_naming_instances_not_a_dropped_connection(digits):
    first, _, images, _ = digits
    with model_server(first, "v1") as url:
        host, port = url.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        for body in (b'{"instances": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", b"[" * 100_000):
            conn.request("POST", "/predict", body=body, headers={**AUTH, "Content-Type": "application/json"})
            response = conn.getresponse()
            answer = json.loads(response.read())
            assert response.status == 400 and answer["errors"] == [
                {"field": "instances", "reason": "is nested too deeply"}], answer
        conn.request("POST", "/predict", body=json.dumps({"instances": images[:1]}), headers=AUTH)
        assert conn.getresponse().status == 200  # the same connection still serves


def test_an_answer_before_the_body_is_read_closes_the_connection(digits):
    """A body left unread on a kept-alive connection would be read as the next request: a caller could
    plant a request there and another caller (the router shares its connections) would get its answer."""
    first, _, images, _ = digits
    smuggled = b"GET /healthz HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n"
    with model_server(first, "v1") as url:
        host, port = url.removeprefix("http://").split(":")
        for path, headers in (("/v1/models/x:predict", AUTH), ("/predict", {}),
                              ("/predict", {**AUTH, "Content-Length": "x"})):
            conn = http.client.HTTPConnection(host, int(port), timeout=30)
            conn.request("POST", path, body=smuggled, headers={"Content-Length": str(len(smuggled)), **headers})
            response = conn.getresponse()
            response.read()
            assert response.status in (400, 401, 404) and response.getheader("Connection") == "close", path
            conn.request("POST", "/predict", body=json.dumps({"instances": images[:1]}), headers=AUTH)
            answer = conn.getresponse()  # http.client reconnects after a close: a fresh, true answer
            assert answer.status == 200 and "predictions" in json.loads(answer.read()), path
