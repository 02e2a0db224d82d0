"""Serving: throughput and p95 latency through a service's local router against the model server
called directly, in the same run (job-templates/deploy-service: main.py behind router.py).

    .venv/bin/python benchmarks/serving.py            # 2,000 requests per path and model, 4 clients
    .venv/bin/python benchmarks/serving.py --quick    # 200 requests per path and model

Two models of the digits: a linear one (about half a millisecond a prediction, so the router's own
cost shows at its largest) and a random forest (a few milliseconds, closer to a real model). Each
client holds one kept-alive connection; every answer is checked (status 200, the version header,
one prediction per instance). Target: p95 through the router <= 1.15x the direct p95 for the forest;
the linear model's ratio is printed as the router's worst case. Exit status 1 if a request failed.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.serving.support import Client, model_server, router  # noqa: E402

TARGET = 1.15
ROUNDS = 4
TOKEN = "benchmark-router-token"


def models(folder: Path) -> tuple[Path, Path, list[list[float]]]:
    import joblib
    from sklearn.datasets import load_digits
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import RidgeClassifier

    digits = load_digits()
    linear, forest = folder / "linear.joblib", folder / "forest.joblib"
    joblib.dump(RidgeClassifier().fit(digits.data, digits.target), linear)
    joblib.dump(RandomForestClassifier(n_estimators=100, random_state=0).fit(digits.data, digits.target), forest)
    return linear, forest, digits.data[:50].tolist()


def drive(url: str, headers: dict[str, str], images: list, requests: int, clients: int) -> dict:
    latencies: list[float] = []
    failures: list[str] = []
    lock = threading.Lock()
    per_client = requests // clients

    def run(offset: int) -> None:
        client = Client(url, headers)
        mine = []
        for i in range(per_client):
            image = images[(offset + i) % len(images)]
            start = time.perf_counter()
            status, answer_headers, body = client.call("POST", "/predict", {"instances": [image]})
            mine.append((time.perf_counter() - start) * 1000)
            if status != 200 or answer_headers.get("x-model-version") != "v1" or len(body["predictions"]) != 1:
                with lock:
                    failures.append(f"{status} {answer_headers.get('x-model-version')} {body}")
        client.close()
        with lock:
            latencies.extend(mine)

    started = time.perf_counter()
    threads = [threading.Thread(target=run, args=(n * 7,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    if failures or len(latencies) != per_client * clients:
        raise SystemExit(f"BROKEN: {len(failures)} failed requests ({failures[:3]}), {len(latencies)} answered")
    return {"latencies": latencies, "elapsed": elapsed}


def merge(rounds: list[dict]) -> dict:
    latencies = sorted(ms for r in rounds for ms in r["latencies"])
    return {"rps": len(latencies) / sum(r["elapsed"] for r in rounds), "p50": statistics.median(latencies),
            "p95": latencies[int(len(latencies) * 0.95) - 1], "n": len(latencies)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 requests per path and model")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=4)
    options = parser.parse_args()
    requests = 200 if options.quick else options.requests
    ratios = {}
    with tempfile.TemporaryDirectory() as folder:
        linear, forest, images = models(Path(folder))
        for name, path in (("linear", linear), ("forest", forest)):
            with model_server(path, "v1") as direct:
                config = {"generation": 1, "routes": [{"version": "v1", "url": direct, "weight": 100}]}
                with router(TOKEN, config) as routed:
                    drive(direct, {}, images, 40, 2)  # warm both paths up
                    drive(routed, {"X-Router-Token": TOKEN}, images, 40, 2)
                    # Alternating rounds: a machine whose load drifts weighs on both paths alike.
                    rounds = [(drive(direct, {}, images, requests // ROUNDS, options.clients),
                               drive(routed, {"X-Router-Token": TOKEN}, images, requests // ROUNDS, options.clients))
                              for _ in range(ROUNDS)]
                    plain, through = merge([r[0] for r in rounds]), merge([r[1] for r in rounds])
            ratios[name] = through["p95"] / plain["p95"]
            for label, figures in (("direct", plain), ("router", through)):
                print(f"{name:6} {label:6} {figures['n']:5d} requests  {figures['rps']:7.0f} req/s  "
                      f"p50 {figures['p50']:6.2f} ms  p95 {figures['p95']:6.2f} ms")
            print(f"{name:6} router/direct: p95 ratio {ratios[name]:.2f}, throughput ratio "
                  f"{through['rps'] / plain['rps']:.2f}")
    verdict = "MET" if ratios["forest"] <= TARGET else "MISSED"
    print(f"target router p95 <= {TARGET}x direct (random forest, {options.clients} clients): {verdict} "
          f"(ratio {ratios['forest']:.2f}; linear model, the router's worst case: {ratios['linear']:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
