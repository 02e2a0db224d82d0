"""The browser side of the web app: the built UI under /ui/ and cookie sessions for it.

The UI is a static single-page app (frontend/, built by Vite); every page of it is
index.html, and the app routes in the browser. Session login here is for the browser;
scripts use the JWT from FAB's /api/v1/security/login.
"""
from __future__ import annotations

from pathlib import Path

from flask import Blueprint, Flask, current_app, jsonify, redirect, send_from_directory
from flask_appbuilder import BaseView, expose
from flask_login import current_user, login_user, logout_user
from flask_wtf.csrf import generate_csrf

from ..api.errors import ApiError
from ..api.routing import json_body
from ..extensions import appbuilder, csrf

DEFAULT_UI_DIR = Path(__file__).resolve().parents[2] / "frontend" / "dist"
ui = Blueprint("ui", __name__)
session_api = Blueprint("session_api", __name__, url_prefix="/api/v1/session")


class SpaIndexView(BaseView):
    """FAB's index page: the UI lives under /ui/."""

    route_base = ""
    default_view = "index"

    @expose("/")
    def index(self):
        return redirect("/ui/")


def ui_dir() -> Path:
    return Path(current_app.config.get("MYAPP_UI_DIR") or DEFAULT_UI_DIR)


@ui.get("/ui/")
@ui.get("/ui/<path:path>")
def spa(path: str = ""):
    root = ui_dir()
    if not (root / "index.html").is_file():
        return ("The UI is not built: run `make ui` (npm ci && npm run build in frontend/).\n", 503,
                {"Content-Type": "text/plain; charset=utf-8"})
    if path.startswith("assets/"):
        # File names carry a content hash: cache them for a year.
        return send_from_directory(root, path, max_age=31_536_000)
    response = send_from_directory(root, "index.html", max_age=0)
    response.headers["Cache-Control"] = "no-cache"
    return response


@session_api.get("/")
def status():
    """Whether the browser is signed in, and a CSRF token for the login form."""
    return jsonify(authenticated=bool(current_user and current_user.is_authenticated), csrf_token=generate_csrf())


@session_api.post("/login")
def login():
    csrf.protect()
    data = json_body()
    missing = [f for f in ("username", "password") if not isinstance(data.get(f), str) or not data[f]]
    if missing:
        raise ApiError(f"Invalid input: {missing[0]}: is required",
                       [{"field": f, "reason": "is required"} for f in missing])
    user = appbuilder.sm.auth_user_db(data["username"], data["password"])
    if user is None:
        raise ApiError("Invalid username or password", status=401)
    login_user(user, remember=False)
    return jsonify(authenticated=True, csrf_token=generate_csrf())


@session_api.post("/logout")
def logout():
    csrf.protect()
    logout_user()
    return jsonify(authenticated=False, csrf_token=generate_csrf())


def register_ui(app: Flask) -> None:
    app.register_blueprint(ui)
    app.register_blueprint(session_api)
