"""Per-run platform credentials (myapp/auth/run_tokens.py): a task that calls the platform gets a token of
its own run and project, handed to it as a Secret, refused once the run has ended; no shared token.

Runs are driven by the real RunController against the fake backend, the local backend (a real
sandboxed job reads the token) and the Kubernetes backend on the API-server double.
"""
from __future__ import annotations

import base64
import datetime as dt
import hashlib
import sys
import threading
import time
from dataclasses import dataclass

import pytest
import sqlalchemy as sa

from myapp.backends import BackendError, JobRef
from myapp.rendering.contract import run_token_secret
from tests.auth.support import as_token, token_of, token_rows
from tests.fake_backend import FakeBackend
from tests.pipelines.support import make_pipeline
from tests.support import unique, wait_until
from tests.world import created

pytestmark = pytest.mark.backends

REGISTER_ARGS = {"model_name": "digits", "model_path": "/tmp/model.pt"}
TERMINAL = ("succeeded", "failed", "cancelled")


@dataclass
class Run:
    id: int
    project_id: int
    namespace: str
    tasks: dict[str, int]

    @property
    def secret(self) -> str:
        return run_token_secret(self.id)


def make_run(app, tasks: dict[str, tuple[str, dict, dict]], edges=(), project_id: int | None = None) -> Run:
    """tasks: {name: (catalog template, args, task fields)}; a new project unless project_id is given."""
    from myapp.extensions import db
    from myapp.models import PipelineRun, Project

    fields = {name: {"template": template, "args": args} | extra for name, (template, args, extra) in tasks.items()}
    run_id, ids = make_pipeline(app, None, fields, edges, project_id=project_id, name=unique("pipe"))
    with app.app_context():
        project = db.session.get(Project, db.session.get(PipelineRun, run_id).project_id)
        return Run(run_id, project.id, project.namespace, ids)


def controller(backend_for, **kw):
    from myapp.pipelines.controller import RunController

    return RunController(backend_for if callable(backend_for) else (lambda task: backend_for), **kw)


def drive(app, ctl, run_id: int, until=lambda state: state in TERMINAL, passes: int = 40) -> str:
    """Reconcile pass after pass (no time passes: the backend's jobs move when the test moves them)."""
    with app.app_context():
        for _ in range(passes):
            state = ctl.reconcile(run_id).value
            if until(state):
                return state
    return state


def waits_on_a_lock(app, thread: threading.Thread) -> bool:
    """Whether `thread` is blocked behind another transaction's lock: on PostgreSQL a session of this
    database waits for a lock; on SQLite (one writer at a time) the thread is inside a statement, which
    waits in SQLite's busy handler until the writer commits."""
    from myapp.extensions import db

    with app.app_context():
        if db.engine.dialect.name == "postgresql":
            with db.engine.connect() as conn:
                return bool(conn.scalar(sa.text("SELECT count(*) FROM pg_stat_activity "
                                                "WHERE datname = current_database() AND wait_event_type = 'Lock'")))
    frame = sys._current_frames().get(thread.ident)
    while frame is not None:
        if frame.f_code.co_name == "do_execute" and "sqlalchemy" in frame.f_code.co_filename:
            return True
        frame = frame.f_back
    return False


def job_of(fake: FakeBackend, task: str) -> dict:
    return next(job for job in fake.jobs.values() if job["task"] == task)


def assert_refused(app, token: str, message: str) -> None:
    resp = as_token(app, token).get("/api/v1/me/")
    assert resp.status_code == 401, resp.get_json()
    assert resp.get_json()["message"] == f"Not authenticated: {message}"


def test_issued_at_start_put_before_the_attempt_that_mounts_it_and_revoked_by_cancel(app, catalog):
    run = make_run(app, {"prep": ("xgboost", {}, {}), "register": ("model-register", REGISTER_ARGS, {})},
                   [("prep", "register")])
    fake = FakeBackend({"register": ["hang"]})
    ctl = controller(fake)
    with app.app_context():
        ctl.reconcile(run.id)
    assert len(token_rows(app, run.id)) == 1  # at start, before any attempt was submitted
    drive(app, ctl, run.id, until=lambda state: any(j["task"] == "register" for j in fake.jobs.values()))
    token = token_of(app, run.id)
    # The Secret was there when the register job was created, holding the run's token; nothing else got it.
    assert job_of(fake, "register")["secrets"] == {run.secret: {"token": token}}
    assert job_of(fake, "prep")["secrets"] == {}
    assert fake.secret_puts == {(run.namespace, run.secret): 1}
    env = job_of(fake, "register")["manifests"][0]["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "PLATFORM_API_TOKEN", "valueFrom": {"secretKeyRef": {"name": run.secret, "key": "token"}}} in env
    me = as_token(app, token).get("/api/v1/me/")
    assert me.status_code == 200, me.get_json()
    assert me.get_json()["is_admin"] is False
    assert [(p["id"], p["role"]) for p in me.get_json()["projects"]] == [(run.project_id, "developer")]

    with app.app_context():
        ctl.cancel(run.id)
    assert_refused(app, token, f"token revoked: run {run.id} has finished")
    assert fake.secrets == {}
    [row] = token_rows(app, run.id)
    assert row.revoked_at is not None and row.released_at is not None


def test_a_run_whose_tasks_call_nothing_puts_no_secret(app, catalog):
    run = make_run(app, {"a": ("xgboost", {}, {})})  # a template without the token (python mounts it)
    fake = FakeBackend()
    assert drive(app, controller(fake), run.id) == "succeeded"
    assert len(token_rows(app, run.id)) == 1 and fake.secret_puts == {}


def test_two_workers_starting_runs_of_one_project_share_its_one_bot(app, catalog):
    """Worker A creates the project's bot and has not committed when worker B looks for it: B waits
    (PostgreSQL: on the unique key, then takes A's; SQLite: on the write lock) and both use one bot."""
    from myapp.auth import run_tokens
    from myapp.extensions import db
    from myapp.models import PipelineRun, Project, User

    first = make_run(app, {"a": ("python", {}, {})})
    second = make_run(app, {"a": ("python", {}, {})}, project_id=first.project_id)
    inserted, commit = threading.Event(), threading.Event()
    bots: dict[str, object] = {}

    def worker(name: str, run_id: int) -> None:
        try:
            with app.app_context():
                # A pass writes its run row first (its lock), then issues the run's token.
                db.session.execute(sa.update(PipelineRun).where(PipelineRun.id == run_id)
                                   .values(reconciled_at=dt.datetime.now(dt.UTC)))
                if name == "b":
                    inserted.wait(10)
                bot = run_tokens.ensure_bot(db.session.get(Project, first.project_id))
                db.session.flush()
                if name == "a":
                    inserted.set()
                    commit.wait(10)
                bots[name] = bot.id
                db.session.commit()
        except Exception as exc:  # the assertion below shows it
            bots[name] = exc

    a = threading.Thread(target=worker, args=("a", first.id))
    b = threading.Thread(target=worker, args=("b", second.id))
    a.start()
    inserted.wait(10)
    b.start()
    wait_until(lambda: waits_on_a_lock(app, b), what="worker B to block behind A's uncommitted bot")
    commit.set()
    a.join(20)
    b.join(20)
    assert bots["a"] == bots["b"] and isinstance(bots["a"], int), bots
    with app.app_context():
        name = db.session.get(Project, first.project_id).name
        assert db.session.scalar(sa.select(sa.func.count()).select_from(User).where(
            User.email == f"{name}-bot@bots.myapp.invalid")) == 1


def test_issue_is_idempotent_across_passes_and_workers(app, catalog):
    """Two workers take turns; the task fails twice and is retried: one token row, and every put
    (one per attempt, the last after the Secret was lost) hands the job the very same token."""
    run = make_run(app, {"register": ("model-register", REGISTER_ARGS, {"retries": 2})})
    fake = FakeBackend({"register": ["failed", "failed", "succeeded"]})
    workers = [controller(fake), controller(fake)]
    with app.app_context():
        for turn in range(40):
            if len(fake.jobs) == 2:
                fake.secrets.clear()  # lost with a crashed worker, say: the next submit puts it again
            if workers[turn % 2].reconcile(run.id).value in TERMINAL:
                break
    assert len(token_rows(app, run.id)) == 1
    token = token_of(app, run.id)
    assert token == token_of(app, run.id)  # derived from the row: the same every time
    assert [job["secrets"] for job in fake.jobs.values()] == [{run.secret: {"token": token}}] * 3
    assert fake.secret_puts == {(run.namespace, run.secret): 3}
    assert fake.secrets == {}  # the run succeeded: gone
    assert_refused(app, token, f"token revoked: run {run.id} has finished")


def test_refused_once_the_run_has_finished_expired_or_forged(app, catalog):
    from flask_jwt_extended import create_access_token

    from myapp.extensions import db
    from myapp.models import PipelineRun, RunState, RunToken

    run = make_run(app, {"register": ("model-register", REGISTER_ARGS, {})})
    fake = FakeBackend({"register": ["hang"]})
    drive(app, controller(fake), run.id, until=lambda state: bool(fake.jobs))
    token = token_of(app, run.id)
    assert as_token(app, token).get("/api/v1/me/").status_code == 200
    other = make_run(app, {"a": ("python", {}, {})}, project_id=run.project_id)
    drive(app, controller(FakeBackend({"a": ["hang"]})), other.id, until=lambda state: state == "running")
    with app.app_context():
        row = db.session.scalar(sa.select(RunToken).where(RunToken.pipeline_run_id == run.id))
        # The same row (jti) claiming another run of the project: only the secret key could sign it.
        forged = create_access_token(identity=str(row.user_id), expires_delta=False, additional_claims={
            "jti": row.jti, "exp": int(time.time()) + 60, "myapp_run": other.id, "myapp_project": run.project_id})
    assert_refused(app, forged, "token revoked: it does not match its run")
    with app.app_context():  # the backstop: past its expiry it is refused even while the run goes on
        row = db.session.scalar(sa.select(RunToken).where(RunToken.pipeline_run_id == other.id))
        row.expires_at = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=5)
        db.session.commit()
    assert_refused(app, token_of(app, other.id), "token expired")
    with app.app_context():  # ended by something that did not revoke the row: the run's state decides
        db.session.get(PipelineRun, run.id).transition(RunState.FAILED, "test")
        db.session.commit()
    assert_refused(app, token, f"token revoked: run {run.id} has finished")


def test_the_finished_runs_secret_is_deleted_even_when_the_backend_failed_then(app, catalog, monkeypatch):
    """The delete fails when the run ends (the revocation stands); beat's tick deletes it later."""
    import myapp.tasks
    from myapp.backends import registry

    run = make_run(app, {"register": ("model-register", REGISTER_ARGS, {})})
    fake = FakeBackend()
    broken = {"on": True}

    def delete_secret(namespace, name):
        if broken["on"]:
            raise BackendError("injected: API server unavailable")
        FakeBackend.delete_secret(fake, namespace, name)

    monkeypatch.setattr(fake, "delete_secret", delete_secret)
    assert drive(app, controller(fake), run.id) == "succeeded"
    token = token_of(app, run.id)
    assert_refused(app, token, f"token revoked: run {run.id} has finished")
    assert (run.namespace, run.secret) in fake.secrets
    [row] = token_rows(app, run.id)
    assert row.revoked_at is not None and row.released_at is None
    broken["on"] = False
    monkeypatch.setattr(registry, "backend_for", lambda task: fake)  # what tick's controller uses
    monkeypatch.setattr(myapp.tasks.reconcile_run, "delay", lambda run_id: None)
    with app.app_context():
        myapp.tasks.tick()
    assert fake.secrets == {}
    [row] = token_rows(app, run.id)
    assert row.released_at is not None


@pytest.mark.slow  # a real sandboxed job
def test_local_job_reads_the_token_the_api_accepts_and_it_is_gone_after(app, catalog, admin, tmp_path):
    """A real sandboxed job of the local backend gets the run's token from the Secret's file: the file
    holds the token the API accepts (for this project only), the job read exactly that, and when the
    run has ended the file is gone and the API refuses the token."""
    from myapp.backends.local import LocalBackend

    probe = ("import hashlib, os; "
             "print('TOKEN ' + hashlib.sha256(os.environ['PLATFORM_API_TOKEN'].encode()).hexdigest(), flush=True)")
    template = created(admin.post("/api/v1/job_template/", json={
        "name": unique("token-probe"), "version": "1.0.0", "kind": "job", "image": "python:3.11-slim",
        "command": ["python", "-c", probe], "args_schema": {"type": "object", "properties": {}},
        "env": {"PLATFORM_API_TOKEN": "secret://myapp-api-token/token"},
        "default_resources": {"cpu": "1", "memory": "1Gi"}, "max_resources": {"cpu": "1", "memory": "1Gi", "gpu": 0}}))
    run = make_run(app, {"probe": (template["name"], {}, {})})
    other = make_run(app, {"a": ("python", {}, {})})
    local = LocalBackend(tmp_path / "home" / "jobs")
    ctl = controller(local)
    secret = local.workdir / "secrets" / run.namespace / run.secret / "token"
    drive(app, ctl, run.id, until=lambda state: secret.exists())
    token = token_of(app, run.id)
    assert secret.read_text() == token
    assert oct(secret.stat().st_mode & 0o777) == "0o600"
    api = as_token(app, token)
    assert [p["id"] for p in api.get("/api/v1/project/").get_json()["items"]] == [run.project_id]
    assert api.get(f"/api/v1/project/{other.project_id}").status_code == 404
    with app.app_context():  # the real job runs: reconcile as beat's tick would until the run ends
        state = wait_until(lambda: (s := ctl.reconcile(run.id).value) in TERMINAL and s, timeout=30, interval=0.2,
                           what="the run of the real job to end")
    assert state == "succeeded"
    with app.app_context():
        from myapp.extensions import db
        from myapp.models import TaskRun

        ref = JobRef.from_dict(db.session.scalar(sa.select(TaskRun.backend_ref).filter_by(pipeline_run_id=run.id)))
    assert [line.line for line in local.logs(ref)] == [f"TOKEN {hashlib.sha256(token.encode()).hexdigest()}"]
    assert not secret.parent.exists()
    assert_refused(app, token, f"token revoked: run {run.id} has finished")


def test_kubernetes_secret_in_the_project_namespace_deleted_when_the_run_ends(app, catalog, double, k8s_backend):
    run = make_run(app, {"register": ("model-register", REGISTER_ARGS, {})})
    ctl = controller(k8s_backend)
    drive(app, ctl, run.id, until=lambda state: bool(double.list("batch/v1", "Job", run.namespace)))
    token = token_of(app, run.id)
    stored = double.get("v1", "Secret", run.namespace, run.secret)
    assert stored["type"] == "Opaque" and stored["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "myapp"}
    assert base64.b64decode(stored["data"]["token"]).decode() == token
    [job] = double.list("batch/v1", "Job", run.namespace)
    env = job["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "PLATFORM_API_TOKEN", "valueFrom": {"secretKeyRef": {"name": run.secret, "key": "token"}}} in env
    double.set_status("batch/v1", "Job", run.namespace, job["metadata"]["name"],
                      {"conditions": [{"type": "Complete", "status": "True"}], "succeeded": 1})
    assert drive(app, ctl, run.id) == "succeeded"
    assert double.get("v1", "Secret", run.namespace, run.secret) is None
    assert_refused(app, token, f"token revoked: run {run.id} has finished")


def test_kubernetes_put_replaces_and_delete_is_idempotent(double, k8s_backend):
    k8s_backend.put_secret("team-a", "myapp-run-7-token", {"token": "first"})
    k8s_backend.put_secret("team-a", "myapp-run-7-token", {"token": "second"})  # 409: replaced
    stored = double.get("v1", "Secret", "team-a", "myapp-run-7-token")
    assert base64.b64decode(stored["data"]["token"]) == b"second"
    assert [r.method for r in double.requests_matching("*", r"/secrets")] == ["POST", "POST", "PUT"]
    k8s_backend.delete_secret("team-a", "myapp-run-7-token")
    k8s_backend.delete_secret("team-a", "myapp-run-7-token")  # 404: fine
    assert double.get("v1", "Secret", "team-a", "myapp-run-7-token") is None


def test_rendering_only_names_the_runs_secret():
    """Templates say secret://myapp-api-token/token; a run's render mounts that run's Secret instead."""
    from dataclasses import replace

    from myapp.rendering import ContextError, RenderContext, render
    from myapp.rendering.catalog import get_template

    ctx = RenderContext(project="p", namespace="team-a", run_id=7, task="t", service_account="myapp-p",
                        api_token_secret=run_token_secret(7))

    def token_ref(ctx: RenderContext) -> dict:
        [job] = render(get_template("model-register"), REGISTER_ARGS, ctx)
        env = job["spec"]["template"]["spec"]["containers"][0]["env"]
        return next(e for e in env if e["name"] == "PLATFORM_API_TOKEN")["valueFrom"]["secretKeyRef"]

    assert token_ref(ctx) == {"name": "myapp-run-7-token", "key": "token"}
    assert token_ref(replace(ctx, api_token_secret=""))["name"] == "myapp-api-token"  # a render outside a run
    with pytest.raises(ContextError, match="api_token_secret"):
        token_ref(replace(ctx, api_token_secret="Not_A_Secret"))


def test_local_put_replaces_and_delete_is_idempotent(tmp_path):
    from myapp.backends.local import LocalBackend

    local = LocalBackend(tmp_path / "jobs")
    local.put_secret("team-a", "s", {"token": "first", "old": "x"})
    local.put_secret("team-a", "s", {"token": "second"})
    folder = local.workdir / "secrets" / "team-a" / "s"
    assert {p.name: p.read_text() for p in folder.iterdir()} == {"token": "second"}
    assert all(oct(p.stat().st_mode & 0o777) == "0o700" for p in (folder, folder.parent, folder.parent.parent))
    local.delete_secret("team-a", "s")
    local.delete_secret("team-a", "s")
    assert not folder.exists()
    for namespace, name in (("secrets", "s"), ("team-a", "../x"), ("Team", "s")):
        with pytest.raises(BackendError):
            local.put_secret(namespace, name, {"token": "t"})


def test_init_retires_the_shared_long_lived_token(app, tmp_path):
    """`myapp init` used to write one 365-day token of `<project>-bot` for every job of the project:
    now that bot is taken over as the project's run identity, which refuses that token."""
    from flask_jwt_extended import create_access_token

    from myapp.backends.registry import local_workdir
    from myapp.extensions import db
    from myapp.models import Project, ProjectMember, ProjectRole, User
    from myapp.setup_data import create_user, retire_shared_token

    with app.app_context():
        project = Project(name=unique("legacy"), namespace=unique("legacy"))
        db.session.add(project)
        db.session.commit()
        bot = create_user(f"{project.name}-bot", "legacy bot passphrase")  # as ensure_project_token made it
        db.session.add(ProjectMember(project_id=project.id, user_id=bot.id, role=ProjectRole.DEVELOPER))
        db.session.commit()
        shared = create_access_token(identity=str(bot.id), expires_delta=dt.timedelta(days=365))
        path = local_workdir() / "secrets" / project.namespace / "myapp-api-token" / "token"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(shared)
        project_id, bot_id = project.id, bot.id
    assert [p["id"] for p in as_token(app, shared).get("/api/v1/project/").get_json()["items"]] == [project_id]
    with app.app_context():
        retire_shared_token(db.session.get(Project, project_id))
        bot = db.session.get(User, bot_id)
        assert not bot.active and bot.email.endswith("@bots.myapp.invalid")
        assert db.session.scalar(sa.select(ProjectMember.id).filter_by(user_id=bot_id)) is None
    assert not path.parent.exists()
    assert_refused(app, shared, "the token's user is deactivated or gone")


def test_a_token_kept_per_process_is_the_very_token_signed_afresh(app, catalog):
    """run_tokens.token_of signs once per process and app: the same bytes as signing again, per row, and
    none kept for another signing key."""
    from myapp.auth import run_tokens
    from myapp.extensions import db
    from myapp.models import RunToken

    first, second = make_run(app, {"register": ("model-register", REGISTER_ARGS, {})}), \
        make_run(app, {"register": ("model-register", REGISTER_ARGS, {})})
    fake = FakeBackend({"register": ["hang"]})
    with app.app_context():
        for run in (first, second):
            controller(fake).reconcile(run.id)
        rows = [db.session.scalar(sa.select(RunToken).where(RunToken.pipeline_run_id == run.id))
                for run in (first, second)]
        kept = [run_tokens.token_of(row) for row in rows]
        assert kept[0] != kept[1] and kept == [run_tokens.token_of(row) for row in rows]
        app.extensions.pop("myapp_run_tokens")  # nothing kept: signed afresh
        assert [run_tokens.token_of(row) for row in rows] == kept
        assert [job["secrets"] for job in fake.jobs.values()] == [{first.secret: {"token": kept[0]}},
                                                                  {second.secret: {"token": kept[1]}}]
        key = app.config["JWT_SECRET_KEY"]  # None: flask-jwt-extended signs with SECRET_KEY
        try:
            app.config["JWT_SECRET_KEY"] = "another key, so another signature, 32 bytes or more"
            assert run_tokens.token_of(rows[0]) != kept[0]
        finally:
            app.config["JWT_SECRET_KEY"] = key
        assert run_tokens.token_of(rows[0]) == kept[0]
