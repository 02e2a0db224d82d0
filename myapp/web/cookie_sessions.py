"""Flask's signed-cookie sessions (the cookie carries only a server-side session id, myapp/auth/logins.py), cheaper
for the requests that carry no cookie: most API calls come with a Bearer token alone.

Flask builds its itsdangerous serializer twice per request (open and save) and works out every cookie
setting before it finds the session empty: about 5% of a list request's CPU. Here the serializer is made
once per key set, and an empty session nobody changed ends at once (with `Vary: Cookie` when it was read,
as Flask adds it). What is signed, verified and set is Flask's own code.
"""
from __future__ import annotations

from typing import Any

from flask import Flask
from flask.sessions import SecureCookieSessionInterface, SessionMixin


class CookieSessionInterface(SecureCookieSessionInterface):
    def __init__(self) -> None:
        self._kept: tuple[Any, Any] = (None, None)  # (the keys it was made with, the serializer)

    def get_signing_serializer(self, app: Flask) -> Any:
        keys = (app.secret_key, tuple(app.config["SECRET_KEY_FALLBACKS"] or ()))
        kept_keys, serializer = self._kept
        if kept_keys != keys or serializer is None:
            serializer = super().get_signing_serializer(app)
            self._kept = (keys, serializer)
        return serializer

    def save_session(self, app: Flask, session: SessionMixin, response: Any) -> None:
        if not session and not session.modified:
            if session.accessed:
                response.vary.add("Cookie")
            return
        super().save_session(app, session, response)


def install(app: Flask) -> None:
    app.session_interface = CookieSessionInterface()
