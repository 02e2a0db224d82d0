"""Process-wide extension objects, bound to the app in create_app (one FAB app per process)."""
from flask_appbuilder import AppBuilder
from flask_appbuilder.models.sqla.base import SQLA
from flask_caching import Cache
from flask_wtf.csrf import CSRFProtect

from .shared.generations import Generations

db = SQLA()
csrf = CSRFProtect()
cache = Cache()
generations = Generations()  # what processes keep is checked against these (myapp/shared/generations.py)
# Permissions are synced by `myapp init`, not on every web start (Superset does the same).
appbuilder = AppBuilder(update_perms=False)
