"""Safe webhooks: addresses checked at save and at delivery (SSRF), no redirects, bounded answers, signed
deliveries verified by a real local receiver, the event filter, the secret's endpoints, task.failed."""
from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json

import pytest
import sqlalchemy as sa
import yaml

from tests.fake_backend import FakeBackend
from tests.pipelines.support import make_pipeline
from tests.pipelines.webhook_receiver import receiver, self_signed
from tests.support import unique
from tests.world import created

PUBLIC = "93.184.216.34"  # what the fake DNS answers for public names (nothing is sent there)


@pytest.fixture()
def allow(app, monkeypatch):
    """allow(*entries): the admin allow-list for this test (empty unless given)."""
    monkeypatch.setitem(app.config, "MYAPP_WEBHOOK_ALLOWED_HOSTS", ())
    return lambda *entries: monkeypatch.setitem(app.config, "MYAPP_WEBHOOK_ALLOWED_HOSTS", entries)


@pytest.fixture()
def dns(monkeypatch):
    """A DNS of the test's own: dns[name] = [addresses] (or a callable giving them); other names as usual."""
    from myapp.pipelines import notify

    table: dict = {}
    real = notify.resolve

    def fake(host, port):
        if host in table:
            answer = table[host]() if callable(table[host]) else table[host]
            return [ipaddress.ip_address(a) for a in answer]
        return real(host, port)

    monkeypatch.setattr(notify, "resolve", fake)
    return table


@pytest.fixture()
def project(user):
    return created(user.post("/api/v1/project/", json={"name": unique("wh")}))


def new_pipeline(user, project, **fields):
    return user.post("/api/v1/pipeline/", json={"project_id": project["id"], "name": unique("p"), **fields})


def field_errors(resp) -> dict[str, str]:
    assert resp.status_code == 400, resp.get_json()
    return {e["field"]: e["reason"] for e in resp.get_json()["errors"]}


# ---- which addresses ------------------------------------------------------------------------------
@pytest.mark.parametrize(("address", "reason"), [
    ("127.0.0.1", "loopback"), ("::1", "loopback"), ("169.254.169.254", "cloud metadata"),
    ("169.254.10.1", "link-local"), ("fe80::1", "link-local"), ("10.1.2.3", "private"), ("172.16.0.1", "private"),
    ("192.168.1.1", "private"), ("fd12:3456::1", "private"), ("fc00::1", "private"), ("0.0.0.0", "unspecified"),
    ("::", "unspecified"), ("224.0.0.1", "multicast"), ("ff02::1", "multicast"), ("240.0.0.1", "reserved"),
    ("::ffff:127.0.0.1", "loopback"), ("::ffff:169.254.169.254", "cloud metadata"), ("2002:a00:1::", "private"),
    ("64:ff9b::a9fe:a9fe", "cloud metadata"), ("100.64.0.1", "not a public"), ("fec0::1", "site-local"),
])
def test_addresses_a_webhook_may_not_reach(address, reason):
    from myapp.pipelines.notify import address_problem

    assert reason in address_problem(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", [PUBLIC, "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"])
def test_public_addresses_pass(address):
    from myapp.pipelines.notify import address_problem

    assert address_problem(ipaddress.ip_address(address)) is None


# ---- at save time -----------------------------------------------------------------------------------
@pytest.mark.parametrize(("url", "reason"), [
    ("http://127.0.0.1:8080/x", "127.0.0.1 is a loopback address"),
    ("http://[::1]/x", "::1 is a loopback address"),
    ("http://169.254.169.254/latest/meta-data/", "the cloud metadata address"),
    ("http://[::ffff:a00:1]/", "a private address (10.0.0.1 inside"),
    ("http://localhost/x", "host 'localhost' resolves to"),
    ("http://internal.example/", "host 'internal.example' resolves to 10.0.0.7, a private address"),
    ("https://rebind.example/", "resolves to 192.168.0.9"),  # one bad address of two is enough
    ("http://nowhere.invalid/", "host 'nowhere.invalid' does not resolve"),
    ("ftp://hooks.example/x", "URL"),
    ("http:///nohost", "URL"),
])
def test_save_refuses_what_a_webhook_may_not_reach(user, project, allow, dns, url, reason):
    dns.update({"internal.example": ["10.0.0.7"], "rebind.example": [PUBLIC, "192.168.0.9"],
                "hooks.example": [PUBLIC]})
    errors = field_errors(new_pipeline(user, project, webhook_url=url))
    assert list(errors) == ["webhook_url"] and reason in errors["webhook_url"], errors
    if "resolves" in reason or " is " in reason:
        assert "MYAPP_WEBHOOK_ALLOWED_HOSTS" in errors["webhook_url"]  # says how an admin would allow it


def test_every_door_checks_the_url(user, project, catalog, allow, dns):
    """API create and update, YAML import and clone all refuse it, naming webhook_url."""
    dns["hooks.example"] = [PUBLIC]
    pipe = created(new_pipeline(user, project, webhook_url="https://hooks.example/x"))
    assert field_errors(user.put(f"/api/v1/pipeline/{pipe['id']}", json={"webhook_url": "http://10.0.0.1/"}))[
        "webhook_url"].startswith("10.0.0.1 is a private address")
    text = yaml.safe_load(user.get(f"/api/v1/pipeline/{pipe['id']}/export").get_json()["yaml"])
    text["tasks"] = [{"name": "t", "template": "python"}]
    text["webhook_url"] = "http://[fe80::1]/x"
    resp = user.post("/api/v1/pipeline/import", json={"yaml": yaml.safe_dump(text)})
    assert "link-local" in field_errors(resp)["webhook_url"]
    # Clone checks again: the host's DNS answer (or the allow-list) may have changed since it was saved.
    dns["hooks.example"] = ["127.0.0.1"]
    resp = user.post(f"/api/v1/pipeline/{pipe['id']}/clone", json={"name": "copy"})
    assert "resolves to 127.0.0.1, a loopback address" in field_errors(resp)["webhook_url"]
    # A save that leaves the stored URL as it is does not ask DNS again.
    assert user.put(f"/api/v1/pipeline/{pipe['id']}", json={"description": "d"}).status_code == 200


def test_allow_list_names_hosts_and_networks(user, project, allow, dns):
    dns.update({"ci.internal": ["10.20.0.5"], "other.internal": ["10.30.0.5"]})
    allow("ci.internal", "10.20.0.0/16", "::1")
    for url in ("http://ci.internal/hook", "http://10.20.3.4:8080/", "http://[::1]/", "http://CI.internal./x"):
        assert new_pipeline(user, project, webhook_url=url).status_code == 201, url
    assert "10.30.0.5, a private address" in field_errors(
        new_pipeline(user, project, webhook_url="http://other.internal/"))["webhook_url"]


def test_events_are_checked_and_stored_once_in_order(user, project, allow, dns):
    dns["hooks.example"] = [PUBLIC]
    plain = created(new_pipeline(user, project, webhook_url="https://hooks.example/x"))
    assert plain["webhook_events"] == ["run.failed", "run.succeeded", "run.cancelled"]  # today's behaviour
    pipe = created(new_pipeline(user, project, webhook_url="https://hooks.example/x",
                                webhook_events=["task.failed", "run.failed", "task.failed"]))
    assert pipe["webhook_events"] == ["run.failed", "task.failed"]
    assert "webhook_events[0]" in field_errors(new_pipeline(user, project, webhook_events=["run.exploded"]))
    assert field_errors(new_pipeline(user, project, webhook_events=[])) == {
        "webhook_events": "name at least one event"}


# ---- the secret -------------------------------------------------------------------------------------------
def test_secret_is_made_shown_to_developers_only_and_rotated(app, user, project, catalog, make_user, allow, dns):
    from myapp.extensions import db
    from myapp.models import Pipeline
    from myapp.pipelines.notify import secret_of

    dns["hooks.example"] = [PUBLIC]
    none = created(new_pipeline(user, project))
    assert user.post(f"/api/v1/pipeline/{none['id']}/webhook_secret").get_json() == {"secret": None}
    pipe = created(new_pipeline(user, project, webhook_url="https://hooks.example/x"))
    shown = user.post(f"/api/v1/pipeline/{pipe['id']}/webhook_secret")
    secret = shown.get_json()["secret"]
    assert len(secret) == 64 and int(secret, 16) >= 0
    assert shown.headers["Cache-Control"] == "no-store"
    # Never in objects, lists, the graph or the YAML.
    for answer in (pipe, user.get(f"/api/v1/pipeline/{pipe['id']}").get_json(),
                   user.get("/api/v1/pipeline/", query_string={"project_id": project["id"]}).get_json(),
                   user.get(f"/api/v1/pipeline/{pipe['id']}/graph").get_json(),
                   user.get(f"/api/v1/pipeline/{pipe['id']}/export").get_json()):
        assert "webhook_secret" not in json.dumps(answer) and secret not in json.dumps(answer)
    viewer = make_user()
    created(user.post(f"/api/v1/project/{project['id']}/members", json={"username": viewer.username,
                                                                          "role": "viewer"}))
    assert viewer.get(f"/api/v1/pipeline/{pipe['id']}").status_code == 200
    assert viewer.post(f"/api/v1/pipeline/{pipe['id']}/webhook_secret").status_code == 403
    assert viewer.post(f"/api/v1/pipeline/{pipe['id']}/webhook_secret/rotate").status_code == 403
    rotated = user.post(f"/api/v1/pipeline/{pipe['id']}/webhook_secret/rotate").get_json()["secret"]
    assert rotated != secret and len(rotated) == 64
    assert user.post(f"/api/v1/pipeline/{pipe['id']}/webhook_secret").get_json() == {"secret": rotated}
    # Changing the URL or applying the exported YAML keeps it; a clone gets its own.
    dns["other.example"] = [PUBLIC]
    assert user.put(f"/api/v1/pipeline/{pipe['id']}", json={"webhook_url": "https://other.example/"}).status_code == 200
    created(user.post("/api/v1/task/", json={"pipeline_id": pipe["id"], "name": "t", "template_id": catalog}))
    export = user.get(f"/api/v1/pipeline/{pipe['id']}/export").get_json()["yaml"]
    assert "other.example" in export and user.post("/api/v1/pipeline/import", json={"yaml": export}).status_code == 200
    clone = created(user.post(f"/api/v1/pipeline/{pipe['id']}/clone", json={"name": "copy"}))
    with app.app_context():
        assert secret_of(db.session.get(Pipeline, pipe["id"])) == rotated
        assert secret_of(db.session.get(Pipeline, clone["id"])) not in (None, rotated)


# ---- delivery -------------------------------------------------------------------------------------------
def finished_run(app, catalog, url, events=None, outcome="succeeded"):
    """A run of a one-task pipeline with webhook url, driven to its end by the fake backend."""
    from myapp.extensions import db
    from myapp.models import Pipeline, PipelineRun
    from myapp.pipelines.controller import RunController
    from myapp.pipelines.notify import give_secret

    run_id, _ = make_pipeline(app, catalog, {"a": {}}, [])
    backend = FakeBackend({"a": [outcome]})
    with app.app_context():
        pipeline = db.session.get(Pipeline, db.session.get(PipelineRun, run_id).pipeline_id)
        pipeline.webhook_url, secret = url, give_secret(pipeline)
        if events is not None:
            pipeline.webhook_events = events
        db.session.commit()
        controller = RunController(lambda task: backend)
        for _ in range(10):
            if controller.reconcile(run_id).value == outcome:
                break
        return run_id, secret


def verify(secret: str, headers: dict[str, str], body: bytes) -> bool:
    """What docs/webhooks.md tells a receiver to do."""
    expected = hmac.new(secret.encode(), headers["X-Myapp-Timestamp"].encode() + b"." + body, hashlib.sha256)
    return hmac.compare_digest(headers["X-Myapp-Signature"], "sha256=" + expected.hexdigest())


def test_delivery_is_signed_and_verifies(app, catalog):
    from myapp.pipelines.notify import send_run_webhook

    with receiver() as hook:
        run_id, secret = finished_run(app, catalog, hook.url)
        with app.app_context():
            assert send_run_webhook(run_id, "delivery-1") == 200
    [got] = hook.received
    assert verify(secret, got.headers, got.body)
    assert not verify("another secret", got.headers, got.body)
    assert not verify(secret, got.headers, got.body.replace(b"succeeded", b"failed"))
    assert (got.headers["X-Myapp-Event"], got.headers["X-Myapp-Delivery"]) == ("run.succeeded", "delivery-1")
    assert got.headers["Content-Type"] == "application/json" and got.path == "/hook"
    payload = json.loads(got.body)
    assert (payload["event"], payload["run_id"], payload["tasks"]["a"]["state"]) == ("run.succeeded", run_id,
                                                                                     "succeeded")


def test_event_filter(app, catalog):
    from myapp.pipelines.notify import send_run_webhook

    with receiver() as hook:
        quiet, _ = finished_run(app, catalog, hook.url, events=["run.failed", "task.failed"])
        loud, _ = finished_run(app, catalog, hook.url, events=["run.failed"], outcome="failed")
        with app.app_context():
            assert send_run_webhook(quiet) is None
            assert send_run_webhook(loud) == 200
    assert [r.headers["X-Myapp-Event"] for r in hook.received] == ["run.failed"]


@pytest.mark.parametrize(("status", "retry"), [(302, False), (307, False), (404, False), (400, False), (429, True),
                                               (500, True), (503, True)])
def test_answers_that_fail_and_whether_they_are_retried(app, catalog, status, retry):
    from myapp.pipelines.notify import WebhookError, send_run_webhook

    with receiver() as hook:
        hook.answers = [(status, {"Location": hook.url.replace("/hook", "/elsewhere")}, b"no")]
        run_id, _ = finished_run(app, catalog, hook.url)
        with app.app_context(), pytest.raises(WebhookError) as caught:
            send_run_webhook(run_id)
    assert caught.value.retry is retry and str(status) in str(caught.value)
    assert [r.path for r in hook.received] == ["/hook"]  # a redirect is not followed


def test_answer_is_not_read_beyond_the_limit(app, catalog):
    from myapp.pipelines.notify import send_run_webhook

    with receiver() as hook:
        hook.flood_bytes = 256 * 1024 * 1024
        run_id, _ = finished_run(app, catalog, hook.url)
        with app.app_context():
            assert send_run_webhook(run_id) == 200
    assert hook.flood_sent < hook.flood_bytes  # the client hung up long before


def test_delivery_checks_dns_again_and_connects_to_the_checked_address(app, catalog, allow, dns, monkeypatch):
    """Saved while its name was public, the name now answers loopback: refused, not retried. With the
    address allowed, the request goes to the address the check saw, under the URL's host name (no DNS
    knows hooks.example: only the checked address can have been used), and ignores proxy settings."""
    from myapp.pipelines.notify import WebhookError, send_run_webhook

    with receiver(host="hooks.example") as hook:
        dns["hooks.example"] = ["127.0.0.1"]
        run_id, _ = finished_run(app, catalog, hook.url)
        with app.app_context(), pytest.raises(WebhookError) as caught:
            send_run_webhook(run_id)
        assert caught.value.retry is False and "resolves to 127.0.0.1, a loopback address" in str(caught.value)
        assert hook.received == []
        allow("127.0.0.0/8")
        monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
        with app.app_context():
            assert send_run_webhook(run_id) == 200
    assert hook.received[0].headers["Host"] == f"hooks.example:{hook.port}"


def test_https_connects_to_the_checked_address_with_sni_and_a_hostname_check(app, catalog, allow, dns, tmp_path,
                                                                               monkeypatch):
    from myapp.pipelines.notify import WebhookError, send_run_webhook

    allow("127.0.0.1")
    dns.update({"hooks.example": ["127.0.0.1"], "impostor.example": ["127.0.0.1"]})
    cert, key = self_signed(tmp_path, "hooks.example")
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(cert))
    with receiver(tls=(cert, key), host="hooks.example") as hook:
        run_id, secret = finished_run(app, catalog, hook.url)
        with app.app_context():
            assert send_run_webhook(run_id) == 200
        assert hook.server_names == ["hooks.example"] and verify(secret, hook.received[0].headers,
                                                                  hook.received[0].body)
        # The same server under a name its certificate does not carry: the TLS check refuses it.
        other, _ = finished_run(app, catalog, hook.url.replace("hooks.example", "impostor.example"))
        with app.app_context(), pytest.raises(WebhookError, match=r"TLS check failed.*doesn't match 'hooks\.example'"):
            send_run_webhook(other)
    assert len(hook.received) == 1


def test_notify_run_retries_with_one_delivery_id_and_gives_up(app, catalog):
    """5xx: retried (bounded, the same X-Myapp-Delivery each time); 404: failed at once."""
    import myapp.tasks  # noqa: F401 - registers the tasks with the app's Celery
    from myapp.pipelines.notify import WebhookError

    task = app.extensions["celery"].tasks["myapp.notify_run"]
    with receiver() as hook:
        hook.answers = [(503, {}, b"busy")]
        run_id, _ = finished_run(app, catalog, hook.url)
        result = task.apply(args=[run_id])
        assert isinstance(result.result, WebhookError) and "503" in str(result.result)
        assert len(hook.received) == 1 + task.max_retries
        assert len({r.headers["X-Myapp-Delivery"] for r in hook.received}) == 1
        hook.received.clear()
        hook.answers = [(404, {}, b"gone")]
        result = task.apply(args=[run_id])
        assert isinstance(result.result, WebhookError) and len(hook.received) == 1


# ---- task.failed -------------------------------------------------------------------------------------------
def test_task_failed_fires_once_when_no_retry_is_left(app, catalog):
    from myapp.extensions import db
    from myapp.models import Pipeline, PipelineRun, TaskRun
    from myapp.pipelines.controller import RunController
    from myapp.pipelines.notify import give_secret, send_task_webhook

    run_id, ids = make_pipeline(app, catalog, {"a": {"retries": 1}, "b": {}}, [])
    backend = FakeBackend({"a": ["failed", "failed"], "b": ["succeeded"]})
    told: list[int] = []
    controller = RunController(lambda task: backend, on_task_failed=told.append)
    with receiver() as hook, app.app_context():
        pipeline = db.session.get(Pipeline, db.session.get(PipelineRun, run_id).pipeline_id)
        pipeline.webhook_url = hook.url
        give_secret(pipeline)
        pipeline.webhook_events = ["task.failed"]
        db.session.commit()
        for _ in range(10):
            if controller.reconcile(run_id).value == "failed":
                break
        attempts = db.session.scalars(sa.select(TaskRun).filter_by(pipeline_run_id=run_id, task_id=ids["a"])
                                      .order_by(TaskRun.attempt)).all()
        assert [a.state.value for a in attempts] == ["failed", "failed"]
        assert told == [attempts[1].id]  # the first failure had a retry left
        assert send_task_webhook(told[0], "d-1") == 200
        assert send_task_webhook(attempts[0].id) == 200  # asked directly, any failed attempt is told
    payload = json.loads(hook.received[0].body)
    assert hook.received[0].headers["X-Myapp-Event"] == "task.failed"
    assert (payload["event"], payload["task"], payload["attempt"], payload["run_id"]) == ("task.failed", "a", 2,
                                                                                           run_id)


# ---- the migration ------------------------------------------------------------------------------------------
def test_migration_gives_existing_webhooks_a_secret_and_todays_events(app, tmp_path):
    from alembic import command

    from myapp.models.migrate import alembic_config

    url = f"sqlite:///{tmp_path / 'm.sqlite'}"
    with app.app_context():
        command.upgrade(alembic_config(url), "0009")
    engine = sa.create_engine(url)
    now = "2026-01-01 00:00:00"
    with engine.begin() as conn:
        conn.execute(sa.text("INSERT INTO project (id, name, namespace, description, created_at, updated_at) "
                             "VALUES (1, 'p', 'p', '', :now, :now)"), {"now": now})
        for pid, hook in ((1, "https://hooks.example/x"), (2, None)):
            conn.execute(sa.text(
                "INSERT INTO pipeline (id, project_id, name, description, parameters, paused, max_active_runs, "
                "concurrency_policy, depends_on_past, webhook_url, created_at, updated_at) VALUES "
                "(:id, 1, :name, '', '{}', 0, 1, 'wait', 0, :hook, :now, :now)"),
                {"id": pid, "name": f"p{pid}", "hook": hook, "now": now})
    with app.app_context():
        command.upgrade(alembic_config(url), "0010")
    with engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT id, webhook_events, webhook_secret FROM pipeline ORDER BY id")).all()
    assert [json.loads(events) for _, events, _ in rows] == [["run.failed", "run.succeeded", "run.cancelled"]] * 2
    assert len(rows[0][2]) == 64 and rows[1][2] is None
    with app.app_context():
        command.downgrade(alembic_config(url), "0009")
    with engine.connect() as conn:
        assert "webhook_secret" not in {c["name"] for c in sa.inspect(conn).get_columns("pipeline")}
    engine.dispose()
