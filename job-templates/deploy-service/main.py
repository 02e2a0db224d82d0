"""Minimal model server: GET /healthz, POST /predict {"instances": [[...], ...]}.

Loads from --model-path, by --framework: ``sklearn`` (joblib), ``torchscript`` (``torch.jit.load``),
``onnx`` (onnxruntime), ``pytorch`` (a checkpoint written by the pytorch-ddp template: an MLP
state_dict with its layer sizes and input scaling); without --framework the file name decides.
TorchScript and ONNX networks answer classes (the argmax) when they output one row of several scores
per instance, else their output as it is. ``--signature '{"shape": [null, 64], "dtype": "float32"}'``
checks every request first: a malformed one is a 400 naming the field (``instances``, ``instances[3]``).
Every answer says which version it is (``X-Model-Version``, from --version). Standard library HTTP
server, HTTP/1.1 keep-alive, one thread per connection; put it behind the Service / VirtualService or
the local router.

Everything but ``GET /healthz`` (what probes call) asks for ``X-Router-Token`` = ``$SERVING_TOKEN``, the
service's token: the local router adds it, and on Kubernetes the platform's forwarder sends it through
the front Service; a job on the same host or in the cluster that calls the server directly gets 401.
Without ``$SERVING_TOKEN`` every such request is refused.

Every error and, at random, one in ``MODEL_SERVER_LOG_SAMPLE`` (default 10) of the other predictions is
written to stdout as one JSON line marked ``"log": "myapp.request"`` (time, version, status, ms, the first
512 bytes of the request and the answer; never a header): the platform searches these in the pod logs on
Kubernetes, where no router of its own keeps them.
"""
from __future__ import annotations

import argparse
import hmac
import json
import os
import random
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = None
SIGNATURE: dict = {}
VERSION = ""
TOKEN = b""  # $SERVING_TOKEN: what every caller but a probe must send as X-Router-Token
TOKEN_HEADER = "X-Router-Token"
LOG_MARKER = "myapp.request"
EXCERPT = 512  # bytes of the request and of the answer kept in a log line


class RequestLog:
    """Samples answers to /predict onto a stream as JSON lines (what the platform reads back from pod logs)."""

    def __init__(self, sample_every: int = 10, out=None, rng: random.Random | None = None):
        self.sample_every = max(1, sample_every)
        self.out = out if out is not None else sys.stdout
        self.random = rng or random.Random()
        self.lock = threading.Lock()  # one line at a time from the handler threads

    def record(self, status: int, ms: float, request: bytes, answer: bytes) -> bool:
        # At random, not every n-th: a caller's own pattern could otherwise hide behind the stride.
        if 0 < status < 400 and self.random.random() * self.sample_every >= 1:
            return False
        line = json.dumps({"log": LOG_MARKER, "time": round(time.time(), 6), "version": VERSION, "status": status,
                           "ms": round(ms, 3), "request": request[:EXCERPT].decode("utf-8", "replace"),
                           "response": answer[:EXCERPT].decode("utf-8", "replace")})
        with self.lock:
            self.out.write(line + "\n")
            self.out.flush()
        return True


REQUEST_LOG = RequestLog(int(os.environ.get("MODEL_SERVER_LOG_SAMPLE", "10") or 10))


class BadRequest(ValueError):
    def __init__(self, field: str, reason: str):
        super().__init__(f"{field}: {reason}")
        self.field, self.reason = field, reason


def check_instances(body: object, signature: dict) -> list:
    """The request's instances, checked against the signature's shape (null: any size) and dtype."""
    if not isinstance(body, dict) or "instances" not in body:
        raise BadRequest("instances", "is required: {\"instances\": [...]}")
    instances = body["instances"]
    if not isinstance(instances, list) or not instances:
        raise BadRequest("instances", "must be a non-empty list")
    shape = signature.get("shape") or []
    numeric = signature.get("dtype", "float32").startswith(("float", "int"))

    def walk(value: object, dims: list, field: str) -> None:
        if dims:
            if not isinstance(value, list):
                count = dims[0] if dims[0] is not None else "any number of"
                raise BadRequest(field, f"must be a list of {count} values")
            if dims[0] is not None and len(value) != dims[0]:
                raise BadRequest(field, f"must have {dims[0]} values, not {len(value)}")
            for i, item in enumerate(value):
                walk(item, dims[1:], f"{field}[{i}]")
        elif numeric and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise BadRequest(field, f"must be a number ({signature.get('dtype', 'float32')})")

    if shape:
        for i, item in enumerate(instances):
            walk(item, list(shape[1:]), f"instances[{i}]")
    return instances


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in two writes: without this, Nagle and delayed ACKs add 40 ms to each answer.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def _reply(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.answered = (status, data)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("X-Model-Version", VERSION)
        self.send_header("Content-Length", str(len(data)))
        if self._body_unread():
            # A kept-alive connection would read the body as the next request (the router reuses it for
            # other callers): close it instead.
            self.close_connection = True
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)

    def _body_unread(self) -> bool:
        if getattr(self, "body_read", False):
            return False
        return bool(self.headers.get("Transfer-Encoding")) or self.headers.get("Content-Length", "0").strip() != "0"

    def _read_body(self) -> bytes | None:
        """The request's body (Content-Length only: the router always sends one); None after a 400."""
        length = self.headers.get("Content-Length", "0").strip()
        if self.headers.get("Transfer-Encoding") or not length.isdigit():
            self._reply(400, {"message": "body: must come with a Content-Length",
                              "errors": [{"field": "body", "reason": "must come with a Content-Length"}]})
            return None
        raw = self.rfile.read(int(length))
        self.body_read = True
        return raw

    def _allowed(self) -> bool:
        """The service's token, or 401 (and the connection closed: the body is left unread)."""
        given = (self.headers.get(TOKEN_HEADER) or "").encode("latin-1", "replace")
        if TOKEN and hmac.compare_digest(given, TOKEN):
            return True
        self.close_connection = True
        self._reply(401, {"message": f"missing or wrong {TOKEN_HEADER}"})
        return False

    def do_GET(self) -> None:
        if self.path != "/healthz" and not self._allowed():
            return
        if self.path == "/healthz":
            self._reply(200, {"status": "ok", "model_loaded": MODEL is not None,
                              "version": VERSION or os.environ.get("MYAPP_TASK", "")})
        else:
            self._reply(404, {"error": "not found"})

    def do_POST(self) -> None:
        if not self._allowed():
            return
        if self.path != "/predict":
            self._reply(404, {"error": "not found"})
            return
        started, self.raw, self.answered = time.perf_counter(), b"", (0, b"")
        try:
            self._predict()
        finally:
            status, data = self.answered
            REQUEST_LOG.record(status, (time.perf_counter() - started) * 1000, self.raw, data)

    def _predict(self) -> None:
        if MODEL is None:
            self._reply(503, {"error": "model not loaded"})
            return
        raw = self._read_body()
        if raw is None:
            return
        self.raw = raw
        try:
            instances = check_instances(json.loads(raw), SIGNATURE)
        except BadRequest as exc:
            self._reply(400, {"message": str(exc), "errors": [{"field": exc.field, "reason": exc.reason}]})
            return
        except RecursionError:  # nesting deeper than the parser recurses: an answer, not a dropped connection
            reason = "is nested too deeply"
            self._reply(400, {"message": f"instances: {reason}", "errors": [{"field": "instances", "reason": reason}]})
            return
        except ValueError:
            self._reply(400, {"message": "body: is not valid JSON", "errors": [{"field": "body",
                                                                                "reason": "is not valid JSON"}]})
            return
        try:
            predictions = MODEL.predict(instances)
        except (KeyError, ValueError, TypeError, RuntimeError) as exc:
            self._reply(400, {"message": f"instances: {exc}", "errors": [{"field": "instances", "reason": str(exc)}]})
            return
        self._reply(200, {"predictions": predictions.tolist() if hasattr(predictions, "tolist") else predictions})


class TorchClassifier:
    """A pytorch-ddp checkpoint behind the scikit-learn ``predict`` interface."""

    def __init__(self, path: str):
        import torch
        from torch import nn

        self.torch = torch
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
        if "state_dict" in checkpoint:
            state, self.scale = checkpoint["state_dict"], float(checkpoint.get("input_scale", 1.0))
        else:  # a bare state_dict of the same MLP: inputs taken as already scaled
            state, self.scale = checkpoint, 1.0
        hidden, features = state["0.weight"].shape
        classes = state["2.weight"].shape[0]
        self.model = nn.Sequential(nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, classes))
        self.model.load_state_dict(state)
        self.model.eval()

    def predict(self, instances):
        with self.torch.no_grad():
            x = self.torch.tensor(instances, dtype=self.torch.float32) * self.scale
            if x.ndim != 2 or x.shape[1] != self.model[0].in_features:
                raise ValueError(f"expected instances of {self.model[0].in_features} values, got shape "
                                 f"{list(x.shape)}")
            return self.model(x).argmax(dim=1).numpy()


class TorchScriptModel:
    def __init__(self, path: str):
        import torch

        self.torch = torch
        self.model = torch.jit.load(path, map_location="cpu")
        self.model.eval()

    def predict(self, instances):
        with self.torch.no_grad():
            out = self.model(self.torch.tensor(instances, dtype=self.torch.float32))
            return out.argmax(dim=1).numpy() if out.ndim == 2 and out.shape[1] > 1 else out.numpy()


class OnnxModel:
    def __init__(self, path: str):
        import onnxruntime

        self.session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
        self.input = self.session.get_inputs()[0].name

    def predict(self, instances):
        import numpy

        out = self.session.run(None, {self.input: numpy.asarray(instances, dtype=numpy.float32)})[0]
        return out.argmax(axis=1) if out.ndim == 2 and out.shape[1] > 1 else out  # as TorchScriptModel


def load_model(path: str, framework: str = ""):
    framework = framework or ("pytorch" if path.endswith((".pt", ".pth")) else
                              "onnx" if path.endswith(".onnx") else "sklearn")
    if framework == "pytorch":
        try:
            return TorchClassifier(path)
        except (RuntimeError, KeyError, AttributeError):  # not a checkpoint dict: a TorchScript archive
            return TorchScriptModel(path)
    if framework == "torchscript":
        return TorchScriptModel(path)
    if framework == "onnx":
        return OnnxModel(path)
    import joblib

    return joblib.load(path)


def main(argv: list[str] | None = None) -> None:
    global MODEL, SIGNATURE, TOKEN, VERSION
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model-path", default="/mnt/models/model.joblib")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--framework", default="")
    parser.add_argument("--signature", default="{}")
    parser.add_argument("--version", default="")
    args = parser.parse_args(argv)
    SIGNATURE, VERSION = json.loads(args.signature), args.version
    TOKEN = os.environ.get("SERVING_TOKEN", "").strip().encode()
    if os.path.exists(args.model_path):
        MODEL = load_model(args.model_path, args.framework)
    print(f"serving {VERSION or 'a model'} on :{args.port}, model loaded: {MODEL is not None}", flush=True)
    server = ThreadingHTTPServer(("0.0.0.0", args.port), Handler)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
