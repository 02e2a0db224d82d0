"""The permission walk's world (tests/api/test_permission_walk.py): the `Walk` its tests share (two projects
with one of every object, a client per caller, what was enqueued), the state every refused call must leave
as it was (whole FAB tables, the rows the walk made), and the users and run tokens it signs in as.
"""
from __future__ import annotations

import functools
import itertools
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from tests.support import ApiClient, login_token, unique

# ---- the world ----------------------------------------------------------------------------------

@dataclass
class Walk:
    app: Any
    spec: dict
    users: dict[str, ApiClient]
    a: dict[str, int]
    b: dict[str, int]
    cat: dict[str, int]
    names: dict[str, str]
    members: dict[str, dict[str, int]]  # project -> user key -> membership id
    engine: Any
    queries: list[tuple[str, str]]  # (table, SELECT of its rows) for state()
    enqueued: list[tuple]
    counter: Iterator[int] = field(default_factory=itertools.count)

    @property
    def owner(self) -> ApiClient:
        return self.users["owner"]

    @property
    def admin(self) -> ApiClient:
        return self.users["admin"]

    def n(self) -> int:
        return next(self.counter)

    def spare_user(self) -> tuple[int, str]:
        return spare_user(self.app)

    def column(self, model: str, pk: int, name: str) -> Any:
        from flask_appbuilder import Model

        from myapp.extensions import db

        table = Model.metadata.tables[model]
        with self.app.app_context():
            return db.session.execute(sa.select(table.c[name]).where(table.c.id == pk)).scalar_one()

    def state(self) -> dict[str, list]:
        """Every row the walk could touch, and every message sent to the workers (plain SQL: it runs
        around every call of the walk)."""
        out: dict[str, list] = {"enqueued": list(self.enqueued)}
        conn = self.engine.raw_connection()
        try:
            cursor = conn.cursor()
            for table, sql in self.queries:
                cursor.execute(sql)
                out[table] = cursor.fetchall()
            conn.rollback()
        finally:
            conn.close()
        return out


# FAB's roles and permissions are few and fixed: compared whole. Every other table only from the
# rows this module made on (rows of other modules sharing the process are nobody's business here).
WHOLE_TABLES = {"ab_role", "ab_permission", "ab_view_menu", "ab_permission_view", "ab_permission_view_role",
                "ab_group", "ab_group_role"}


def state_queries(app) -> tuple[Any, list[tuple[str, str]]]:
    """The engine, and per table the SELECT of the rows state() compares."""
    from flask_appbuilder import Model

    from myapp.extensions import db

    queries = []
    with app.app_context():
        engine = db.engine
        quote = engine.dialect.identifier_preparer.quote
        for table in Model.metadata.sorted_tables:
            order = ", ".join(quote(c.name) for c in table.primary_key.columns)
            where = ""
            if "id" in table.c and table.name not in WHOLE_TABLES:
                floor = (db.session.scalar(sa.select(sa.func.max(table.c.id))) or 0) + 1
                where = f" WHERE id >= {floor}"
            queries.append((table.name, f"SELECT * FROM {quote(table.name)}{where} ORDER BY {order}"))
        db.session.rollback()
    return engine, queries


def changed_tables(before: dict, after: dict) -> list[str]:
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


PASSWORD = uuid.uuid4().hex


@functools.lru_cache(maxsize=1)
def password_hash() -> str:
    from werkzeug.security import generate_password_hash

    return generate_password_hash(PASSWORD)  # once: hashing is slow on purpose


def new_user(app, admin: bool = False, signs_in: bool = True) -> tuple[int, str]:
    from myapp.auth.security import ADMIN_ROLE, USER_ROLE
    from myapp.extensions import appbuilder

    sm, name = appbuilder.sm, unique("admin" if admin else "user")
    with app.app_context():
        user = sm.add_user(name, name, "-", f"{name}@localhost", [sm.find_role(ADMIN_ROLE if admin else USER_ROLE)],
                           hashed_password=password_hash() if signs_in else "!")  # "!" matches no password
        assert user, f"could not create user {name}"
        return user.id, user.username


def sign_in(app, admin: bool = False) -> ApiClient:
    user_id, name = new_user(app, admin)
    client = app.test_client()
    api = ApiClient(client, login_token(client, name, PASSWORD))
    api.username, api.user_id = name, user_id
    return api


def spare_user(app) -> tuple[int, str]:
    """A user who belongs to no project yet; nobody signs in as them."""
    return new_user(app, signs_in=False)


def run_token(app, run_id: int, owned: list) -> str:
    """The token of a run, as the run controller issues it; its identity (the project's bot) is then
    made an admin and an owner of the projects in owned, which the token must not gain anything from."""
    from myapp.auth.run_tokens import issue, token_of
    from myapp.auth.security import ADMIN_ROLE
    from myapp.extensions import appbuilder, db
    from myapp.models import PipelineRun, ProjectMember, ProjectRole, User
    from myapp.models.base import utcnow

    with app.app_context():
        row = issue(db.session.get(PipelineRun, run_id), utcnow())
        bot = db.session.get(User, row.user_id)
        if owned:
            bot.roles = [*bot.roles, appbuilder.sm.find_role(ADMIN_ROLE)]
        for world in owned:
            db.session.add(ProjectMember(project_id=world.ids["project"], user_id=bot.id, role=ProjectRole.OWNER))
        db.session.commit()
        return token_of(row)
