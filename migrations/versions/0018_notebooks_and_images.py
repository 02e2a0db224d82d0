"""Notebooks and images: projects' registry credentials; Jupyter tokens sealed (myapp/auth/sealed.py).

`registry_credentials`: one row per project (myapp/images/credentials.py), the dockerconfigjson sealed.
The Jupyter tokens rows already hold are sealed with the app's SECRET_KEY, reachable when the migration
runs inside the app (`myapp db upgrade`, `myapp init`); without an app (plain `alembic`) rows stay as they are, which
readers accept (`unseal` returns an unprefixed value as it is) until the notebook's next start seals its
new token. Downgrade drops the credentials and leaves tokens sealed (a start writes a new one).

Revision ID: 0018
Revises: 0017
"""
import json

import sqlalchemy as sa
from alembic import op

from myapp.models.base import JSONType

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

PURPOSE = "notebook-token"  # myapp.notebooks.states.TOKEN_PURPOSE


def _secret_key() -> str | None:
    from flask import current_app, has_app_context

    return current_app.config.get("SECRET_KEY") if has_app_context() else None


def upgrade() -> None:
    op.create_table(
        "registry_credentials",
        sa.Column("project_id", sa.Integer(), sa.ForeignKey("project.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("server", sa.String(length=253), nullable=False),
        sa.Column("username", sa.String(length=255), nullable=False),
        sa.Column("sealed_config", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    _seal_notebook_tokens()


def _seal_notebook_tokens() -> None:
    key = _secret_key()
    if not key:
        return
    from myapp.auth import sealed

    bind = op.get_bind()
    notebook = sa.table("notebook", sa.column("id", sa.Integer), sa.column("job", JSONType))
    for row in bind.execute(sa.select(notebook.c.id, notebook.c.job)).all():
        job = json.loads(row.job) if isinstance(row.job, str) else row.job
        token = (job or {}).get("token") if isinstance(job, dict) else None
        if token and not sealed.is_sealed(token):
            bind.execute(notebook.update().where(notebook.c.id == row.id)
                         .values(job={**job, "token": sealed.seal(key, PURPOSE, token)}))


def downgrade() -> None:
    op.drop_table("registry_credentials")
