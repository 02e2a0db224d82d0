"""Walk every operation in the OpenAPI spec, as every kind of caller, and prove the checks hold.

The walk is driven by the served spec (each operation carries x-scope, x-permission and
x-resource), so an endpoint added later is covered, or the walk fails asking for it to be
classified, given a request body (BODIES) or a target, without editing the loops below.

What a caller may do follows from the operation's scope and permission alone:

    caller            project reads   project writes   owner-only*   catalog reads   admin APIs, catalog writes
    anonymous         401             401              401           401             401
    outsider          404             404              404           ok              403
    viewer            ok              403              403           ok              403
    developer         ok              ok               403           ok              403
    owner             ok              ok               ok            ok              403
    admin             ok              ok               ok            ok              ok
    run token         as developer of its run's project (A), 404 elsewhere; never admin; starts no project
    revoked token     401             401              401           401             401

    * member management and project settings: writes of the `project` resource.

"outsider" is a signed-in user of another project: to them project A's objects do not exist (404);
lists are filtered instead. Every refused call must leave every row as it was and enqueue nothing;
every allowed write must change something (so the refused ones were real attempts). Deletes that
are allowed run on fresh objects, so the shared world stays whole.

A second walk mixes ids of two projects in one request: every URL with more than one id and every
request body that references another object is sent with one id of project B and the rest of
project A, by members of A only and by members of both; each must answer 400/404 and store nothing.
"""
from __future__ import annotations

import datetime as dt
import functools
import io
import itertools
import json
import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import sqlalchemy as sa

from tests.support import ApiClient, login_token, unique
from tests.world import add_member, build_catalog, build_project, created, data_file, insert_finished_run

# Operations anyone may call: logging in needs no token.
PUBLIC = {("post", "/api/v1/security/login"), ("post", "/api/v1/security/refresh")}
# FAB's own user/role/permission APIs and menu: admin-only by FAB role.
ADMIN_PREFIXES = ("/api/v1/security/", "/api/v1/menu/")
SIGNED_IN = {"/api/{version}/_openapi"}
# Answered to the notebook proxy alone (it proves itself with a key: tests/notebooks): any caller without
# it, signed in or an admin, is refused; the member check behind it is tests/notebooks/test_runtime.py's.
PROXY_ONLY = {"/api/v1/notebook/authz"}

ROLES = ("anonymous", "outsider", "viewer", "developer", "owner", "admin", "run_token", "revoked_token")
RANK = {"viewer": 1, "developer": 2, "owner": 3}
# A run's platform API token (myapp.auth.run_tokens) is a developer of its run's project (A) and nothing else,
# whatever its identity's roles and memberships: the walk's token acts as a bot made admin and owner of
# A and B. A revoked one (its run has finished) is refused like no token at all.
TOKENS = ("run_token", "revoked_token")
# Each caller's role in project A and project B.
MEMBERSHIP: dict[str, dict[str, str]] = {
    "anonymous": {}, "admin": {}, "revoked_token": {},
    "run_token": {"a": "developer"},
    "outsider": {"b": "owner"},
    "viewer": {"a": "viewer"},
    "developer": {"a": "developer"},
    "owner": {"a": "owner"},
    "dev_both": {"a": "developer", "b": "developer"},
    "owner_both": {"a": "owner", "b": "owner"},
}
# Callers of the mixed-id walk: developer/owner of A only, and of both projects.
MIXERS = ("developer", "owner", "dev_both", "owner_both", "run_token")
ABSENT = 999_999_999  # an id no row has

# The object an operation acts on, when it is not its resource's own world object.
TARGETS = {
    "post /api/v1/pipeline_run/{pk}/rerun": "finished_run",  # only finished runs are rerun ...
    "delete /api/v1/pipeline_run/{pk}": "finished_run",      # ... or deleted
    "put /api/v1/pipeline/{pk}/graph": "graph_pipeline",     # replaces tasks and edges: not the shared ones
    # A project's registry credentials (pk: the project): set in the world, forgotten from a fresh project.
    "get /api/v1/image_build/project/{pk}/registry_credentials": "registry_credentials",
    "put /api/v1/image_build/project/{pk}/registry_credentials": "registry_credentials",
    "delete /api/v1/image_build/project/{pk}/registry_credentials": "registry_credentials",
}
# Project settings written by owners only, besides the project's own writes.
OWNER_WRITES = {"put /api/v1/image_build/project/{pk}/registry_credentials",
                "delete /api/v1/image_build/project/{pk}/registry_credentials"}
# Allowed writes that change nothing: nothing of an edge may change (a cancel changes no row either, but
# sends a message to the workers, which state() counts).
NO_ROW_CHANGE = {"put /api/v1/edge/{pk}",
                 "post /api/v1/pipeline/{pk}/webhook_secret",  # reads the secret: a POST for developers only
                 # the walk's users have no sign-in limits (tests/auth/test_login_limits.py clears some)
                 "delete /api/v1/user/{pk}/login_limits",
                 "post /api/v1/scheduler/simulate"}  # a replay: answers figures, stores nothing
# Body fields that reference another object, and what they reference.
PROJECT_REFS = {"project_id": "project", "pipeline_id": "pipeline", "task_run_id": "task_run",
                "model_version_id": "model_version", "version_id": "model_version",
                "shadow_version_id": "model_version", "upstream_task_id": "task", "downstream_task_id": "task",
                "tasks[].id": "task", "notebook_id": "notebook"}
CATALOG_REFS = {"template_id", "resource_group_id", "cluster_id"}  # every user sees them: only existence


# ---- the world ----------------------------------------------------------------------------------

@dataclass
class Walk:
    app: Any
    spec: dict
    users: dict[str, ApiClient]
    a: dict[str, int]
    b: dict[str, int]
    cat: dict[str, int]
    names: dict[str, str]
    members: dict[str, dict[str, int]]  # project -> user key -> membership id
    engine: Any
    queries: list[tuple[str, str]]  # (table, SELECT of its rows) for state()
    enqueued: list[tuple]
    counter: Iterator[int] = field(default_factory=itertools.count)

    @property
    def owner(self) -> ApiClient:
        return self.users["owner"]

    @property
    def admin(self) -> ApiClient:
        return self.users["admin"]

    def n(self) -> int:
        return next(self.counter)

    def spare_user(self) -> tuple[int, str]:
        return spare_user(self.app)

    def column(self, model: str, pk: int, name: str) -> Any:
        from flask_appbuilder import Model

        from myapp.extensions import db

        table = Model.metadata.tables[model]
        with self.app.app_context():
            return db.session.execute(sa.select(table.c[name]).where(table.c.id == pk)).scalar_one()

    def state(self) -> dict[str, list]:
        """Every row the walk could touch, and every message sent to the workers (plain SQL: it runs
        around every call of the walk)."""
        out: dict[str, list] = {"enqueued": list(self.enqueued)}
        conn = self.engine.raw_connection()
        try:
            cursor = conn.cursor()
            for table, sql in self.queries:
                cursor.execute(sql)
                out[table] = cursor.fetchall()
            conn.rollback()
        finally:
            conn.close()
        return out


# FAB's roles and permissions are few and fixed: compared whole. Every other table only from the
# rows this module made on (rows of other modules sharing the process are nobody's business here).
WHOLE_TABLES = {"ab_role", "ab_permission", "ab_view_menu", "ab_permission_view", "ab_permission_view_role",
                "ab_group", "ab_group_role"}


def state_queries(app) -> tuple[Any, list[tuple[str, str]]]:
    """The engine, and per table the SELECT of the rows state() compares."""
    from flask_appbuilder import Model

    from myapp.extensions import db

    queries = []
    with app.app_context():
        engine = db.engine
        quote = engine.dialect.identifier_preparer.quote
        for table in Model.metadata.sorted_tables:
            order = ", ".join(quote(c.name) for c in table.primary_key.columns)
            where = ""
            if "id" in table.c and table.name not in WHOLE_TABLES:
                floor = (db.session.scalar(sa.select(sa.func.max(table.c.id))) or 0) + 1
                where = f" WHERE id >= {floor}"
            queries.append((table.name, f"SELECT * FROM {quote(table.name)}{where} ORDER BY {order}"))
        db.session.rollback()
    return engine, queries


def changed_tables(before: dict, after: dict) -> list[str]:
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


PASSWORD = uuid.uuid4().hex


@functools.lru_cache(maxsize=1)
def password_hash() -> str:
    from werkzeug.security import generate_password_hash

    return generate_password_hash(PASSWORD)  # once: hashing is slow on purpose


def new_user(app, admin: bool = False, signs_in: bool = True) -> tuple[int, str]:
    from myapp.auth.security import ADMIN_ROLE, USER_ROLE
    from myapp.extensions import appbuilder

    sm, name = appbuilder.sm, unique("admin" if admin else "user")
    with app.app_context():
        user = sm.add_user(name, name, "-", f"{name}@localhost", [sm.find_role(ADMIN_ROLE if admin else USER_ROLE)],
                           hashed_password=password_hash() if signs_in else "!")  # "!" matches no password
        assert user, f"could not create user {name}"
        return user.id, user.username


def sign_in(app, admin: bool = False) -> ApiClient:
    user_id, name = new_user(app, admin)
    client = app.test_client()
    api = ApiClient(client, login_token(client, name, PASSWORD))
    api.username, api.user_id = name, user_id
    return api


def spare_user(app) -> tuple[int, str]:
    """A user who belongs to no project yet; nobody signs in as them."""
    return new_user(app, signs_in=False)


def run_token(app, run_id: int, owned: list) -> str:
    """The token of a run, as the run controller issues it; its identity (the project's bot) is then
    made an admin and an owner of the projects in owned, which the token must not gain anything from."""
    from myapp.auth.run_tokens import issue, token_of
    from myapp.auth.security import ADMIN_ROLE
    from myapp.extensions import appbuilder, db
    from myapp.models import PipelineRun, ProjectMember, ProjectRole, User
    from myapp.models.base import utcnow

    with app.app_context():
        row = issue(db.session.get(PipelineRun, run_id), utcnow())
        bot = db.session.get(User, row.user_id)
        if owned:
            bot.roles = [*bot.roles, appbuilder.sm.find_role(ADMIN_ROLE)]
        for world in owned:
            db.session.add(ProjectMember(project_id=world.ids["project"], user_id=bot.id, role=ProjectRole.OWNER))
        db.session.commit()
        return token_of(row)


@pytest.fixture(scope="module")
def walk(app) -> Iterator[Walk]:
    """Two projects with one of every object and users in every role, built once per module."""
    import myapp.api.pipelines

    engine, queries = state_queries(app)
    users = {key: sign_in(app, admin=key == "admin") for key in MEMBERSHIP if key not in ("anonymous", *TOKENS)}
    users["anonymous"] = ApiClient(app.test_client(), None)
    cat = build_catalog(users["admin"])
    a, b = build_project(users["owner"], cat, app), build_project(users["outsider"], cat, app)
    members: dict[str, dict[str, int]] = {"a": {"owner": a.ids["member"]}, "b": {"outsider": b.ids["member"]}}
    for key, roles in MEMBERSHIP.items():
        for project, role in roles.items():
            world = a if project == "a" else b
            if key not in members[project] and key not in TOKENS:
                creator = users["owner"] if project == "a" else users["outsider"]
                members[project][key] = add_member(creator, world.ids["project"], users[key].username, role)
    for world, creator in ((a, users["owner"]), (b, users["outsider"])):
        pid = world.ids["project"]
        world.ids["finished_run"] = insert_finished_run(app, pid, world.ids["pipeline"])
        graph = created(creator.post("/api/v1/pipeline/", json={"project_id": pid, "name": "graph"}))["id"]
        for name in ("left", "right"):
            created(creator.post("/api/v1/task/", json={"pipeline_id": graph, "name": name,
                                                        "template_id": cat["job_template"]}))
        world.ids["graph_pipeline"] = graph
        world.ids["registry_credentials"] = registry_credentials(creator, pid)
    # A task of a third pipeline of A: a reference to it from another pipeline's edge or graph is a mix too.
    other = created(users["owner"].post("/api/v1/pipeline/", json={"project_id": a.ids["project"], "name": "other"}))
    a.ids["other_task"] = created(users["owner"].post("/api/v1/task/", json={
        "pipeline_id": other["id"], "name": "lone", "template_id": cat["job_template"]}))["id"]
    # Members whose rows the walk changes and whose ids it mixes up: nobody signs in as them.
    _, spare_a = spare_user(app)
    a.ids["target_member"] = add_member(users["owner"], a.ids["project"], spare_a, "viewer")
    _, spare_b = spare_user(app)
    b.ids["member"] = add_member(users["outsider"], b.ids["project"], spare_b, "viewer")
    b.ids["target_member"] = b.ids["member"]
    cat["quota"] = created(users["admin"].post("/api/v1/quota/", json={
        "project_id": a.ids["project"], "resource_group_id": cat["resource_group"], "cpu": "8", "memory": "32Gi",
        "gpus": 2}))["id"]
    cat["fab_user"] = spare_user(app)[0]
    cat["user"] = spare_user(app)[0]  # the target of /api/v1/user/{pk} (myapp/api/users.py)
    cat["limits"] = b.ids["project"]  # the target of /api/v1/limits/project/{pk}: B's runs never run here
    template = users["admin"].get(f"/api/v1/job_template/{cat['job_template']}").get_json()
    names = {"a": a.project["name"], "b": b.project["name"], "template": template["name"]}
    users["run_token"] = ApiClient(app.test_client(), run_token(app, a.ids["pipeline_run"], [a, b]))
    users["revoked_token"] = ApiClient(app.test_client(), run_token(app, a.ids["finished_run"], []))
    spec = users["admin"].get("/api/v1/_openapi").get_json()
    enqueued: list[tuple] = []
    with pytest.MonkeyPatch.context() as patch:
        # The walk needs no workers: record what would be sent to them instead.
        patch.setattr(myapp.api.pipelines, "enqueue", lambda name, *args, **queue: enqueued.append((name, *args)))
        yield Walk(app, spec, users, a.ids, b.ids, cat, names, members, engine, queries, enqueued)


# ---- the operations -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Op:
    method: str
    path: str
    spec: dict
    kind: str  # public | signed-in | admin | catalog | project
    need: str  # public | signed-in | proxy | person | admin | viewer | developer | owner

    @property
    def key(self) -> str:
        return f"{self.method} {self.path}"

    @property
    def resource(self) -> str:
        return self.spec.get("x-resource", "")

    @property
    def params(self) -> list[str]:
        return [p for p in re.findall(r"{(\w+)}", self.path) if p != "version"]

    @property
    def fab(self) -> bool:
        return self.path.startswith(ADMIN_PREFIXES)

    @property
    def ok(self) -> int:
        return int(next(s for s in self.spec.get("responses", {"200": {}}) if s.startswith("2")))

    @property
    def stream(self) -> bool:
        content = self.spec.get("responses", {}).get(str(self.ok), {}).get("content", {})
        return "text/event-stream" in content

    @property
    def has_body(self) -> bool:
        return "requestBody" in self.spec

    @property
    def collection(self) -> bool:
        return "{" not in self.path.replace("{version}", "")


def classify(method: str, path: str, op: dict) -> Op:
    if (method, path) in PUBLIC:
        return Op(method, path, op, "public", "public")
    if path in SIGNED_IN:
        return Op(method, path, op, "signed-in", "signed-in")
    if path in PROXY_ONLY:
        return Op(method, path, op, "signed-in", "proxy")
    if path.startswith(ADMIN_PREFIXES):
        return Op(method, path, op, "admin", "admin")
    where = f"{method.upper()} {path}"
    scope = op.get("x-scope")
    assert scope in {"admin", "catalog", "project"}, (
        f"unclassified operation {where}: declare it with myapp.api.routing.route on a ResourceApi "
        "(x-scope admin, catalog or project), or list it here")
    permission = op.get("x-permission")
    assert permission == ("can_read" if method == "get" else "can_write"), (
        f"{where} is declared {permission}: reads are can_read, writes can_write")
    assert op.get("x-resource"), f"{where} names no x-resource"
    if scope == "admin":
        need = "admin"
    elif scope == "catalog":
        need = "signed-in" if method == "get" else "admin"
    elif "{" not in path:
        # Collections: lists are filtered per caller; creates name their project in the body, except
        # a new project, which any signed-in person may start (not a run's token: it acts in its run's
        # project only).
        need = "signed-in" if method == "get" else "person" if path == "/api/v1/project/" else "developer"
    elif method == "get":
        need = "viewer"
    else:
        need = "owner" if op["x-resource"] == "project" or f"{method} {path}" in OWNER_WRITES else "developer"
    return Op(method, path, op, scope, need)


def operations(spec: dict) -> list[Op]:
    return [classify(method, path, op) for path, ops in sorted(spec["paths"].items()) for method, op in ops.items()]


def expected(user: str, op: Op, project: str = "a") -> int:
    """The status user gets for op on an object of project (a or b)."""
    if user in ("anonymous", "revoked_token"):
        return 401
    if op.need == "signed-in":
        return op.ok
    if op.need == "proxy":
        return 403
    if op.need == "person":
        return 403 if user in TOKENS else op.ok
    if op.need == "admin":
        return op.ok if user == "admin" else 403
    if user == "admin":
        return op.ok
    role = MEMBERSHIP[user].get(project)
    if role is None:
        return 404
    return op.ok if RANK[role] >= RANK[op.need] else 403


# ---- requests: targets, bodies, fresh objects -----------------------------------------------------

def import_yaml(project: str, pipeline: str, template: str) -> str:
    return f"name: {pipeline}\nproject: {project}\ntasks:\n- name: t\n  template: {template}\n"


def edge_body(w: Walk) -> dict:
    task = created(w.owner.post("/api/v1/task/", json={
        "pipeline_id": w.a["pipeline"], "name": unique("t"), "template_id": w.cat["job_template"]}))
    return {"pipeline_id": w.a["pipeline"], "upstream_task_id": w.a["task2"], "downstream_task_id": task["id"]}


def graph_body(w: Walk) -> dict:
    graph = w.owner.get(f"/api/v1/pipeline/{w.a['graph_pipeline']}/graph").get_json()
    x = float(w.n())
    tasks = [{"key": f"k{t['id']}", "id": t["id"], "name": t["name"], "template_id": t["template_id"],
              "resource_group_id": w.cat["resource_group"], "position": {"x": x, "y": float(i)}}
             for i, t in enumerate(graph["tasks"])]
    edges = [{"upstream": f"k{e['upstream_task_id']}", "downstream": f"k{e['downstream_task_id']}"}
             for e in graph["edges"]]
    if not edges:
        edges = [{"upstream": tasks[0]["key"], "downstream": tasks[1]["key"]}]
    return {"tasks": tasks, "edges": edges}


def quota_body(w: Walk) -> dict:
    group = created(w.admin.post("/api/v1/resource_group/", json=BODIES["post /api/v1/resource_group/"](w)))
    return {"project_id": w.a["project"], "resource_group_id": group["id"], "cpu": "1", "memory": "1Gi", "gpus": 0}


def backfill_body(w: Walk) -> dict:
    day = (dt.date(2001, 1, 1) + dt.timedelta(days=w.n())).isoformat()
    return {"start": day, "end": day}


def other_role(w: Walk, member_id: int) -> str:
    return "developer" if w.column("project_member", member_id, "role") == "viewer" else "viewer"


def more_replicas(w: Walk, pk: int) -> int:
    return w.column("inference_service", pk, "max_replicas") % 100 + 1


def new_version(w: Walk) -> int:
    """Another version of the model project A's service serves (the walk's canaries)."""
    return created(w.owner.post("/api/v1/model_version/", json={"project_id": w.a["project"], "name": "digits",
                                                                 "uri": data_file(w.app, w.a["project"],
                                                                                  f"digits-{w.n()}.pt")}))["id"]


def with_canary(w: Walk) -> int:
    """A canary on project A's service (what promote and rollback act on); its version id."""
    version = new_version(w)
    resp = w.owner.post(f"/api/v1/inference_service/{w.a['inference_service']}/canary",
                        json={"version_id": version, "weight": 10})
    assert resp.status_code == 200, resp.get_json()
    return version


def changed(w: Walk) -> str:
    return f"changed {w.n()}"


def catalog_image(w: Walk) -> str:
    """A notebook names a catalog image as repository:tag."""
    return f"{w.column('image', w.cat['image'], 'repository')}:{w.column('image', w.cat['image'], 'tag')}"


# A valid request body per operation: what a caller allowed to would send (an allowed call must succeed
# with it, and change something). Bodies name objects of project A.
BODIES: dict[str, Callable[[Walk], dict]] = {
    "post /api/v1/project/": lambda w: {"name": unique("walk")},
    "put /api/v1/project/{pk}": lambda w: {"description": changed(w)},
    "post /api/v1/project/{pk}/members": lambda w: {"username": w.spare_user()[1], "role": "viewer"},
    "put /api/v1/project/{pk}/members/{member_id}": lambda w: {"role": other_role(w, w.a["target_member"])},
    "post /api/v1/pipeline/": lambda w: {"project_id": w.a["project"], "name": unique("p")},
    "put /api/v1/pipeline/{pk}": lambda w: {"description": changed(w)},
    "post /api/v1/pipeline/import": lambda w: {"yaml": import_yaml(w.names["a"], unique("imp"), w.names["template"])},
    "post /api/v1/pipeline/{pk}/backfill": backfill_body,
    "post /api/v1/pipeline/{pk}/clone": lambda w: {"name": unique("clone")},
    "put /api/v1/pipeline/{pk}/graph": graph_body,
    "post /api/v1/task/": lambda w: {"pipeline_id": w.a["pipeline"], "name": unique("t"),
                                     "template_id": w.cat["job_template"],
                                     "resource_group_id": w.cat["resource_group"]},
    "put /api/v1/task/{pk}": lambda w: {"position": {"x": float(w.n()), "y": 0.0}},
    "post /api/v1/edge/": edge_body,
    "put /api/v1/edge/{pk}": lambda w: {},
    "post /api/v1/pipeline_run/": lambda w: {"pipeline_id": w.a["pipeline"]},
    "post /api/v1/task_run/{pk}/reported_metrics": lambda w: {"step": w.n(), "values": {"loss": 0.5}},
    "post /api/v1/notebook/": lambda w: {"project_id": w.a["project"], "name": unique("nb"),
                                         "image": catalog_image(w), "resource_group_id": w.cat["resource_group"]},
    "put /api/v1/notebook/{pk}": lambda w: {"resources": {"memory": f"{1000 + w.n()}Mi"}},
    "post /api/v1/model_version/": lambda w: {"project_id": w.a["project"], "name": unique("mv"),
                                              "uri": data_file(w.app, w.a["project"], "x.pt"),
                                              "task_run_id": w.a["task_run"]},
    "post /api/v1/model_version/upload": lambda w: {"project_id": w.a["project"], "name": unique("mv"),
                                                    "file": (b"model bytes", "model.joblib")},
    "put /api/v1/model_version/{pk}": lambda w: {"metrics": {"accuracy": float(w.n())}},
    "post /api/v1/inference_service/": lambda w: {"project_id": w.a["project"], "name": unique("svc"),
                                                  "model_version_id": w.a["model_version"],
                                                  "shadow_version_id": new_version(w),
                                                  "resource_group_id": w.cat["resource_group"]},
    "put /api/v1/inference_service/{pk}": lambda w: {"max_replicas": more_replicas(w, w.a["inference_service"])},
    "post /api/v1/inference_service/{pk}/canary": lambda w: {"version_id": new_version(w), "weight": w.n() % 100},
    "post /api/v1/inference_service/{pk}/promote": lambda w: {"version_id": with_canary(w)},
    "post /api/v1/inference_service/{pk}/rollback": lambda w: (with_canary(w), {})[1],
    "put /api/v1/image_build/project/{pk}/registry_credentials": lambda w: {
        "registry": "registry.local", "username": "robot", "password": "walk-password"},
    "post /api/v1/image_build/": lambda w: {"project_id": w.a["project"], "repository": "registry.local/p/env",
                                            "tag": f"v{w.n()}", "notebook_id": w.a["notebook"],
                                            "resource_group_id": w.cat["resource_group"]},
    "post /api/v1/cluster/": lambda w: {"name": unique("c"), "kind": "local"},
    "put /api/v1/cluster/{pk}": lambda w: {"prometheus_url": f"http://prometheus-{w.n()}.local:9090"},
    "post /api/v1/resource_group/": lambda w: {"name": unique("rg"), "cluster_id": w.cat["cluster"], "cpu": "1",
                                               "memory": "1Gi", "gpus": 0},
    "put /api/v1/resource_group/{pk}": lambda w: {"gpu_type": f"type-{w.n()}"},
    "post /api/v1/quota/": quota_body,
    "put /api/v1/quota/{pk}": lambda w: {"gpus": w.n()},
    # Generous values: the walk shares the session with tests that rely on the defaults.
    "put /api/v1/limits/": lambda w: {"max_backfill_days": 1000 + w.n()},
    "put /api/v1/limits/project/{pk}": lambda w: {"max_running_runs": 1000 + w.n()},
    "post /api/v1/scheduler/simulate": lambda w: {"trace": "philly-sample", "policies": ["gang-fifo"], "gpus": 64,
                                                  "jobs": 20},
    "post /api/v1/image/": lambda w: {"repository": "registry.local/walk/img", "tag": unique("v")},
    "put /api/v1/image/{pk}": lambda w: {"description": changed(w)},
    "post /api/v1/job_template/": lambda w: {"name": unique("tpl"), "version": "1.0.0", "kind": "job",
                                             "image": "python:3.11-slim"},
    "put /api/v1/job_template/{pk}": lambda w: {"description": changed(w)},
    "post /api/v1/user/": lambda w: {"username": unique("walk"), "first_name": "Walk",
                                     "email": f"{unique('w')}@example.org", "password": uuid.uuid4().hex},
    "put /api/v1/user/{pk}": lambda w: {"first_name": changed(w)},
    "post /api/v1/user/{pk}/password": lambda w: {"password": uuid.uuid4().hex},
}


def victim_project(w: Walk) -> int:
    """A project to delete, with the same members (and roles) as project A."""
    pid = created(w.owner.post("/api/v1/project/", json=BODIES["post /api/v1/project/"](w)))["id"]
    for key, roles in MEMBERSHIP.items():
        if "a" in roles and key != "owner" and key not in TOKENS:
            add_member(w.owner, pid, w.users[key].username, roles["a"])
    return pid


# Fresh objects for allowed deletes, by what the last path parameter names.
SPECIAL_VICTIMS: dict[str, Callable[[Walk], int]] = {
    "project": victim_project,
    "member": lambda w: add_member(w.owner, w.a["project"], w.spare_user()[1], "viewer"),
    "finished_run": lambda w: insert_finished_run(w.app, w.a["project"], w.a["pipeline"]),
    "image_build": lambda w: finished_build(w),  # only a finished build is deleted
    "registry_credentials": lambda w: registry_credentials(w.owner, victim_project(w)),
}


def registry_credentials(owner: ApiClient, project_id: int) -> int:
    """The project, with push credentials set."""
    assert owner.put(f"/api/v1/image_build/project/{project_id}/registry_credentials",
                     json=BODIES["put /api/v1/image_build/project/{pk}/registry_credentials"](None)).status_code == 200
    return project_id


def finished_build(w: Walk) -> int:
    from myapp.extensions import db
    from myapp.models import ImageBuild, ServiceState

    build_id = created(w.owner.post("/api/v1/image_build/", json=BODIES["post /api/v1/image_build/"](w)))["id"]
    with w.app.app_context():
        db.session.get(ImageBuild, build_id).state = ServiceState.FAILED
        db.session.commit()
    return build_id


def victim(w: Walk, op: Op, what: str) -> int:
    if what in SPECIAL_VICTIMS:
        return SPECIAL_VICTIMS[what](w)
    create = f"post /api/v1/{what}/"
    assert create in BODIES, f"no way to make a fresh {what} for {op.key}: add it to SPECIAL_VICTIMS"
    creator = w.owner if op.kind == "project" else w.admin
    return created(creator.post(f"/api/v1/{what}/", json=BODIES[create](w)))["id"]


def target_key(op: Op) -> str:
    return TARGETS.get(op.key, op.resource)


def object_id(w: Walk, op: Op, param: str, project: str) -> int:
    ids = {"a": w.a, "b": w.b}[project] if op.kind == "project" else w.cat
    key = {"pk": target_key(op), "member_id": "target_member"}.get(param)
    assert key is not None, f"no id for path parameter {{{param}}} of {op.key}: extend object_id()"
    assert key in ids, f"the walk's world has no {key} for {op.key}: extend the walk fixture"
    return ids[key]


def fill(path: str, values: dict[str, Any]) -> str:
    return re.sub(r"{(\w+)}", lambda m: "v1" if m.group(1) == "version" else str(values[m.group(1)]), path)


def fab_id(w: Walk, op: Op, probe: bool) -> int:
    """FAB's users and roles: refused callers aim at real rows; the admin probes (absent ids) so as to
    pass the role check without changing FAB's data."""
    if probe and op.method != "get":
        return ABSENT
    return w.cat["fab_user"] if op.path.startswith("/api/v1/security/users/") else 1


def plan(w: Walk, op: Op, allowed: bool) -> tuple[str, dict | None]:
    """The URL and body of op, on project A's objects (fresh ones when an allowed call deletes)."""
    if op.fab:
        # (a list, not an object: FAB answers 500 to some empty objects)
        probe_body = ["probe"] if allowed else {}
        return fill(op.path, {p: fab_id(w, op, allowed) for p in op.params}), (probe_body if op.has_body else None)
    values = {p: object_id(w, op, p, "a") for p in op.params}
    if allowed and op.method == "delete":
        last = op.params[-1]
        values[last] = victim(w, op, "member" if last == "member_id" else target_key(op))
    body = None
    if op.has_body:
        assert op.key in BODIES, f"no request body for {op.key}: add one to BODIES"
        body = BODIES[op.key](w)
    return fill(op.path, values), body


def check_plannable(w: Walk, op: Op) -> None:
    """Everything the walks need for op, without calling it: fails for an operation they cannot check."""
    if op.kind == "public":
        return
    if op.fab or op.kind == "signed-in":
        return
    if op.collection and op.method == "get":
        assert op.path == f"/api/v1/{op.resource}/" or op.resource == "me" or op.kind != "project", (
            f"no check for the collection read {op.key}: extend check_collection()")
    for param in op.params:
        object_id(w, op, param, "a")
        if op.kind == "project":
            object_id(w, op, param, "b")
    if op.has_body:
        assert op.key in BODIES, f"no request body for {op.key}: add one to BODIES"
    if op.method == "delete":
        what = "member" if op.params[-1] == "member_id" else target_key(op)
        assert what in SPECIAL_VICTIMS or f"post /api/v1/{what}/" in BODIES, (
            f"no way to make a fresh {what} for {op.key}: add it to SPECIAL_VICTIMS")
    for path in ref_paths(w.spec, op):
        leaf = path.rsplit(".", 1)[-1]
        assert path in PROJECT_REFS or leaf in PROJECT_REFS or leaf in CATALOG_REFS, (
            f"{op.key}: body field {path} references something the mixed-id walk does not know: "
            "add it to PROJECT_REFS or CATALOG_REFS")


def call(client: ApiClient, op: Op, url: str, body: dict | None) -> tuple[int, Any]:
    if "multipart/form-data" in op.spec.get("requestBody", {}).get("content", {}):  # a file: (bytes, name)
        form = {k: (io.BytesIO(v[0]), v[1]) if isinstance(v, tuple) else v for k, v in (body or {}).items()}
        resp = client.request(op.method, url, data=form, content_type="multipart/form-data")
    else:
        resp = client.request(op.method, url, json=body)
    try:
        if op.stream and resp.status_code == 200:
            return resp.status_code, None  # a live stream: its status is all the walk reads
        return resp.status_code, resp.get_json(silent=True)
    finally:
        resp.close()


# ---- the role walk ------------------------------------------------------------------------------------

def check_collection(w: Walk, user: str, op: Op, payload: Any) -> None:
    """A list (or /me) as user: project A's rows for its members and the admin, nothing of A for others."""
    client, where = w.users[user], f"{user}: GET {op.path}"
    if op.resource == "me":
        roles = {p["id"]: p["role"] for p in payload["projects"]}
        assert roles.get(w.a["project"]) == MEMBERSHIP[user].get("a"), (where, payload)
        assert roles.get(w.b["project"]) == MEMBERSHIP[user].get("b"), (where, payload)
        assert payload["is_admin"] == (user == "admin"), where
        return
    if op.kind != "project":
        return
    sees_a = user == "admin" or "a" in MEMBERSHIP[user]
    if op.resource == "project":
        query, want = {"name": w.names["a"]}, w.a["project"]
    else:
        query, want = {"project_id": w.a["project"], "order": "id", "page_size": 100}, w.a[op.resource]
    resp = client.get(op.path, query_string=query)
    assert resp.status_code == 200, (where, query, resp.get_json())
    ids = [item["id"] for item in resp.get_json()["items"]]
    assert (want in ids) if sees_a else ids == [], (where, query, ids)
    if not sees_a:
        items = resp.get_json()["items"] + payload["items"]
        assert all(i.get("project_id", i["id"]) != w.a["project"] for i in items), where


@pytest.mark.parametrize("user", ROLES)
def test_every_operation_as_each_role(walk: Walk, user: str):
    w, client = walk, walk.users[user]
    checked = 0
    for op in operations(w.spec):
        if op.kind == "public":
            continue
        want = expected(user, op)
        allowed = 200 <= want < 300
        url, body = plan(w, op, allowed)
        before = w.state()
        status, payload = call(client, op, url, body)
        hidden = want == 404 and op.params
        if hidden:
            # Existence is not revealed: project A's object answers as an id no row has.
            absent = call(client, op, fill(op.path, dict.fromkeys(op.params, ABSENT)), body)
        after = w.state()
        where = f"{user}: {op.method.upper()} {url}"
        if hidden:
            assert absent[0] == 404 and re.sub(r"\d+", "#", json.dumps(absent[1])) == re.sub(
                r"\d+", "#", json.dumps(payload)), (where, "answers unlike a missing object", payload, absent)
        if op.fab and allowed:
            # The admin's probe: past FAB's role check, refused for its absent id or malformed body.
            assert status not in (401, 403) and status < 500, (where, status, payload)
        else:
            assert status == want, (where, f"expected {want}, got {status}", body, payload)
        if not allowed or op.method == "get" or op.fab:
            assert after == before, f"{where} answered {status} but changed {changed_tables(before, after)}"
        elif op.key not in NO_ROW_CHANGE:
            assert after != before, f"{where} succeeded but changed nothing: give it a body that changes something"
        if allowed and op.collection and op.method == "get":
            check_collection(w, user, op, payload)
        elif allowed and op.method == "get" and op.path.endswith("/{pk}") and not op.fab:
            assert payload["id"] == int(url.rsplit("/", 1)[-1]), (where, payload)
        checked += 1
    # The platform's own operations (FAB's generic security API is off: users are myapp/api/users.py).
    assert checked >= 90, f"the walk covered only {checked} operations"


def test_every_operation_is_classified(walk: Walk):
    ops = operations(walk.spec)
    for op in ops:
        check_plannable(walk, op)
    kinds = {op.kind for op in ops}
    assert kinds == {"public", "signed-in", "admin", "catalog", "project"}, kinds
    assert not set(BODIES) - {op.key for op in ops}, "BODIES for operations that no longer exist"


@pytest.mark.parametrize("operation, reason", [
    (("post", "/api/v1/widget/{pk}/frob", {"summary": "no x-scope"}), "unclassified operation"),
    (("get", "/api/v1/securityish/", {"summary": "outside FAB's prefixes, no x-scope"}), "unclassified operation"),
    (("put", "/api/v1/pipeline/{pk}/rename", {"x-scope": "project", "x-permission": "can_read",
                                              "x-resource": "pipeline"}), "reads are can_read"),
    (("post", "/api/v1/pipeline/{pk}/frob", {"x-scope": "project", "x-permission": "can_write",
                                             "x-resource": "pipeline", "requestBody": {}}), "no request body"),
    (("delete", "/api/v1/pipeline/{pk}/steps/{step_id}", {"x-scope": "project", "x-permission": "can_write",
                                                          "x-resource": "pipeline"}), "no id for path parameter"),
    (("get", "/api/v1/pipeline/stats", {"x-scope": "project", "x-permission": "can_read",
                                        "x-resource": "pipeline"}), "no check for the collection read"),
    (("delete", "/api/v1/widget/{pk}", {"x-scope": "project", "x-permission": "can_write",
                                        "x-resource": "widget"}), "the walk's world has no widget"),
    (("post", "/api/v1/pipeline/{pk}/clone", {  # a body gains a reference to another object
        "x-scope": "project", "x-permission": "can_write", "x-resource": "pipeline", "requestBody": {
            "content": {"application/json": {"schema": {"properties": {"widget_id": {"type": "integer"}}}}}}}),
     "references something the mixed-id walk does not know"),
])
def test_an_unclassified_operation_fails_the_walk(walk: Walk, operation, reason):
    """An endpoint the walk cannot check (no scope, a write declared read, no body or target) fails it."""
    method, path, op = operation
    spec = {**walk.spec, "paths": {**walk.spec["paths"], path: {method: op}}}
    with pytest.raises(AssertionError, match=reason):
        for each in operations(spec):
            check_plannable(walk, each)


# ---- the mixed-id walk -------------------------------------------------------------------------------

def ref_paths(spec: dict, op: Op) -> list[str]:
    """Fields of op's request body that hold another object's id: "project_id", "tasks[].id", ..."""
    if not op.has_body or op.fab:
        return []
    schemas = spec.get("components", {}).get("schemas", {})

    def resolve(schema: dict) -> dict:
        while "$ref" in schema:
            schema = schemas[schema["$ref"].rsplit("/", 1)[-1]]
        if "allOf" in schema:
            schema = resolve(schema["allOf"][0])
        return schema

    def walk_schema(schema: dict, prefix: str) -> Iterator[str]:
        for name, prop in resolve(schema).get("properties", {}).items():
            prop = resolve(prop)
            if prop.get("type") == "array" and isinstance(prop.get("items"), dict):
                yield from walk_schema(prop["items"], f"{prefix}{name}[].")
            elif "properties" in prop:
                yield from walk_schema(prop, f"{prefix}{name}.")
            elif name == "id" or name.endswith("_id"):
                yield prefix + name

    media = op.spec["requestBody"].get("content", {})
    content = media.get("application/json") or media.get("multipart/form-data") or {}
    return list(walk_schema(content["schema"], "")) if "schema" in content else []


def ref_resource(path: str) -> str | None:
    """The project-scoped resource a body field references; None for the catalog's."""
    leaf = path.rsplit(".", 1)[-1]
    if path in PROJECT_REFS:
        return PROJECT_REFS[path]
    if leaf in CATALOG_REFS:
        return None
    return PROJECT_REFS[leaf]


def get_path(body: dict, path: str) -> tuple[dict, str] | None:
    """The dict holding path's leaf in body (the first element of lists), and the leaf."""
    node: Any = body
    *parents, leaf = path.split(".")
    for part in parents:
        name = part.removesuffix("[]")
        node = node.get(name) if isinstance(node, dict) else None
        if part.endswith("[]"):
            node = node[0] if node else None
    return (node, leaf) if isinstance(node, dict) and leaf in node else None


@dataclass
class Mixed:
    label: str
    url: str
    body: dict | None
    home: str  # the project the request acts in: "a" or "b"
    tokens: tuple[str, ...]  # the refusal names one of them: an id or field of the request
    only_b: bool = False  # nothing of A is left: a member of B may do it


def mixed_cases(w: Walk, op: Op) -> Iterator[Mixed]:
    a_values = {p: object_id(w, op, p, "a") for p in op.params}
    if len(op.params) > 1:
        for param in op.params:
            values = {**a_values, param: object_id(w, op, param, "b")}
            body = BODIES[op.key](w) if op.has_body else None
            yield Mixed(f"{{{param}}} of project B", fill(op.path, values), body,
                        "b" if param == op.params[0] else "a", tuple(str(v) for v in values.values()))
    paths = ref_paths(w.spec, op)
    for path in paths:
        resource = ref_resource(path)
        # Another project's object; for the catalog's (seen by all), an id no row has; for tasks, also
        # a task of another pipeline of the same project.
        variants = [(w.b[resource], "project B")] if resource else [(ABSENT, "nowhere")]
        if resource == "task":
            variants.append((w.a["other_task"], "another pipeline of project A"))
        for bad, where in variants:
            body = BODIES[op.key](w)
            found = get_path(body, path)
            if found is None and op.method == "put" and "." not in path:
                body = {}  # a partial update of that field alone
                found = (body, path)
            assert found is not None, f"BODIES[{op.key!r}] lacks the reference field {path}: add it"
            holder, leaf = found
            holder[leaf] = bad
            left = [p for p in paths if p != path and ref_resource(p) and get_path(body, p)]
            only_b = where == "project B" and not op.params and not left
            tokens = (str(bad), *{p.rsplit(".", 1)[-1] for p in paths})
            yield Mixed(f"{path} of {where}", fill(op.path, a_values), body, "b" if only_b else "a", tokens, only_b)
    if op.key == "post /api/v1/pipeline/import":
        yaml = import_yaml(w.names["b"], unique("imp"), w.names["template"])
        yield Mixed("project B by name", op.path, {"yaml": yaml}, "b", (w.names["b"],), only_b=True)


@pytest.mark.parametrize("caller", MIXERS)
def test_ids_of_two_projects_never_mix(walk: Walk, caller: str):
    w, client = walk, walk.users[caller]
    cases = 0
    for op in operations(w.spec):
        if op.kind != "project" or op.method == "get":
            continue
        for case in mixed_cases(w, op):
            role = MEMBERSHIP[caller].get(case.home)
            if case.only_b and role is not None:
                continue  # a member of B may write into B: nothing mixed
            if role is None:
                want = {404}
            elif RANK[role] < RANK[op.need]:
                want = {403}
            else:
                want = {400, 404}
            before = w.state()
            status, payload = call(client, op, case.url, case.body)
            after = w.state()
            where = f"{caller}: {op.method.upper()} {case.url} with {case.label}"
            assert status in want, (where, f"expected {sorted(want)}, got {status}", case.body, payload)
            assert after == before, f"{where} answered {status} but changed {changed_tables(before, after)}"
            if status != 403:
                text = json.dumps(payload)
                assert any(t in text for t in case.tokens), (where, "the refusal names none of", case.tokens, payload)
            cases += 1
    assert cases >= 25, f"the mixed-id walk covered only {cases} requests"


# ---- members ------------------------------------------------------------------------------------------

def test_members_are_managed_by_owners_only(walk: Walk):
    w = walk
    pid, members = w.a["project"], w.members["a"]
    # Nobody below owner changes a member, not even themselves.
    for user, member, body in (("developer", "developer", {"role": "owner"}), ("viewer", "viewer", {"role": "owner"}),
                               ("developer", "owner", {"role": "viewer"}), ("viewer", "owner", {"role": "viewer"})):
        for method in ("put", "delete"):
            before = w.state()
            resp = w.users[user].request(method, f"/api/v1/project/{pid}/members/{members[member]}",
                                         json=body if method == "put" else None)
            assert resp.status_code == 403, (user, method, member, resp.get_json())
            assert w.state() == before, (user, method, member)
    # An owner promotes a member, who may then manage members, and demotes them again.
    spare = w.spare_user()[1]
    added = add_member(w.owner, pid, spare, "developer")
    resp = w.owner.put(f"/api/v1/project/{pid}/members/{members['developer']}", json={"role": "owner"})
    assert resp.status_code == 200 and resp.get_json()["role"] == "owner", resp.get_json()
    resp = w.users["developer"].put(f"/api/v1/project/{pid}/members/{added}", json={"role": "viewer"})
    assert resp.status_code == 200 and resp.get_json()["role"] == "viewer", resp.get_json()
    resp = w.owner.put(f"/api/v1/project/{pid}/members/{members['developer']}", json={"role": "developer"})
    assert resp.status_code == 200 and resp.get_json()["role"] == "developer", resp.get_json()
    before = w.state()
    resp = w.users["developer"].delete(f"/api/v1/project/{pid}/members/{added}")
    assert resp.status_code == 403, resp.get_json()
    assert w.state() == before
    assert w.owner.delete(f"/api/v1/project/{pid}/members/{added}").status_code == 200


def test_the_last_owner_stays(walk: Walk):
    w = walk
    owner, admin, developer = w.owner, w.admin, w.users["developer"]
    pid = created(owner.post("/api/v1/project/", json={"name": unique("sole")}))["id"]
    first = owner.get(f"/api/v1/project/{pid}/members").get_json()["items"][0]["id"]
    for client in (owner, admin):
        before = w.state()
        attempts = [client.delete(f"/api/v1/project/{pid}/members/{first}")]
        attempts += [client.put(f"/api/v1/project/{pid}/members/{first}", json={"role": role})
                     for role in ("developer", "viewer")]
        for resp in attempts:  # 409, naming the member's role
            assert resp.status_code == 409, resp.get_json()
            assert resp.get_json()["errors"][0]["field"] == "role" and "last owner" in resp.get_json()["message"]
        assert w.state() == before, "the last owner was removed or demoted"
    # With a second owner the first may step down; then the second is the last one.
    second = add_member(owner, pid, developer.username, "owner")
    assert owner.put(f"/api/v1/project/{pid}/members/{first}", json={"role": "viewer"}).status_code == 200
    before = w.state()
    assert developer.delete(f"/api/v1/project/{pid}/members/{second}").status_code == 409
    assert developer.put(f"/api/v1/project/{pid}/members/{second}", json={"role": "viewer"}).status_code == 409
    assert owner.put(f"/api/v1/project/{pid}/members/{second}", json={"role": "viewer"}).status_code == 403
    assert w.state() == before


@pytest.mark.parametrize("action", ["put", "delete"])
def test_two_owners_cannot_demote_each_other_at_once(walk: Walk, monkeypatch, action: str):
    """Each of the last two owners demotes (or removes) the other at the same moment: one wins, the
    other is refused, and the project keeps an owner. Both requests are held right after counting the
    other owners, so without a lock both would see one left and both would go through."""
    import threading

    from myapp.api.projects import ProjectApi

    w = walk
    first, second = w.owner, w.users["owner_both"]
    pid = created(first.post("/api/v1/project/", json={"name": unique("two")}))["id"]
    mine = first.get(f"/api/v1/project/{pid}/members").get_json()["items"][0]["id"]
    theirs = add_member(first, pid, second.username, "owner")
    barrier = threading.Barrier(2, timeout=1.5)
    counted = ProjectApi._owners_left

    def held(self, pk: int, without: int) -> int:
        left = counted(self, pk, without)
        try:
            barrier.wait()  # the other request has counted too (unless a lock holds it back)
        except threading.BrokenBarrierError:
            pass
        return left

    monkeypatch.setattr(ProjectApi, "_owners_left", held)
    answers: dict[str, int] = {}

    def demote(name: str, client: ApiClient, member: int) -> None:
        caller = ApiClient(client.client.application.test_client(), client.token)
        url = f"/api/v1/project/{pid}/members/{member}"
        resp = caller.put(url, json={"role": "viewer"}) if action == "put" else caller.delete(url)
        answers[name] = resp.status_code

    threads = [threading.Thread(target=demote, args=("first", first, theirs)),
               threading.Thread(target=demote, args=("second", second, mine))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    monkeypatch.setattr(ProjectApi, "_owners_left", counted)
    members = w.admin.get(f"/api/v1/project/{pid}/members").get_json()["items"]
    owners = [m for m in members if m["role"] == "owner"]
    assert sorted(answers.values()) == [200, 409] and len(owners) == 1, (answers, members)


def test_admin_sees_and_manages_everything(walk: Walk):
    w = walk
    admin = w.admin
    for key in ("pipeline", "notebook", "task_run"):
        assert admin.get(f"/api/v1/{key}/{w.b[key]}").status_code == 200
    group = created(admin.post("/api/v1/resource_group/", json=BODIES["post /api/v1/resource_group/"](w)))
    quota = created(admin.post("/api/v1/quota/", json={"project_id": w.b["project"], "resource_group_id": group["id"],
                                                       "cpu": "8", "memory": "32Gi", "gpus": 2}))
    quota = admin.get(f"/api/v1/quota/{quota['id']}").get_json()
    assert (quota["cpu"], quota["memory"], quota["gpus"]) == ("8", "32Gi", 2)
    resp = admin.put(f"/api/v1/quota/{quota['id']}", json={"cpu": "500m"})
    assert resp.status_code == 200 and resp.get_json()["cpu_millicores"] == 500
