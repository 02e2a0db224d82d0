"""Paged lists: the list fast path (plain rows, its own JSON encoding) answers exactly what the object's
GET answers, with the count of everything the caller may see and the page asked for."""
from __future__ import annotations

import pytest

from myapp.models import TaskState
from tests.support import unique
from tests.world import build_catalog, build_project, created, insert_finished_run

pytestmark = pytest.mark.backends

# Every list of a project-owned object, and the ones whose present() adds fields (project).
LISTS = ("project", "pipeline", "task", "edge", "pipeline_run", "task_run", "notebook", "model_version",
         "inference_service", "image_build")


@pytest.fixture()
def world(app, admin, user):
    return build_project(user, build_catalog(admin), app)


@pytest.mark.parametrize("name", LISTS)
def test_list_items_equal_the_objects_get(world, user, name):
    page = user.get(f"/api/v1/{name}/?page_size=100").get_json()
    assert page["count"] == len(page["items"]) >= 1 and page["page"] == 0 and page["page_size"] == 100
    mine = [item for item in page["items"] if item["id"] == world.ids[name]]
    assert len(mine) == 1, page
    assert mine[0] == user.get(f"/api/v1/{name}/{world.ids[name]}").get_json()


def test_values_keep_their_json_shapes(world, user):
    run = user.get(f"/api/v1/task_run/?pipeline_run_id={world.ids['pipeline_run']}").get_json()["items"][0]
    assert run["manifests"] == [{"kind": "Job"}]  # JSON columns stay objects, not strings
    assert run["state"] in {s.value for s in TaskState}  # enums by value
    assert run["created_at"].endswith("+00:00")  # datetimes carry their offset (SQLite stores none)


def test_pages_count_and_filters(app, user):
    pid = created(user.post("/api/v1/project/", json={"name": unique("p")}))["id"]
    pipe = created(user.post("/api/v1/pipeline/", json={"project_id": pid, "name": "p"}))["id"]
    ids = [insert_finished_run(app, pid, pipe) for _ in range(7)]
    pages = [user.get(f"/api/v1/pipeline_run/?pipeline_id={pipe}&page_size=3&page={n}").get_json() for n in range(4)]
    assert [p["count"] for p in pages] == [7, 7, 7, 7]  # every page carries the count (the UI pages with it)
    assert [[i["id"] for i in p["items"]] for p in pages] == [ids[::-1][:3], ids[::-1][3:6], ids[:1], []]
    by_state = user.get(f"/api/v1/pipeline_run/?pipeline_id={pipe}&state=succeeded&order=id").get_json()
    assert by_state["count"] == 7 and [i["id"] for i in by_state["items"]] == ids


def test_lists_show_only_the_callers_projects(world, make_user):
    outsider = make_user()
    for name in ("pipeline", "pipeline_run", "task_run"):
        page = outsider.get(f"/api/v1/{name}/").get_json()
        assert page == {"count": 0, "page": 0, "page_size": 25, "items": []}


def test_one_statement_text_whatever_the_number_of_projects(user, make_user, monkeypatch):
    """The caller's projects are one bind parameter (myapp/api/id_list.py): a member of one project and a
    member of three send the database the same SQL (so it can be prepared once), each seeing only theirs."""
    from myapp.api import raw_select

    other = make_user()
    owned = {who: [created(who.post("/api/v1/project/", json={"name": unique("p")}))["id"] for _ in range(n)]
             for who, n in ((user, 3), (other, 1))}
    for who, pids in owned.items():
        for pid in pids:
            created(who.post("/api/v1/pipeline/", json={"project_id": pid, "name": "p"}))
    sent: list[str] = []
    compile_select = raw_select.compile_select

    def keep(statement, dialect):  # what the list hands the DBAPI cursor
        compiled = compile_select(statement, dialect)
        if "FROM pipeline" in compiled.sql:
            sent.append(compiled.sql)
        return compiled

    monkeypatch.setattr(raw_select, "compile_select", keep)
    pages = {who: who.get("/api/v1/pipeline/?page_size=100").get_json() for who in owned}
    for who, pids in owned.items():
        assert {item["project_id"] for item in pages[who]["items"]} <= set(pids)
        assert set(pids) <= {item["project_id"] for item in pages[who]["items"]}
    assert len(sent) == 2 and sent[0] == sent[1], sent
