"""The permission walk's operations (tests/api/test_permission_walk.py): how each operation of the served spec
is classified (callers, roles, owner-only writes, targets, references) and what each caller may expect of
it; and the requests the walk sends: a valid body per operation, fresh objects for allowed deletes, the
URL with its ids filled in, and the call itself.
"""
from __future__ import annotations

import datetime as dt
import io
import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from tests.api.walk_world import Walk
from tests.support import ApiClient, unique
from tests.world import add_member, created, data_file, experiment_body, insert_finished_run

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
    "get /api/v1/notebook/project/{pk}/images": "project",  # pk: the project whose notebook images are listed
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
                 "post /api/v1/scheduler/simulate",  # a replay: answers figures, stores nothing
                 "post /api/v1/experiment/{pk}/start"}  # starting a running experiment changes nothing
# Body fields that reference another object, and what they reference.
PROJECT_REFS = {"project_id": "project", "pipeline_id": "pipeline", "task_run_id": "task_run",
                "model_version_id": "model_version", "version_id": "model_version",
                "shadow_version_id": "model_version", "upstream_task_id": "task", "downstream_task_id": "task",
                "tasks[].id": "task", "notebook_id": "notebook"}
CATALOG_REFS = {"template_id", "resource_group_id", "cluster_id"}  # every user sees them: only existence


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


def experiment_yaml(project: str) -> str:
    """A new experiment over the world's pipeline "train" (its parameter lr), not started."""
    return (f"name: {unique('exp')}\nproject: {project}\npipeline: train\nobjectives: [{{metric: loss}}]\n"
            "search_space: [{name: lr, type: float, low: 0.001, high: 1.0}]\n")


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
    "post /api/v1/experiment/": lambda w: experiment_body(w.a["pipeline"]),
    "post /api/v1/experiment/import": lambda w: {"yaml": experiment_yaml(w.names["a"])},
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
                                             "image": "python:3.11-slim",
                                             "default_resources": {"cpu": "1", "memory": "1Gi"}},
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
