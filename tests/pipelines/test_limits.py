"""Limits an admin sets: runs of a project running at once, backfill length, minimum schedule interval.
Stored in SQL, changed through the admin API (defaults from config); refusals are 400 naming the field,
with the limit, through the API, YAML import and clone alike."""
from __future__ import annotations

import datetime as dt

import pytest
import yaml

from tests.fake_backend import FakeBackend
from tests.pipelines.support import make_pipeline
from tests.support import unique
from tests.world import created


def errors_of(resp) -> dict[str, str]:
    return {e["field"]: e["reason"] for e in resp.get_json()["errors"]}


@pytest.fixture()
def limits(app, admin):
    """Set platform limits for one test, from and back to the config defaults (whatever earlier tests set)."""
    def put(**values):
        resp = admin.put("/api/v1/limits/", json=values)
        assert resp.status_code == 200, resp.get_json()
        return resp.get_json()

    put(max_backfill_days=None, min_schedule_interval=None)
    yield put
    put(max_backfill_days=None, min_schedule_interval=None)


@pytest.fixture()
def project(user):
    return created(user.post("/api/v1/project/", json={"name": unique("p")}))


def new_pipeline(client, project, **fields):
    return client.post("/api/v1/pipeline/", json={"project_id": project["id"], "name": unique("p"), **fields})


# ---- the admin API -----------------------------------------------------------------------------------------
def test_platform_limits_are_admin_set_and_reset_to_the_config_default(app, admin, user, limits):
    got = admin.get("/api/v1/limits/").get_json()["platform"]
    assert {k: (v["value"], v["set"]) for k, v in got.items()} == {
        "max_backfill_days": (app.config["MYAPP_MAX_BACKFILL_DAYS"], False),
        "min_schedule_interval": (app.config["MYAPP_MIN_SCHEDULE_INTERVAL"], False)}
    assert limits(max_backfill_days=30)["platform"]["max_backfill_days"] == {
        "value": 30, "default": 366, "set": True, "minimum": 1, "maximum": 100_000,
        "help": "the most days one backfill may span"}
    assert limits(min_schedule_interval=5)["platform"]["max_backfill_days"]["value"] == 30  # partial update
    back = limits(max_backfill_days=None)["platform"]["max_backfill_days"]
    assert (back["value"], back["set"]) == (366, False)
    resp = admin.put("/api/v1/limits/", json={"max_backfill_days": 0})
    assert resp.status_code == 400 and "max_backfill_days" in errors_of(resp)
    assert admin.put("/api/v1/limits/", json={"max_days": 3}).status_code == 400
    assert user.get("/api/v1/limits/").status_code == 403
    assert user.put("/api/v1/limits/", json={"max_backfill_days": 9}).status_code == 403


def test_project_limit_is_set_by_admins_only(admin, user, project):
    resp = admin.put(f"/api/v1/limits/project/{project['id']}", json={"max_running_runs": 2})
    assert resp.status_code == 200, resp.get_json()
    assert resp.get_json() == {"id": project["id"], "name": project["name"], "max_running_runs": 2,
                               "running": 0, "queued": 0}
    listed = [p for p in admin.get("/api/v1/limits/").get_json()["projects"] if p["id"] == project["id"]]
    assert listed[0]["max_running_runs"] == 2
    # an owner sees it, and cannot change it through the project API
    assert user.get(f"/api/v1/project/{project['id']}").get_json()["max_running_runs"] == 2
    resp = user.put(f"/api/v1/project/{project['id']}", json={"max_running_runs": 50})
    assert resp.status_code == 400 and "max_running_runs" in errors_of(resp)
    assert user.put(f"/api/v1/limits/project/{project['id']}", json={"max_running_runs": 9}).status_code == 403
    resp = admin.put(f"/api/v1/limits/project/{project['id']}", json={"max_running_runs": 0})
    assert resp.status_code == 400 and "max_running_runs" in errors_of(resp)
    assert admin.put("/api/v1/limits/project/999999999", json={"max_running_runs": 1}).status_code == 404
    cleared = admin.put(f"/api/v1/limits/project/{project['id']}", json={"max_running_runs": None})
    assert cleared.get_json()["max_running_runs"] is None


# ---- runs of a project at once -----------------------------------------------------------------------------
def test_runs_beyond_the_project_limit_wait_queued_with_the_reason(app, catalog, admin):
    from myapp.extensions import db
    from myapp.models import PipelineRun, Project
    from myapp.pipelines.controller import RunController

    first, _ = make_pipeline(app, catalog, {"a": {}}, [])
    with app.app_context():
        project_id = db.session.get(PipelineRun, first).project_id
        name = db.session.get(Project, project_id).name
    second, _ = make_pipeline(app, catalog, {"a": {}}, [], project_id=project_id, name="other")
    assert admin.put(f"/api/v1/limits/project/{project_id}", json={"max_running_runs": 1}).status_code == 200
    backend = FakeBackend({"a": ["hang"]})
    controller = RunController(lambda task: backend)
    with app.app_context():
        assert controller.reconcile(first).value == "running"
        assert controller.reconcile(second).value == "queued"  # another pipeline, the same project
        run = db.session.get(PipelineRun, second)
        assert run.reason == f"waiting: project {name} runs at most 1 at once (max_running_runs, set by an admin)"
        db.session.commit()
    counts = admin.put(f"/api/v1/limits/project/{project_id}", json={"max_running_runs": 1}).get_json()
    assert (counts["running"], counts["queued"]) == (1, 1)
    with app.app_context():
        controller.cancel(first)
        assert controller.reconcile(second).value == "running"  # a slot is free
        assert db.session.get(PipelineRun, second).reason is None
        db.session.commit()


def test_the_limit_counts_runs_of_every_pipeline_not_just_one(app, catalog, admin):
    """Unlimited projects are untouched; a raised limit lets the waiting run start."""
    from myapp.extensions import db
    from myapp.models import PipelineRun
    from myapp.pipelines.controller import RunController

    first, _ = make_pipeline(app, catalog, {"a": {}}, [])
    with app.app_context():
        project_id = db.session.get(PipelineRun, first).project_id
    second, _ = make_pipeline(app, catalog, {"a": {}}, [], project_id=project_id, name="second")
    third, _ = make_pipeline(app, catalog, {"a": {}}, [], project_id=project_id, name="third")
    backend = FakeBackend({"a": ["hang"]})
    controller = RunController(lambda task: backend)
    admin.put(f"/api/v1/limits/project/{project_id}", json={"max_running_runs": 2})
    with app.app_context():
        assert [controller.reconcile(r).value for r in (first, second, third)] == ["running", "running", "queued"]
    admin.put(f"/api/v1/limits/project/{project_id}", json={"max_running_runs": 3})
    with app.app_context():
        assert controller.reconcile(third).value == "running"


# ---- backfill length ---------------------------------------------------------------------------------------
def test_backfill_longer_than_the_limit_is_refused_naming_end(user, project, limits):
    pipeline = created(new_pipeline(user, project, paused=True))
    limits(max_backfill_days=3)
    resp = user.post(f"/api/v1/pipeline/{pipeline['id']}/backfill", json={"start": "2026-01-01", "end": "2026-01-04"})
    assert resp.status_code == 400
    assert errors_of(resp) == {"end": "a backfill spans at most 3 days (max_backfill_days; asked for 4)"}
    ok = user.post(f"/api/v1/pipeline/{pipeline['id']}/backfill", json={"start": "2026-01-01", "end": "2026-01-03"})
    assert ok.status_code == 201 and len(ok.get_json()["run_ids"]) == 3


# ---- minimum schedule interval -----------------------------------------------------------------------------
@pytest.mark.parametrize("schedule, minimum, refused", [
    ("* * * * * *", 60, "fires twice within 1 s; the platform's minimum schedule interval is 60 s"),
    ("* * * * * */30", 60, "fires twice within 30 s"),  # seconds last
    ("* * * * * */30", 30, None),  # seconds allowed once the interval allows them
    ("* * * * * 15", 60, None),  # six fields, once a minute
    ("* * * * *", 60, None),
    ("*/5 * * * *", 3600, "fires twice within 300 s; the platform's minimum schedule interval is 3600 s"),
    ("0 8,9 * * *", 7200, "fires twice within 3600 s"),
    ("0 */5 * * *", 14400, None),  # 0, 5, 10, 15, 20 h: the shortest gap is 4 h, across midnight
    ("0 */5 * * *", 14401, "fires twice within 14400 s"),
    ("@hourly", 3600, None),
    ("* * * * * * *", 1, "five fields (minute hour day month weekday), or six with seconds last"),
    ("0 0 31 2 *", 60, None),  # five fields at a 60 s minimum: nothing to scan
    ("0 0 31 2 *", 61, "'0 0 31 2 *' never fires"),
])
def test_schedules_more_frequent_than_the_minimum_are_refused(user, project, limits, schedule, minimum, refused):
    limits(min_schedule_interval=minimum)
    resp = new_pipeline(user, project, schedule=schedule, paused=True)
    if refused is None:
        assert resp.status_code == 201, resp.get_json()
    else:
        assert resp.status_code == 400, resp.get_json()
        assert refused in errors_of(resp)["schedule"]


def test_yaml_import_and_clone_enforce_the_minimum_and_an_unchanged_schedule_stays(user, project, limits,
                                                                                  catalog):
    doc = {"project": project["name"], "name": unique("y"), "schedule": "* * * * * */10", "paused": True,
           "tasks": [{"name": "t", "template": "python", "args": {"command": "true"}}]}
    resp = user.post("/api/v1/pipeline/import", json={"yaml": yaml.safe_dump(doc)})
    assert resp.status_code == 400 and "minimum schedule interval is 60 s" in errors_of(resp)["schedule"]
    limits(min_schedule_interval=10)
    resp = user.post("/api/v1/pipeline/import", json={"yaml": yaml.safe_dump(doc)})
    assert resp.status_code == 200, resp.get_json()
    pipeline = resp.get_json()
    limits(min_schedule_interval=60)  # raised later: what is saved keeps working and can be edited
    assert user.put(f"/api/v1/pipeline/{pipeline['id']}", json={"description": "x"}).status_code == 200
    assert user.post("/api/v1/pipeline/import", json={"yaml": yaml.safe_dump(doc)}).status_code == 200
    resp = user.put(f"/api/v1/pipeline/{pipeline['id']}", json={"schedule": "* * * * * */20"})
    assert resp.status_code == 400 and "schedule" in errors_of(resp)
    resp = user.post(f"/api/v1/pipeline/{pipeline['id']}/clone", json={"name": unique("c")})
    assert resp.status_code == 400 and "minimum schedule interval" in errors_of(resp)["schedule"]


def test_a_schedule_with_seconds_fires_on_the_second(app):
    from myapp.pipelines.scheduling import latest_fire_time

    now = dt.datetime(2026, 11, 20, 12, 0, 47, tzinfo=dt.UTC)
    assert latest_fire_time("* * * * * */15", now) == dt.datetime(2026, 11, 20, 12, 0, 45, tzinfo=dt.UTC)
