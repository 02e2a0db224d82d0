"""Nothing of a pipeline is lost on the way: clone copies every column of every row, YAML carries every
setting (export -> apply -> export is the identity), the task preview fills macros, and the domain
code under myapp/pipelines never reaches into the API layer."""
from __future__ import annotations

import ast
import json
import uuid
from pathlib import Path

import pytest
import sqlalchemy as sa
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from myapp.models.pipeline import WEBHOOK_EVENTS
from tests.support import unique
from tests.world import build_catalog, created

MYAPP = Path(__file__).resolve().parents[2] / "myapp"

# Columns a copy must not share with its source (identity and bookkeeping), and paused (see clone).
# The webhook's secret too: a copy signs with a key of its own.
PIPELINE_OWN = {"id", "name", "created_at", "updated_at", "created_by_id", "paused", "webhook_secret"}
TASK_OWN = {"id", "pipeline_id", "created_at", "updated_at"}


def every_setting_pipeline(admin, user) -> dict:
    """A pipeline whose settings, and every setting of every task, differ from the defaults."""
    cat = build_catalog(admin)
    project = created(user.post("/api/v1/project/", json={"name": unique("p")}))
    pipe = created(user.post("/api/v1/pipeline/", json={
        "project_id": project["id"], "name": "full", "description": "nightly training",
        "schedule": "0 3 * * *", "parameters": {"lr": "0.1", "epochs": 7}, "paused": True,
        "max_active_runs": 3, "concurrency_policy": "skip", "depends_on_past": True,
        "webhook_url": "http://hooks.local/notify", "webhook_events": ["run.failed", "task.failed"]}))
    tpl, group = cat["job_template"], cat["resource_group"]
    image = admin.get(f"/api/v1/image/{cat['image']}").get_json()

    def task(key, name, **fields):
        return {"key": key, "name": name, "template_id": tpl, "resource_group_id": group,
                "image": f"{image['repository']}:{image['tag']}", **fields}

    graph = user.put(f"/api/v1/pipeline/{pipe['id']}/graph", json={"tasks": [
        task("a", "prepare", args={"epochs": 5}, resources={"cpu": "2", "memory": "2Gi"}, retries=3, retry_delay=5,
             timeout=600, trigger_rule="all_done", position={"x": 10.5, "y": -3}),
        task("b", "train", args={"optimizer": "sgd"}, resources={"cpu": "500m"},
             retries=1, retry_delay=0, timeout=60, trigger_rule="one_failed", position={"x": 200, "y": 40}),
        task("c", "report", args={"optimizer": "adam"}, resources={"memory": "512Mi"}, retries=100,
             retry_delay=86_400, timeout=1, trigger_rule="all_done", position={"x": 0.25, "y": 1e6}),
    ], "edges": [{"upstream": "a", "downstream": "b"}, {"upstream": "a", "downstream": "c"},
                 {"upstream": "b", "downstream": "c"}]})
    assert graph.status_code == 200, graph.get_json()
    return {"pipeline": pipe, "project": project, "catalog": cat}


def rows(app, pipeline_id: int) -> tuple[dict, list[dict], list[tuple[str, str]]]:
    """The pipeline's row, its tasks' rows (by id) and its edges as (upstream name, downstream name)."""
    from myapp.extensions import db
    from myapp.models import Edge, Pipeline, Task

    def as_dict(obj) -> dict:
        return {c.key: getattr(obj, c.key) for c in sa.inspect(type(obj)).column_attrs}

    with app.app_context():
        pipeline = as_dict(db.session.get(Pipeline, pipeline_id))
        tasks = [as_dict(t) for t in db.session.scalars(sa.select(Task).filter_by(pipeline_id=pipeline_id)
                                                         .order_by(Task.id))]
        names = {t["id"]: t["name"] for t in tasks}
        edges = [(names[e.upstream_task_id], names[e.downstream_task_id]) for e in db.session.scalars(
            sa.select(Edge).filter_by(pipeline_id=pipeline_id).order_by(Edge.id))]
    return pipeline, tasks, edges


def test_fixture_sets_every_setting_to_a_non_default(app, admin, user):
    """The tests below prove "nothing is lost" only if nothing in the source is a default."""
    from myapp.pipelines.tasks import PIPELINE_DEFAULTS, TASK_DEFAULTS

    pipeline, tasks, _ = rows(app, every_setting_pipeline(admin, user)["pipeline"]["id"])
    assert [k for k, default in PIPELINE_DEFAULTS.items() if pipeline[k] == default] == []
    for task in tasks:
        assert [k for k, default in TASK_DEFAULTS.items() if task[k] == default] == [], task["name"]


# ---- clone ----------------------------------------------------------------------------------------------
def test_clone_copies_every_column_of_every_row(app, admin, user):
    world = every_setting_pipeline(admin, user)
    source_id = world["pipeline"]["id"]
    copy = created(user.post(f"/api/v1/pipeline/{source_id}/clone", json={"name": "full-copy"}))
    src_pipeline, src_tasks, src_edges = rows(app, source_id)
    new_pipeline, new_tasks, new_edges = rows(app, copy["id"])

    def without(row: dict, own: set[str]) -> dict:
        return {k: v for k, v in row.items() if k not in own}

    assert without(new_pipeline, PIPELINE_OWN) == without(src_pipeline, PIPELINE_OWN)
    assert (new_pipeline["name"], new_pipeline["paused"]) == ("full-copy", True)
    assert new_pipeline["created_by_id"] == user.user_id
    assert [without(t, TASK_OWN) for t in new_tasks] == [without(t, TASK_OWN) for t in src_tasks]
    assert {t["pipeline_id"] for t in new_tasks} == {copy["id"]}
    assert not {t["id"] for t in new_tasks} & {t["id"] for t in src_tasks}
    assert new_edges == src_edges and len(new_edges) == 3

    # The source is untouched, and "paused": false starts the copy unpaused.
    assert rows(app, source_id) == (src_pipeline, src_tasks, src_edges)
    running = created(user.post(f"/api/v1/pipeline/{source_id}/clone", json={"name": "full-live", "paused": False}))
    assert running["paused"] is False and running["schedule"] == "0 3 * * *"
    again = user.post(f"/api/v1/pipeline/{source_id}/clone", json={"name": "full-copy"})
    assert again.status_code == 409 and again.get_json()["errors"] == [
        {"field": "name", "reason": "already exists (name='full-copy')"}]


# ---- YAML -----------------------------------------------------------------------------------------------
def export(client, pipeline_id: int) -> str:
    resp = client.get(f"/api/v1/pipeline/{pipeline_id}/export")
    assert resp.status_code == 200, resp.get_json()
    return resp.get_json()["yaml"]


def dump(doc: dict) -> str:
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)


def import_yaml(client, doc: dict):
    return client.post("/api/v1/pipeline/import", json={"yaml": dump(doc)})


def test_yaml_carries_every_setting_and_round_trips(app, admin, user):
    from myapp.pipelines.tasks import PIPELINE_SETTINGS

    world = every_setting_pipeline(admin, user)
    source_id = world["pipeline"]["id"]
    text = export(user, source_id)
    doc = yaml.safe_load(text)
    assert list(doc) == ["name", "project", *PIPELINE_SETTINGS, "tasks"]
    task_keys = ["name", "template", "args", "resources", "resource_group", "image", "retries", "retry_delay",
                 "timeout", "trigger_rule", "position"]
    assert [list(t) for t in doc["tasks"]] == [task_keys, [*task_keys, "depends_on"], [*task_keys, "depends_on"]]
    assert doc["tasks"][0]["resource_group"] == admin.get(
        f"/api/v1/resource_group/{world['catalog']['resource_group']}").get_json()["name"]
    assert doc["tasks"][2]["depends_on"] == ["prepare", "train"]

    # Applied under a new name: the same rows, so the same YAML.
    copy = import_yaml(user, doc | {"name": "full-yaml"})
    assert copy.status_code == 200, copy.get_json()
    assert export(user, copy.json["id"]) == dump(doc | {"name": "full-yaml"})
    assert dump(doc) == text  # so the two exports differ in the name only
    _, src_tasks, src_edges = rows(app, source_id)
    _, new_tasks, new_edges = rows(app, copy.json["id"])
    assert [{k: v for k, v in t.items() if k not in TASK_OWN} for t in new_tasks] == [
        {k: v for k, v in t.items() if k not in TASK_OWN} for t in src_tasks]
    assert new_edges == src_edges

    # Applied onto itself: nothing changes, task ids are kept.
    same = import_yaml(user, doc)
    assert same.status_code == 200 and same.json["id"] == source_id
    assert export(user, source_id) == text
    assert [t["id"] for t in rows(app, source_id)[1]] == [t["id"] for t in src_tasks]


def test_apply_resets_what_the_yaml_leaves_out(app, admin, user):
    from myapp.pipelines.tasks import PIPELINE_DEFAULTS, TASK_DEFAULTS

    world = every_setting_pipeline(admin, user)
    source_id = world["pipeline"]["id"]
    full = yaml.safe_load(export(user, source_id))
    bare = {"name": full["name"], "project": full["project"],
            "tasks": [{"name": t["name"], "template": t["template"]} for t in full["tasks"]]}
    resp = import_yaml(user, bare)
    assert resp.status_code == 200, resp.get_json()
    pipeline, tasks, edges = rows(app, source_id)
    assert {k: pipeline[k] for k in PIPELINE_DEFAULTS} == dict(PIPELINE_DEFAULTS)
    assert [{k: t[k] for k in TASK_DEFAULTS} for t in tasks] == [dict(TASK_DEFAULTS)] * 3
    assert edges == []
    assert yaml.safe_load(export(user, source_id)) == bare
    # ... and the full YAML brings every setting back.
    assert import_yaml(user, full).status_code == 200
    assert yaml.safe_load(export(user, source_id)) == full


def test_yaml_resource_group_and_template_version_are_resolved_by_name(admin, user):
    world = every_setting_pipeline(admin, user)
    doc = yaml.safe_load(export(user, world["pipeline"]["id"]))
    missing_group = import_yaml(user, doc | {"tasks": [doc["tasks"][0] | {"resource_group": "no-such-group"}]})
    assert missing_group.status_code == 404
    assert missing_group.get_json()["errors"] == [
        {"field": "tasks[0] (prepare).resource_group", "reason": "no resource group named 'no-such-group'"}]
    template = doc["tasks"][0]["template"].split("@")[0]
    missing_version = import_yaml(user, doc | {"tasks": [doc["tasks"][0] | {"template": f"{template}@9.9.9"}]})
    assert missing_version.status_code == 404
    assert missing_version.get_json()["errors"][0]["field"] == "tasks[0] (prepare).template"
    assert export(user, world["pipeline"]["id"]) == dump(doc)


# Random pipelines: whatever the settings, export -> apply -> export is the identity.
NAMES = st.lists(st.from_regex(r"[a-z][a-z0-9]{0,6}", fullmatch=True), min_size=1, max_size=4, unique=True)
TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=30)
PIPELINE_SETTINGS_ST = st.fixed_dictionaries({}, optional={
    "description": TEXT,
    "schedule": st.sampled_from([None, "0 2 * * *", "*/5 * * * 1-5"]),
    "parameters": st.dictionaries(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True),
                                  st.one_of(TEXT, st.integers(-10**6, 10**6)), max_size=3),
    "paused": st.booleans(),
    "max_active_runs": st.integers(1, 100),
    "concurrency_policy": st.sampled_from(["wait", "skip", "cancel"]),
    "depends_on_past": st.booleans(),
    "webhook_url": st.sampled_from([None, "http://hooks.local/x", "https://hooks.local:8443/a?b=c"]),
    # Stored once each in their one order (tasks.check_webhook): drawn that way, so what goes in comes out.
    "webhook_events": st.lists(st.sampled_from(WEBHOOK_EVENTS), min_size=1, unique=True).map(
        lambda drawn: [e for e in WEBHOOK_EVENTS if e in drawn]),
})
TASK_SETTINGS_ST = st.fixed_dictionaries({}, optional={
    "args": st.fixed_dictionaries({}, optional={"epochs": st.integers(1, 100),
                                                "optimizer": st.sampled_from(["sgd", "adam"])}),
    "resources": st.fixed_dictionaries({}, optional={"cpu": st.sampled_from(["250m", "1", "4"]),
                                                     "memory": st.sampled_from(["512Mi", "8Gi"])}),
    "with_group": st.booleans(),
    "retries": st.integers(0, 100),
    "retry_delay": st.integers(0, 86_400),
    "timeout": st.one_of(st.none(), st.integers(1, 30 * 86_400)),
    "trigger_rule": st.sampled_from(["all_success", "all_done", "one_failed"]),
    "position": st.fixed_dictionaries({"x": st.floats(-1e6, 1e6), "y": st.floats(-1e6, 1e6)}),
})


@st.composite
def pipeline_docs(draw) -> dict:
    names = draw(NAMES)
    tasks = []
    for index, name in enumerate(names):
        task = {"name": name, **draw(TASK_SETTINGS_ST)}
        upstream = draw(st.lists(st.sampled_from(names[:index]), unique=True)) if index else []
        if upstream:
            task["depends_on"] = upstream
        tasks.append(task)
    return {**draw(PIPELINE_SETTINGS_ST), "tasks": tasks}


def filled(spec: dict) -> dict:
    """A parsed spec with every default written out."""
    from myapp.pipelines.spec import YAML_TASK_KEYS
    from myapp.pipelines.tasks import PIPELINE_DEFAULTS, TASK_DEFAULTS

    task_defaults = {YAML_TASK_KEYS.get(k, k): v for k, v in TASK_DEFAULTS.items()} | {"depends_on": []}
    return dict(PIPELINE_DEFAULTS) | spec | {"tasks": [task_defaults | t for t in spec["tasks"]]}


def test_yaml_round_trip_property(app, admin, user):
    from myapp.extensions import db
    from myapp.models import JobTemplate, Project, ResourceGroup
    from myapp.pipelines.spec import apply, parse
    from myapp.pipelines.spec import export as export_text

    cat = build_catalog(admin)
    with app.app_context():
        template = db.session.get(JobTemplate, cat["job_template"])
        template_ref = f"{template.name}@{template.version}"
        group = db.session.get(ResourceGroup, cat["resource_group"]).name
        project = Project(name=unique("prop"), namespace=unique("ns"))
        db.session.add(project)
        db.session.commit()
        project_id, project_name = project.id, project.name

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(pipeline_docs())
    def round_trip(drawn: dict) -> None:
        name = f"r{uuid.uuid4().hex[:10]}"
        tasks = [{k: v for k, v in t.items() if k != "with_group"} | {"template": template_ref}
                 | ({"resource_group": group} if t.get("with_group") else {}) for t in drawn["tasks"]]
        doc = drawn | {"name": name, "project": project_name, "tasks": tasks}
        with app.app_context():
            project_row = db.session.get(Project, project_id)
            first = export_text(apply(parse(dump(doc)), project_row, None))
            # What went in comes out, defaults filled in the same way on both sides.
            assert filled(parse(first)) == filled(parse(dump(doc)))
            other = apply(parse(dump(yaml.safe_load(first) | {"name": f"{name}-b"})), project_row, None)
            assert export_text(other) == dump(yaml.safe_load(first) | {"name": f"{name}-b"})
            assert dump(yaml.safe_load(first)) == first
            itself = apply(parse(first), project_row, None)
            assert export_text(itself) == first
            db.session.rollback()  # nothing of the example is kept

    round_trip()


# ---- the task preview ---------------------------------------------------------------------------------
def test_demo_train_task_preview_fills_macros(app, catalog, user):
    """The demo pipeline's train task writes to digits-{{ run_id }}.pt: the preview renders it with a
    sample run id instead of refusing the unfilled macro."""
    from myapp.extensions import db
    from myapp.models import Task
    from myapp.pipelines.macros import SAMPLE_VALUES
    from myapp.setup_data import ensure_demo_pipeline, ensure_demo_project

    with app.app_context():
        pipeline = ensure_demo_pipeline(ensure_demo_project(user.username))
        train = db.session.scalar(sa.select(Task).filter_by(pipeline_id=pipeline.id, name="train"))
        assert "{{ run_id }}" in train.args["output_path"]
        train_id = train.id
    resp = user.get(f"/api/v1/task/{train_id}/manifests")
    assert resp.status_code == 200, resp.get_json()
    items = resp.get_json()["items"]
    assert [item["kind"] for item in items] == ["PyTorchJob", "PersistentVolumeClaim", "PersistentVolumeClaim"]
    assert [item["metadata"]["name"] for item in items[1:]] == ["myapp-outputs", "myapp-checkpoints"]
    assert "{{" not in json.dumps(items)
    assert f"digits-{SAMPLE_VALUES['run_id']}.pt" in json.dumps(items)


def test_preview_that_cannot_render_is_422_with_the_reason(app, admin, user):
    """Arguments the template refuses at render time (it changed after the task was saved): 422, saying why."""
    from myapp.extensions import db
    from myapp.models import JobTemplate, Task

    cat = build_catalog(admin)
    project = created(user.post("/api/v1/project/", json={"name": unique("p")}))
    pipe = created(user.post("/api/v1/pipeline/", json={"project_id": project["id"], "name": "p"}))
    task = created(user.post("/api/v1/task/", json={"pipeline_id": pipe["id"], "name": "t",
                                                     "template_id": cat["job_template"]}))
    with app.app_context():  # a template changed after the task was saved: the stored args no longer fit
        template = db.session.get(JobTemplate, cat["job_template"])
        template.args_schema = {"type": "object", "properties": {"epochs": {"type": "integer", "minimum": 50}}}
        db.session.get(Task, task["id"]).args = {"epochs": 5}
        db.session.commit()
    resp = user.get(f"/api/v1/task/{task['id']}/manifests")
    assert resp.status_code == 422, resp.get_json()
    assert resp.get_json()["message"].startswith("cannot render task t:")


# ---- layering -----------------------------------------------------------------------------------------------
def api_imports(source: str, module: str) -> list[str]:
    """Modules under myapp.api that source (the text of module `module`) imports, at any depth."""
    package = module.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            targets = [target] + [f"{target}.{alias.name}" for alias in node.names]
        else:
            continue
        found += [t for t in targets if t == "myapp.api" or t.startswith("myapp.api.")]
    return found


def test_api_import_detector_sees_every_form():
    for line in ("from ..api.errors import FieldError", "from .. import api", "import myapp.api.fields",
                 "from myapp.api import pipelines", "def f():\n    from ..api import routing\n"):
        assert api_imports(line, "myapp.pipelines.spec"), line
    assert api_imports("from ..errors import FieldError\nfrom .tasks import save_task", "myapp.pipelines.spec") == []
    assert api_imports("from .errors import DomainError", "myapp.pipelines.manifests") == []


DOMAIN_MODULES = sorted((MYAPP / "pipelines").rglob("*.py"))  # task manifests (pipelines/manifests.py) included


@pytest.mark.parametrize("path", DOMAIN_MODULES, ids=lambda p: str(p.relative_to(MYAPP)))
def test_domain_modules_do_not_import_the_api(path: Path):
    module = "myapp." + ".".join(path.relative_to(MYAPP).with_suffix("").parts)
    assert api_imports(path.read_text(encoding="utf-8"), module) == []


def test_every_kind_of_domain_error_has_a_status():
    from myapp.api.errors import STATUS_OF_KIND
    from myapp.errors import Kind

    assert set(STATUS_OF_KIND) == set(Kind)
    assert STATUS_OF_KIND[Kind.NOT_FOUND] == 404 and STATUS_OF_KIND[Kind.UNPROCESSABLE] == 422
