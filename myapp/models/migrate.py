"""Run Alembic migrations against the app's database."""
from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from flask import current_app

MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"


def alembic_config(url: str | None = None) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    # '%' is ConfigParser interpolation: escape it in passwords.
    cfg.set_main_option("sqlalchemy.url", (url or current_app.config["SQLALCHEMY_DATABASE_URI"]).replace("%", "%%"))
    return cfg


def upgrade(revision: str = "head") -> None:
    command.upgrade(alembic_config(), revision)


def revision(message: str) -> None:
    command.revision(alembic_config(), message=message, autogenerate=True)
