"""The signed-in caller kept per web process (myapp.auth.callers): read from SQL once, then reused while
unchanged, and never used again once a commit (here or in another process) changed it."""
from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import sqlalchemy as sa

pytestmark = pytest.mark.backends

ROOT = Path(__file__).resolve().parents[2]
NEW_PASSWORD = "a-new-password-for-tests"


@contextlib.contextmanager
def statements(app):
    """The SQL statements this process sends meanwhile."""
    from myapp.extensions import db

    seen: list[str] = []

    def record(_conn, _cursor, statement, *_args):
        seen.append(statement)

    with app.app_context():
        engine = db.engine
    sa.event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        sa.event.remove(engine, "before_cursor_execute", record)


def about_callers(seen: list[str]) -> list[str]:
    return [s for s in seen if "ab_user" in s or "token_cutoff" in s]


def test_the_caller_is_read_once_then_kept(app, user):
    """Three requests in a row read no user, role or cut-off. A few tries: other test sessions on this
    machine may share the Redis DB of the shared cache and flush it (a flush is a reload, never a stale
    snapshot)."""
    assert user.get("/api/v1/pipeline/").status_code == 200
    windows = []
    for _ in range(5):
        with statements(app) as seen:
            for _ in range(3):
                assert user.get("/api/v1/pipeline/").status_code == 200
        windows.append(about_callers(seen))
        if seen and not windows[-1]:
            break
    assert windows[-1] == [], windows


def test_admin_granted_and_taken_away_counts_from_the_next_request(admin, user):
    assert user.get("/api/v1/cluster/").status_code == 403  # admins only
    assert admin.put(f"/api/v1/user/{user.user_id}", json={"is_admin": True}).status_code == 200
    assert user.get("/api/v1/cluster/").status_code == 200
    assert user.get("/api/v1/me/").get_json()["is_admin"] is True
    assert admin.put(f"/api/v1/user/{user.user_id}", json={"is_admin": False}).status_code == 200
    assert user.get("/api/v1/cluster/").status_code == 403
    assert user.get("/api/v1/me/").get_json()["is_admin"] is False


def test_a_deactivated_user_is_refused_at_once(admin, user):
    assert user.get("/api/v1/pipeline/").status_code == 200
    assert admin.put(f"/api/v1/user/{user.user_id}", json={"active": False}).status_code == 200
    assert user.get("/api/v1/pipeline/").status_code == 401


def test_a_password_reset_ends_earlier_tokens_at_once(admin, user):
    assert user.get("/api/v1/pipeline/").status_code == 200
    assert admin.post(f"/api/v1/user/{user.user_id}/password", json={"password": NEW_PASSWORD}).status_code == 200
    answer = user.get("/api/v1/pipeline/")
    assert answer.status_code == 401 and "password was changed" in answer.get_json()["message"]


def test_a_change_committed_by_another_process_counts_here(app, user):
    """Another process (a second web worker, `myapp` on the command line) makes the user an admin: this
    process's kept snapshot is not used for the next request."""
    assert user.get("/api/v1/cluster/").status_code == 403
    script = textwrap.dedent(f"""
        from myapp.app import create_app
        from myapp.extensions import appbuilder, db
        from myapp.models import User
        app = create_app()
        with app.app_context():
            user = db.session.get(User, {user.user_id})
            user.roles = [*user.roles, appbuilder.sm.find_role("Admin")]
            db.session.commit()
    """)
    subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=os.environ.copy(), check=True, timeout=120)
    assert user.get("/api/v1/cluster/").status_code == 200


def test_a_kept_token_still_expires_and_a_changed_one_is_verified(app, user):
    """Verified tokens are kept per process (myapp.auth.security.keep_verified_tokens) only until they expire."""
    import datetime as dt
    import time

    from flask_jwt_extended import create_access_token

    from myapp.auth.claims import ISSUED_CLAIM

    with app.app_context():
        token = create_access_token(identity=str(user.user_id), expires_delta=dt.timedelta(seconds=2),
                                    additional_claims={ISSUED_CLAIM: time.time()})
    client = app.test_client()
    headers = {"Authorization": f"Bearer {token}"}
    assert client.get("/api/v1/pipeline/", headers=headers).status_code == 200
    assert client.get("/api/v1/pipeline/", headers=headers).status_code == 200  # the kept one
    head, payload, signature = token.split(".")
    forged = f"{head}.{payload}.{signature[:-4]}AAAA"
    assert client.get("/api/v1/pipeline/", headers={"Authorization": f"Bearer {forged}"}).status_code == 401
    time.sleep(2.2)
    answer = client.get("/api/v1/pipeline/", headers=headers)
    assert answer.status_code == 401, answer.get_json()


def test_memberships_are_read_once_then_kept_until_changed(app, admin, user, make_user):
    """The caller's projects are kept per process like the caller (api.scope.memberships): no membership
    query on later requests; one added through the API counts from the next request."""
    from tests.support import unique
    from tests.world import created

    owner = make_user()
    pid = created(owner.post("/api/v1/project/", json={"name": unique("p")}))["id"]
    assert user.get(f"/api/v1/project/{pid}").status_code == 404
    assert user.get("/api/v1/pipeline/").status_code == 200
    with statements(app) as seen:
        for _ in range(3):
            assert user.get("/api/v1/pipeline/").status_code == 200
    assert not [s for s in seen if "project_member" in s], seen
    added = owner.post(f"/api/v1/project/{pid}/members", json={"username": user.username, "role": "viewer"})
    assert added.status_code in (200, 201), added.get_json()
    assert user.get(f"/api/v1/project/{pid}").status_code == 200


def test_memberships_changed_by_another_process_count_here(app, user, make_user):
    """Another process adds the member and publishes it (as a second web worker does after its commit):
    this process's kept memberships are not used for the next request."""
    from tests.support import unique
    from tests.world import created

    owner = make_user()
    pid = created(owner.post("/api/v1/project/", json={"name": unique("p")}))["id"]
    assert user.get(f"/api/v1/project/{pid}").status_code == 404
    script = textwrap.dedent(f"""
        from myapp.api.scope import forget_memberships
        from myapp.app import create_app
        from myapp.extensions import db
        from myapp.models import ProjectMember, ProjectRole
        app = create_app()
        with app.app_context():
            db.session.add(ProjectMember(project_id={pid}, user_id={user.user_id}, role=ProjectRole.VIEWER))
            db.session.commit()
            forget_memberships({user.user_id})
    """)
    subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=os.environ.copy(), check=True, timeout=120)
    assert user.get(f"/api/v1/project/{pid}").status_code == 200
