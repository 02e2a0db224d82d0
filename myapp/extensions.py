"""Process-wide extension objects, bound to the app in create_app (one FAB app per process)."""
import random
import time

from flask_appbuilder import AppBuilder
from flask_appbuilder.models.sqla.base import SQLA
from flask_caching import Cache
from flask_wtf.csrf import CSRFProtect
from sqlalchemy.exc import OperationalError

from .shared.generations import Generations

db = SQLA()
csrf = CSRFProtect()
cache = Cache()
generations = Generations()  # what processes keep is checked against these (myapp/shared/generations.py)
# Permissions are synced by `myapp init`, not on every web start (Superset does the same).
appbuilder = AppBuilder(update_perms=False)

LOCKED_TRIES = 4  # runs of a request or task that found SQLite locked, the first included
LOCKED_PAUSE = 0.05  # seconds before the second run, doubled before each next one (plus up to half again)


def pause_after_lock(tries: int) -> None:
    """The wait before a run again that found SQLite locked: LOCKED_PAUSE doubled per run, plus up to half again."""
    time.sleep(LOCKED_PAUSE * 2 ** (tries - 1) * (1 + random.random() / 2))


def database_locked(exc: BaseException) -> bool:
    """SQLite's busy answer (its busy_timeout ran out); no other database says "database is locked"."""
    return isinstance(exc, OperationalError) and "database is locked" in str(exc.orig)
