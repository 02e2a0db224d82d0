"""The local router (job-templates/deploy-service/router.py) in front of real model servers: weights,
mirror, the version header, figures, sampled logs, and its token."""
from __future__ import annotations

import collections

import pytest

from tests.serving.support import Client, digits_models, model_server, router
from tests.support import wait_until

TOKEN = "router-test-token"


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    v1, v2, images, labels = digits_models(tmp_path_factory.mktemp("models"))
    with model_server(v1, "v1") as first, model_server(v2, "v2") as second:
        yield {"v1": first, "v2": second, "images": images, "labels": labels}


def config(servers, weights: dict[str, int], mirror: dict | None = None, generation: int = 1) -> dict:
    return {"generation": generation, "mirror": mirror,
            "routes": [{"version": v, "url": servers[v], "weight": w} for v, w in weights.items()]}


def test_1000_requests_at_30_percent_land_30_percent_on_the_canary(servers):
    with router(TOKEN, config(servers, {"v1": 70, "v2": 30})) as url:
        client = Client(url, {"X-Router-Token": TOKEN})
        seen: collections.Counter[str] = collections.Counter()
        for i in range(1000):
            status, headers, body = client.call("POST", "/predict", {"instances": [servers["images"][i % 20]]})
            assert status == 200, body
            seen[headers["x-model-version"]] += 1
        assert abs(seen["v2"] / 1000 - 0.30) <= 0.05, seen
        assert seen["v1"] + seen["v2"] == 1000
        stats = client.call("GET", "/_router/stats?window=60")[2]
        assert stats["versions"]["v2"]["requests"] == seen["v2"]
        assert stats["versions"]["v1"]["p95"] is not None and stats["versions"]["v1"]["errors"] == 0


def test_answers_are_the_models_and_malformed_requests_name_the_field(servers):
    with router(TOKEN, config(servers, {"v1": 100})) as url:
        client = Client(url, {"X-Router-Token": TOKEN})
        status, headers, body = client.call("POST", "/predict", {"instances": servers["images"]})
        assert status == 200 and headers["x-model-version"] == "v1"
        right = sum(p == y for p, y in zip(body["predictions"], servers["labels"], strict=True))
        assert right >= 16, body
        status, headers, body = client.call("POST", "/predict", {"instances": [[1.0, 2.0]]})
        assert status == 400 and headers["x-model-version"] == "v1"
        assert body["errors"] == [{"field": "instances[0]", "reason": "must have 64 values, not 2"}]
        status, _, body = client.call("POST", "/predict", {"rows": []})
        assert status == 400 and body["errors"][0]["field"] == "instances"
        logs = client.call("GET", "/_router/logs?q=must+have+64")[2]["items"]
        assert logs and logs[0]["status"] == 400 and logs[0]["version"] == "v1"


def test_the_shadow_gets_a_copy_and_the_caller_only_the_primary(servers):
    with router(TOKEN, config(servers, {"v1": 100}, {"version": "v2", "url": servers["v2"], "percent": 50})) as url:
        client = Client(url, {"X-Router-Token": TOKEN})
        for i in range(40):
            assert client.call("POST", "/predict", {"instances": [servers["images"][i % 20]]})[1]["x-model-version"] \
                == "v1"

        def shadowed() -> int:
            return client.call("GET", "/_router/stats?window=60")[2]["versions"].get("v2 (shadow)", {}).get("requests")
        wait_until(lambda: shadowed() == 20, what=lambda: f"20 mirrored requests, not {shadowed()}")


def test_new_routes_apply_at_once_and_every_call_needs_the_token(servers):
    with router(TOKEN, config(servers, {"v1": 100})) as url:
        client = Client(url, {"X-Router-Token": TOKEN})
        assert client.call("PUT", "/_router/config", config(servers, {"v2": 100}, generation=7))[2] == {"generation": 7}
        assert client.call("POST", "/predict", {"instances": [servers["images"][0]]})[1]["x-model-version"] == "v2"
        for headers in ({}, {"X-Router-Token": "wrong"}):
            stranger = Client(url, headers)
            assert stranger.call("POST", "/predict", {"instances": [servers["images"][0]]})[0] == 401
            assert stranger.call("PUT", "/_router/config", config(servers, {"v1": 100}))[0] == 401
        assert client.call("GET", "/_router/config")[2]["generation"] == 7
