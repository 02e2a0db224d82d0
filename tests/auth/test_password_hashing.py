"""The platform stores passwords as scrypt hashes (FAB's default). The test app hashes with one PBKDF2 round
(tests/support.py TEST_PASSWORD_HASH) to keep every test user cheap; these tests hold the real setting."""
from __future__ import annotations

import sqlalchemy as sa

from tests.support import TEST_PASSWORD_HASH, login_token, unique


def test_the_platform_hashes_passwords_with_scrypt(tmp_path):
    from myapp.config import build_config

    assert build_config({"INSTANCE_PATH": str(tmp_path)}).get("FAB_PASSWORD_HASH_METHOD", "scrypt") == "scrypt"


def stored_hash(app, username: str) -> str:
    from myapp.extensions import db
    from myapp.models import User

    with app.app_context():
        return db.session.scalar(sa.select(User.password).where(User.username == username))


def test_scrypt_users_made_every_way_sign_in(app, admin, monkeypatch):
    from myapp.setup_data import create_user

    monkeypatch.setitem(app.config, "FAB_PASSWORD_HASH_METHOD", "scrypt")
    password = "correct horse battery"
    made_by_cli = unique("cli")
    with app.app_context():
        create_user(made_by_cli, password)  # `myapp create-user`, `myapp init`'s admin
    resp = admin.post("/api/v1/user/", json={"username": unique("api"), "first_name": "A", "last_name": "B",
                                             "email": f"{unique('api')}@example.com", "password": password})
    assert resp.status_code == 201, resp.get_json()
    made_by_api = resp.get_json()["username"]
    for username in (made_by_cli, made_by_api):
        assert stored_hash(app, username).startswith("scrypt:")
        assert login_token(app.test_client(), username, password)
        wrong = app.test_client().post("/api/v1/security/login",
                                       json={"username": username, "password": password + "!", "provider": "db"})
        assert wrong.status_code == 401
    assert stored_hash(app, admin.username).startswith(TEST_PASSWORD_HASH.split(":")[0] + ":")
