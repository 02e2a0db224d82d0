"""POST /api/v1/scheduler/simulate and GET /api/v1/scheduler/traces: admins replay a bundled trace through
policies; bounded (jobs, one replay at a time, CPU budget); bad input names the field; nothing is stored."""
from __future__ import annotations

import pytest

from myapp.api import scheduler
from myapp.scheduler.traces import FULL, SAMPLE
from tests.api.support import Shapes


def simulate(client, **body):
    """A small replay; a field given as None is left out."""
    full = {"trace": SAMPLE, "policies": ["gang-fifo"], "gpus": 64, "jobs": 200, **body}
    return client.post("/api/v1/scheduler/simulate", json={k: v for k, v in full.items() if v is not None})


def test_traces_lists_the_bundled_sample_and_the_policies(admin):
    resp = admin.get("/api/v1/scheduler/traces")
    assert resp.status_code == 200
    Shapes(admin.get("/api/v1/_openapi").get_json()).answer("get", "/api/v1/scheduler/traces", resp)
    body = resp.get_json()
    assert body["traces"][0]["name"] == SAMPLE
    assert {"gang-fifo", "sieve"} <= set(body["policies"]) and body["default_policy"] == "sieve"
    assert body["max_jobs"] == scheduler.MAX_JOBS and body["max_gpus"] == 4096 and body["node_gpus"] == 8


def test_the_full_trace_is_offered_where_the_server_has_it(admin, tmp_path, monkeypatch):
    monkeypatch.setenv("MYAPP_FULL_TRACE", str(tmp_path / "absent.csv"))
    assert [t["name"] for t in admin.get("/api/v1/scheduler/traces").get_json()["traces"]] == [SAMPLE]
    full = tmp_path / "full.csv"
    full.write_text("job_id,group,submit_s,num_gpus,duration_s\nx,g,0,1,10\ny,g,5,2,20\n")
    monkeypatch.setenv("MYAPP_FULL_TRACE", str(full))
    assert [t["name"] for t in admin.get("/api/v1/scheduler/traces").get_json()["traces"]] == [SAMPLE, FULL]
    resp = simulate(admin, trace=FULL, gpus=8, jobs=2)
    assert resp.status_code == 200 and resp.get_json()["jobs"] == 2


def test_two_policies_side_by_side_with_series(admin):
    resp = simulate(admin, policies=["gang-fifo", "sieve"], points=50)
    assert resp.status_code == 200, resp.get_json()
    shapes = Shapes(admin.get("/api/v1/_openapi").get_json())
    shapes.answer("post", "/api/v1/scheduler/simulate", resp)  # exactly the published shape
    shapes.answer("post", "/api/v1/scheduler/simulate", simulate(admin, gpus=12))  # errors too
    body = resp.get_json()
    assert body["trace"] == SAMPLE and body["gpus"] == 64 and body["jobs"] == 200
    assert [r["policy"] for r in body["results"]] == ["gang-fifo", "sieve"]
    for result in body["results"]:
        assert result["jobs"] == 200 and result["partial_gang_seconds"] == 0
        over, jct = result["series"]["over_time"], result["series"]["jct_by_submission"]
        assert len(over["t"]) == len(over["utilization"]) == len(over["waiting"]) == 50
        assert all(0 <= u <= 1 + 1e-9 for u in over["utilization"])
        assert len(jct["avg_jct_s"]) == 50 and sum(jct["jobs"]) == 200


@pytest.mark.parametrize(("body", "field"), [
    ({"trace": "../etc/passwd"}, "trace"),
    ({"trace": "nope"}, "trace"),
    ({"policies": ["fastest"]}, "policies[0]"),
    ({"policies": []}, "policies"),
    ({"gpus": 12}, "gpus"),
    ({"gpus": 4}, "gpus"),
    ({"gpus": 4104}, "gpus"),  # beyond 512 nodes
    ({"jobs": 20_001}, "jobs"),
    ({"points": 501}, "points"),
    ({"gpus": 8, "jobs": 2000}, "trace:153"),  # a 16-GPU job on 8 GPUs: the trace line is named
    ({"extra": 1}, "extra"),
])
def test_bad_input_names_the_field(admin, body, field):
    resp = simulate(admin, **body)
    assert resp.status_code == 400, resp.get_json()
    assert field in {e["field"] for e in resp.get_json()["errors"]}, resp.get_json()


def test_a_trace_over_the_job_cap_is_refused(admin, monkeypatch):
    monkeypatch.setattr(scheduler, "MAX_JOBS", 100)
    resp = simulate(admin, jobs=None)
    assert resp.status_code == 400
    reason = "the trace has 2000 jobs; replay at most 100 here"
    assert resp.get_json()["errors"] == [{"field": "jobs", "reason": reason}]


def test_one_replay_at_a_time_and_a_cpu_budget(admin, monkeypatch):
    assert scheduler._RUNNING.acquire()  # as if another request's replay were running
    try:
        resp = simulate(admin)
        assert resp.status_code == 409 and "another simulation" in resp.get_json()["message"]
    finally:
        scheduler._RUNNING.release()
    monkeypatch.setenv("MYAPP_SIMULATE_CPU_SECONDS", "0.000001")
    resp = simulate(admin, jobs=2000, policies=["gang-fifo", "sieve"])
    assert resp.status_code == 422 and "CPU seconds" in resp.get_json()["message"]
    assert not scheduler._RUNNING.locked()  # released after a failure too


def test_only_admins(user):
    assert simulate(user).status_code == 403
    assert user.get("/api/v1/scheduler/traces").status_code == 403
