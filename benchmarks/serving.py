"""Serving: throughput and p95 latency through a service's local router against the model server
called directly, in the same run (job-templates/deploy-service: main.py behind router.py).

    .venv/bin/python benchmarks/serving.py            # 2,000 requests per path and model, 4 clients
    .venv/bin/python benchmarks/serving.py --quick    # 200 requests per path and model
    .venv/bin/python benchmarks/serving.py --against old/router.py   # and another router, same rounds

Two models of the digits: a linear one (about half a millisecond a prediction, so the router's own
cost shows at its largest) and a random forest (a few milliseconds, closer to a real model). Each
client holds one kept-alive connection; every answer is checked (status 200, the version header,
one prediction per instance). Target: p95 through the router <= 1.15x the direct p95 for both models
(the linear one is the router's worst case). ``--against`` measures another version of router.py in
the same alternating rounds (before/after a change on the same machine load). Exit status 1 if a
request failed.
"""
from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402

from tests.serving.support import SERVICE_TOKEN, Client, model_server, router_process  # noqa: E402

TARGET = 1.15
ROUNDS = 4
TOKEN = SERVICE_TOKEN  # the router's and the model server's


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
            try:
                status, answer_headers, body = client.call("POST", "/predict", {"instances": [image]})
            except OSError as exc:  # a timeout: which path, and how far it got
                with lock:
                    failures.append(f"{url} after {i} requests: {exc!r}")
                break
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


def cpu_seconds(proc) -> float:
    times = psutil.Process(proc.pid).cpu_times()
    return times.user + times.system


def merge(rounds: list[dict]) -> dict:
    latencies = sorted(ms for r in rounds for ms in r["latencies"])
    return {"rps": len(latencies) / sum(r["elapsed"] for r in rounds), "p50": statistics.median(latencies),
            "p95": latencies[int(len(latencies) * 0.95) - 1], "n": len(latencies)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 requests per path and model")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--against", type=Path, help="another router.py, measured in the same rounds")
    options = parser.parse_args()
    requests = 200 if options.quick else options.requests
    ratios = {}
    routed_headers = {"X-Router-Token": TOKEN}
    with tempfile.TemporaryDirectory() as folder:
        linear, forest, images = models(Path(folder))
        for name, path in (("linear", linear), ("forest", forest)):
            with contextlib.ExitStack() as stack:
                direct = stack.enter_context(model_server(path, "v1"))
                config = {"generation": 1, "routes": [{"version": "v1", "url": direct, "weight": 100}]}
                # Logs sampled as the platform runs it (one request in ten).
                routers = {"router": stack.enter_context(router_process(TOKEN, config, log_sample=10))}
                if options.against:
                    routers["against"] = stack.enter_context(router_process(TOKEN, config, options.against, 10))
                paths = {"direct": (direct, routed_headers),  # the model server asks for the token too
                         **{label: (url, routed_headers) for label, (url, _) in routers.items()}}
                print(f"{name:6} " + ", ".join(f"{label} {url}" for label, (url, _) in paths.items()), flush=True)
                for url, headers in paths.values():  # warm every path up
                    drive(url, headers, images, 40, 2)
                # The routers' own CPU time: what a request costs them, whatever else loads the machine.
                cpu = {label: cpu_seconds(proc) for label, (_, proc) in routers.items()}
                # Alternating rounds: a machine whose load drifts weighs on every path alike.
                rounds = [{label: drive(url, headers, images, requests // ROUNDS, options.clients)
                           for label, (url, headers) in paths.items()} for _ in range(ROUNDS)]
                cpu = {label: cpu_seconds(proc) - cpu[label] for label, (_, proc) in routers.items()}
                figures = {label: merge([r[label] for r in rounds]) for label in paths}
            plain = figures["direct"]
            for label, seen in figures.items():
                per_request = f"  router CPU {cpu[label] / seen['n'] * 1e6:5.0f} us/request" if label in cpu else ""
                print(f"{name:6} {label:7} {seen['n']:5d} requests  {seen['rps']:7.0f} req/s  "
                      f"p50 {seen['p50']:6.2f} ms  p95 {seen['p95']:6.2f} ms{per_request}")
            for label, seen in figures.items():
                if label != "direct":
                    print(f"{name:6} {label}/direct: p95 ratio {seen['p95'] / plain['p95']:.2f}, throughput ratio "
                          f"{seen['rps'] / plain['rps']:.2f}")
            ratios[name] = figures["router"]["p95"] / plain["p95"]
    verdict = "MET" if max(ratios.values()) <= TARGET else "MISSED"
    print(f"target router p95 <= {TARGET}x direct ({options.clients} clients): {verdict} "
          f"(linear model, the router's worst case: {ratios['linear']:.2f}; random forest: {ratios['forest']:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
