"""Webhook signing secrets are sealed at rest (myapp/auth/sealed.py): the column never holds the secret, the
API and deliveries unseal it, rows stored plain before keep working (sealed on first use or by migration
0019), and a secret sealed under another SECRET_KEY is reported, never used as garbage."""
from __future__ import annotations

import hashlib
import hmac
import json

import pytest
import sqlalchemy as sa

from tests.pipelines.support import make_pipeline
from tests.pipelines.webhook_receiver import receiver
from tests.support import unique
from tests.world import created

pytestmark = pytest.mark.backends


def stored_secret(app, pipeline_id: int) -> str | None:
    """What the database holds, read with plain SQL (what a dump or a read-only account would see)."""
    from myapp.extensions import db

    with app.app_context():
        return db.session.execute(sa.text("SELECT webhook_secret FROM pipeline WHERE id = :id"),
                                  {"id": pipeline_id}).scalar_one()


def set_stored(app, pipeline_id: int, value: str | None, url: str | None = None) -> None:
    from myapp.extensions import db

    with app.app_context():
        db.session.execute(sa.text("UPDATE pipeline SET webhook_secret = :v, webhook_url = COALESCE(:u, webhook_url) "
                                   "WHERE id = :id"), {"v": value, "u": url, "id": pipeline_id})
        db.session.commit()


def verifies(secret: str, got) -> bool:
    mac = hmac.new(secret.encode(), got.headers["X-Myapp-Timestamp"].encode() + b"." + got.body, hashlib.sha256)
    return hmac.compare_digest(got.headers["X-Myapp-Signature"], "sha256=" + mac.hexdigest())


def own_project(user) -> int:
    return created(user.post("/api/v1/project/", json={"name": unique("ws")}))["id"]


def test_the_column_never_holds_the_secret(app, user):
    pipe = created(user.post("/api/v1/pipeline/", json={"project_id": own_project(user), "name": unique("p"),
                                                         "webhook_url": "http://127.0.0.1:9/hook"}))
    shown = user.post(f"/api/v1/pipeline/{pipe['id']}/webhook_secret").get_json()["secret"]
    stored = stored_secret(app, pipe["id"])
    assert len(shown) == 64 and stored.startswith("sealed:") and shown not in stored
    rotated = user.post(f"/api/v1/pipeline/{pipe['id']}/webhook_secret/rotate").get_json()["secret"]
    stored = stored_secret(app, pipe["id"])
    assert rotated != shown and stored.startswith("sealed:") and rotated not in stored and shown not in stored
    assert user.post(f"/api/v1/pipeline/{pipe['id']}/webhook_secret").get_json() == {"secret": rotated}
    clone = created(user.post(f"/api/v1/pipeline/{pipe['id']}/clone", json={"name": unique("c")}))
    assert stored_secret(app, clone["id"]).startswith("sealed:")


def _finished_run(app, catalog, url: str, project_id: int | None = None) -> tuple[int, int]:
    from myapp.extensions import db
    from myapp.models import PipelineRun
    from myapp.pipelines.controller import RunController
    from tests.fake_backend import FakeBackend

    run_id, _ = make_pipeline(app, catalog, {"a": {}}, [], project_id=project_id)
    backend = FakeBackend({"a": ["succeeded"]})
    with app.app_context():
        pipeline_id = db.session.get(PipelineRun, run_id).pipeline_id
    set_stored(app, pipeline_id, None, url)
    with app.app_context():
        controller = RunController(lambda task: backend)
        for _ in range(10):
            if controller.reconcile(run_id).value == "succeeded":
                break
    return run_id, pipeline_id


def test_deliveries_are_signed_with_the_unsealed_secret(app, catalog):
    from myapp.extensions import db
    from myapp.models import Pipeline
    from myapp.pipelines.notify import give_secret, send_run_webhook

    with receiver() as hook:
        run_id, pipeline_id = _finished_run(app, catalog, hook.url)
        with app.app_context():
            secret = give_secret(db.session.get(Pipeline, pipeline_id))
            db.session.commit()
            assert send_run_webhook(run_id) == 200
    assert secret not in stored_secret(app, pipeline_id)
    [got] = hook.received
    assert verifies(secret, got) and not verifies(stored_secret(app, pipeline_id), got)


def test_a_row_stored_plain_before_still_works_and_is_sealed_on_first_use(app, catalog, user):
    from myapp.pipelines.notify import send_run_webhook

    legacy = "ab" * 32
    with receiver() as hook:
        run_id, pipeline_id = _finished_run(app, catalog, hook.url, own_project(user))
        set_stored(app, pipeline_id, legacy)
        with app.app_context():
            assert send_run_webhook(run_id) == 200  # signed with the secret the receiver already has
    assert verifies(legacy, hook.received[0])
    stored = stored_secret(app, pipeline_id)
    assert stored.startswith("sealed:") and legacy not in stored
    # Shown through the API too: the same secret, and a plain row read there is sealed by that read.
    set_stored(app, pipeline_id, legacy)
    assert user.post(f"/api/v1/pipeline/{pipeline_id}/webhook_secret").get_json() == {"secret": legacy}
    assert stored_secret(app, pipeline_id).startswith("sealed:")


def test_a_secret_sealed_under_another_key_is_reported_not_used(app, catalog, user):
    from myapp.auth.sealed import seal
    from myapp.pipelines.notify import WebhookError, send_run_webhook

    with receiver() as hook:
        run_id, pipeline_id = _finished_run(app, catalog, hook.url, own_project(user))
        set_stored(app, pipeline_id, seal("an older key", "webhook-secret", "cd" * 32))
        with app.app_context(), pytest.raises(WebhookError) as caught:
            send_run_webhook(run_id)
        assert caught.value.retry is False and "rotate it" in str(caught.value)
        assert hook.received == []
    shown = user.post(f"/api/v1/pipeline/{pipeline_id}/webhook_secret")
    assert shown.status_code == 409 and "rotate it" in json.dumps(shown.get_json())
    rotated = user.post(f"/api/v1/pipeline/{pipeline_id}/webhook_secret/rotate").get_json()["secret"]
    assert user.post(f"/api/v1/pipeline/{pipeline_id}/webhook_secret").get_json() == {"secret": rotated}


def _pipeline_rows(url: str) -> None:
    engine = sa.create_engine(url)
    now = "2026-01-01 00:00:00"
    with engine.begin() as conn:
        conn.execute(sa.text("INSERT INTO project (id, name, namespace, description, created_at, updated_at) "
                             "VALUES (1, 'p', 'p', '', :now, :now)"), {"now": now})
        for pid, secret in ((1, "ef" * 32), (2, None)):
            conn.execute(sa.text(
                "INSERT INTO pipeline (id, project_id, name, description, parameters, paused, max_active_runs, "
                "concurrency_policy, depends_on_past, webhook_url, webhook_secret, created_at, updated_at) VALUES "
                "(:id, 1, :name, '', '{}', 0, 1, 'wait', 0, 'https://hooks.example/x', :secret, :now, :now)"),
                {"id": pid, "name": f"p{pid}", "secret": secret, "now": now})
    engine.dispose()


def _secrets(url: str) -> list[str | None]:
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        found = list(conn.execute(sa.text("SELECT webhook_secret FROM pipeline ORDER BY id")).scalars())
    engine.dispose()
    return found


def test_migration_seals_existing_secrets_with_the_apps_key(app, tmp_path):
    from alembic import command

    from myapp.auth.sealed import unseal
    from myapp.models.migrate import alembic_config

    url = f"sqlite:///{tmp_path / 'm.sqlite'}"
    with app.app_context():
        command.upgrade(alembic_config(url), "0018")
    _pipeline_rows(url)
    with app.app_context():
        command.upgrade(alembic_config(url), "0019")
    sealed, none = _secrets(url)
    assert none is None and sealed.startswith("sealed:") and "ef" * 32 not in sealed
    assert unseal(app.config["SECRET_KEY"], "webhook-secret", sealed) == "ef" * 32
    with app.app_context():
        command.downgrade(alembic_config(url), "0018")
    assert _secrets(url) == ["ef" * 32, None]


def test_migration_without_the_app_leaves_rows_for_first_use(app, tmp_path):
    """A bare Alembic run has no SECRET_KEY: rows stay plain (secret_of seals them when first read)."""
    from alembic import command

    from myapp.models.migrate import alembic_config

    url = f"sqlite:///{tmp_path / 'm.sqlite'}"
    with app.app_context():
        config = alembic_config(url)
    command.upgrade(config, "0018")
    _pipeline_rows(url)
    command.upgrade(config, "0019")
    assert _secrets(url) == ["ef" * 32, None]
