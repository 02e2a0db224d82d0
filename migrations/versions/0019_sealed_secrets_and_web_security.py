"""Webhook signing secrets sealed at rest: the column widens to hold a sealed value, and the
rows stored plain are sealed with the app's SECRET_KEY when the migration runs inside the app
(`myapp db upgrade`, `myapp init`, `myapp.models.migrate.upgrade`). A bare `alembic upgrade` has no key: it
leaves them plain, and each is sealed the first time it is read or rotated (notify.secret_of).

Revision ID: 0019
Revises: 0018
"""
import sqlalchemy as sa
from alembic import op
from flask import current_app, has_app_context

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None

PURPOSE = "webhook-secret"  # myapp.pipelines.notify.SECRET_PURPOSE, copied: migrations stay fixed
# SQLite alters a type by copying the table: the copy keeps AUTOINCREMENT (ids never reused, 0009).
SQLITE_KEEP = {"sqlite_autoincrement": True}
PIPELINE = sa.table("pipeline", sa.column("id", sa.Integer), sa.column("webhook_secret", sa.String))


def upgrade() -> None:
    with op.batch_alter_table("pipeline", table_kwargs=SQLITE_KEEP) as batch:
        batch.alter_column("webhook_secret", existing_type=sa.String(length=128), type_=sa.String(length=256),
                           existing_nullable=True)
    if not has_app_context():
        return
    from myapp.auth.sealed import PREFIX, seal

    key = current_app.config["SECRET_KEY"]
    bind = op.get_bind()
    rows = bind.execute(sa.select(PIPELINE.c.id, PIPELINE.c.webhook_secret).where(
        PIPELINE.c.webhook_secret.is_not(None), sa.not_(PIPELINE.c.webhook_secret.startswith(PREFIX)))).all()
    for pipeline_id, secret in rows:
        bind.execute(sa.update(PIPELINE).where(PIPELINE.c.id == pipeline_id)
                     .values(webhook_secret=seal(key, PURPOSE, secret)))


def downgrade() -> None:
    # Back to plain values (they fit 128 characters again); without the key they cannot be opened.
    if has_app_context():
        from myapp.auth.sealed import PREFIX, unseal

        key = current_app.config["SECRET_KEY"]
        bind = op.get_bind()
        rows = bind.execute(sa.select(PIPELINE.c.id, PIPELINE.c.webhook_secret).where(
            PIPELINE.c.webhook_secret.startswith(PREFIX))).all()
        for pipeline_id, stored in rows:
            bind.execute(sa.update(PIPELINE).where(PIPELINE.c.id == pipeline_id)
                         .values(webhook_secret=unseal(key, PURPOSE, stored)))
    else:
        op.execute(PIPELINE.update().where(PIPELINE.c.webhook_secret.startswith("sealed:"))
                   .values(webhook_secret=None))
    with op.batch_alter_table("pipeline", table_kwargs=SQLITE_KEEP) as batch:
        batch.alter_column("webhook_secret", existing_type=sa.String(length=256), type_=sa.String(length=128),
                           existing_nullable=True)
