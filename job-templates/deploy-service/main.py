"""Minimal model server: GET /healthz, POST /predict {"instances": [[...], ...]}.

Loads a scikit-learn compatible model (joblib) from --model-path. Standard library HTTP
server, one thread per request; put it behind the Service / VirtualService.
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


def main(argv: list[str] | None = None) -> None:
    global MODEL
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model-path", default="/mnt/models/model.joblib")
    parser.add_argument("--port", type=int, default=8080)
    args = parser.parse_args(argv)
    if os.path.exists(args.model_path):
        import joblib

        MODEL = joblib.load(args.model_path)
    print(f"serving on :{args.port}, model loaded: {MODEL is not None}", flush=True)
    ThreadingHTTPServer(("0.0.0.0", args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
