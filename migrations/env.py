"""Alembic environment: the target is FAB's Model.metadata, the URL comes from the app config."""
from __future__ import annotations

from alembic import context
from flask_appbuilder import Model
from sqlalchemy import create_engine, pool

import myapp.models  # noqa: F401  (registers every table on Model.metadata)
from myapp.models.list_count import keep_counts

config = context.config
target_metadata = Model.metadata


def run_migrations_offline() -> None:
    context.configure(url=config.get_main_option("sqlalchemy.url"), target_metadata=target_metadata,
                      literal_binds=True, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    engine = create_engine(config.get_main_option("sqlalchemy.url"), poolclass=pool.NullPool)
    with engine.connect() as connection:
        # render_as_batch: SQLite alters tables by copying them.
        context.configure(connection=connection, target_metadata=target_metadata,
                          render_as_batch=True, compare_type=True)
        with context.begin_transaction():
            context.run_migrations()
        keep_counts(connection)  # list counts' triggers: a SQLite table rebuild drops them
        connection.commit()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
