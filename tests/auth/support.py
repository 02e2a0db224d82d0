"""Run tokens as the tests of tests/auth see them: the token rows of a run, the token itself as the run's
task gets it, and an API client that calls with one.
"""
from __future__ import annotations

import sqlalchemy as sa

from tests.support import ApiClient


def token_rows(app, run_id: int) -> list:
    from myapp.extensions import db
    from myapp.models import RunToken

    with app.app_context():
        rows = db.session.scalars(sa.select(RunToken).where(RunToken.pipeline_run_id == run_id)).all()
        db.session.expunge_all()
        return rows


def token_of(app, run_id: int) -> str:
    from myapp.auth import run_tokens
    from myapp.extensions import db
    from myapp.models import RunToken

    with app.app_context():
        return run_tokens.token_of(db.session.scalar(sa.select(RunToken).where(RunToken.pipeline_run_id == run_id)))


def as_token(app, token: str) -> ApiClient:
    return ApiClient(app.test_client(), token)
