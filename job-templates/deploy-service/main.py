"""Minimal model server: GET /healthz, POST /predict {"instances": [[...], ...]}.

Loads from --model-path either a scikit-learn compatible model (joblib) or a PyTorch
checkpoint written by the pytorch-ddp template (``.pt`` / ``.pth``: an MLP state_dict with
its layer sizes and input scaling). Standard library HTTP server, one thread per request;
put it behind the Service / VirtualService.
"""
from __future__ import annotations

import argparse
import json
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = None


class Handler(BaseHTTPRequestHandler):
    def _reply(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        if self.path == "/healthz":
            self._reply(200, {"status": "ok", "model_loaded": MODEL is not None,
                              "version": os.environ.get("MYAPP_TASK", "")})
        else:
            self._reply(404, {"error": "not found"})

    def do_POST(self) -> None:  # noqa: N802
        if self.path != "/predict":
            self._reply(404, {"error": "not found"})
            return
        if MODEL is None:
            self._reply(503, {"error": "model not loaded"})
            return
        try:
            length = int(self.headers.get("Content-Length", "0"))
            instances = json.loads(self.rfile.read(length))["instances"]
            self._reply(200, {"predictions": MODEL.predict(instances).tolist()})
        except (KeyError, ValueError, TypeError) as exc:
            self._reply(400, {"error": str(exc)})


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


def load_model(path: str):
    if path.endswith((".pt", ".pth")):
        return TorchClassifier(path)
    import joblib

    return joblib.load(path)


def main(argv: list[str] | None = None) -> None:
    global MODEL
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model-path", default="/mnt/models/model.joblib")
    parser.add_argument("--port", type=int, default=8080)
    args = parser.parse_args(argv)
    if os.path.exists(args.model_path):
        MODEL = load_model(args.model_path)
    print(f"serving on :{args.port}, model loaded: {MODEL is not None}", flush=True)
    ThreadingHTTPServer(("0.0.0.0", args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
