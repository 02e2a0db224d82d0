"""raw_select: a kept list statement run on the DBAPI cursor gives exactly the rows SQLAlchemy's Core execution
gives (every column type a list shows: datetimes, booleans, enums, JSON text, nulls), on SQLite and PostgreSQL;
a lost connection is invalidated, not handed out again."""
from __future__ import annotations

import pytest
import sqlalchemy as sa

from myapp.api.base import ResourceApi
from myapp.api.raw_select import fetch_all
from myapp.api.rows import column_names
from myapp.extensions import appbuilder, db
from myapp.models import TaskState
from tests.support import TEST_DATABASE
from tests.world import build_catalog, build_project

pytestmark = pytest.mark.backends


@pytest.fixture()
def world(app, admin, user):
    return build_project(user, build_catalog(admin), app)


def list_apis() -> list[ResourceApi]:
    return [view for view in appbuilder.baseviews if isinstance(view, ResourceApi) and view.presents_columns()
            and "id" in column_names(view.model)]


def test_rows_equal_sqlalchemy_core_for_every_list(app, world):
    project = world.ids["project"]
    with app.test_request_context():
        apis = list_apis()
        assert {type(api).__name__ for api in apis} >= {"PipelineApi", "PipelineRunApi", "TaskRunApi", "ImageApi"}
        connection = db.session.connection()
        compared = 0
        for api in apis:
            for names, values in (((), {}), (("project_id",), {"f_project_id": project})):
                if names and ("project_id" not in sa.inspect(api.model).columns or api.model.__name__ == "Project"):
                    continue
                scopes = (False, True) if api.scope == "project" or type(api).__name__ == "ImageApi" else (False,)
                for scoped in scopes:
                    page, count = api.list_statements(names, "-id", scoped)
                    params = {"page_limit": 100, "page_offset": 0, "scope_projects": [project],
                              "count_projects": [project], "count_project_id": project, **values}
                    core = [tuple(row) for row in connection.execute(page, params)]
                    assert fetch_all(connection, page, params) == core, type(api).__name__
                    assert fetch_all(connection, count, params) == [tuple(connection.execute(count, params).one())]
                    compared += bool(core)
        assert compared >= 10  # the world has rows in these lists
        # an enum filter (a member, as the list's parser gives it) and its count from the kept counts
        api = next(api for api in apis if type(api).__name__ == "TaskRunApi")
        first = sa.text("SELECT state FROM task_run WHERE project_id = :p")
        state = TaskState(connection.scalar(first, {"p": project}))
        page, _count = api.list_statements(("state",), "-id", True)
        params = {"page_limit": 10, "page_offset": 0, "scope_projects": [project], "count_projects": [project],
                  "f_state": state, "count_state": state.value}
        rows = fetch_all(connection, page, params)
        assert rows == [tuple(row) for row in connection.execute(page, params)]
        assert rows and {row[list(page.selected_columns.keys()).index("state")] for row in rows} == {state.value}


def test_a_lost_connection_is_invalidated(app, world):
    with app.test_request_context():
        api = next(api for api in list_apis() if type(api).__name__ == "PipelineApi")
        page, _count = api.list_statements((), "-id", False)
        connection = db.session.connection()
        raw = connection.connection.dbapi_connection
        if TEST_DATABASE == "postgresql":  # the server ends the session, as a restart would
            with db.engine.connect() as other:
                other.execute(sa.text("SELECT pg_terminate_backend(:pid)"), {"pid": raw.info.backend_pid})
        else:
            raw.close()
        with pytest.raises(db.engine.dialect.loaded_dbapi.Error):
            fetch_all(connection, page, {"page_limit": 1, "page_offset": 0})
        assert connection.invalidated
        db.session.rollback()
        db.session.close()
        assert db.session.execute(sa.text("SELECT 1")).scalar() == 1  # the pool gave a working one
