"""ResourceApi: list/get/create/update/delete for one model, scoped by project or role.

Subclasses declare data (model, schema, scope, parent, refs, filters); the checks that
keep projects apart live here once, so every API gets them the same way.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import sqlalchemy as sa
from flask import jsonify, request
from flask_appbuilder.api import BaseApi
from marshmallow import Schema

from ..extensions import db
from ..inputs.plain_data import INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN
from ..models import Project, ProjectRole
from .counts import count_of, count_params
from .errors import FieldError, NotFound
from .id_list import in_ids
from .raw_select import fetch_all
from .responses import MESSAGE, add_components, error_responses, model_schema, output_name, page_of
from .responses import ref as schema_ref
from .routing import json_body, route
from .rows import column_names, encode_rows, json_page, table_column, table_columns, to_json_value
from .scope import check_project, visible_project_ids

MAX_PAGE_SIZE = 100


@dataclass(frozen=True)
class Ref:
    """A foreign key in the request body: it must exist and be visible to the caller.

    same_project: the referenced row must belong to the object's project (else 404, so
    another project's ids reveal nothing); same: a column that must also match (an edge's
    tasks must be of the edge's pipeline).
    """

    model: Any  # a mapped model class; its columns are read by name
    label: str
    same_project: bool = True
    same: str | None = None


def query_args(allowed: set[str]) -> dict[str, str]:
    unknown = sorted(set(request.args) - allowed)
    if unknown:
        raise FieldError(unknown[0], f"unknown query parameter; allowed: {', '.join(sorted(allowed))}")
    return dict(request.args)


def bounded_int(args: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    try:
        value = int(args.get(name, default))
        if not low <= value <= high:
            raise ValueError
    except ValueError:
        raise FieldError(name, f"must be an integer from {low} to {high}") from None
    return value


class ResourceApi(BaseApi):
    allow_browser_login = True
    csrf_exempt = True  # routing.check_csrf does it, for session callers only
    version = "v1"

    model: ClassVar[Any]  # a mapped model class; its columns are read by name
    schema: ClassVar[type[Schema] | None] = None
    label: ClassVar[str] = "object"
    # "project": rows of projects the caller belongs to; "admin": admins only (by FAB role);
    # "catalog": every user reads, admins write (by FAB role).
    scope: ClassVar[str] = "project"
    parent: ClassVar[tuple[str, Any] | None] = None
    refs: ClassVar[dict[str, Ref]] = {}
    filters: ClassVar[tuple[str, ...]] = ()
    orders: ClassVar[tuple[str, ...]] = ("id",)
    immutable: ClassVar[tuple[str, ...]] = ()
    columns: ClassVar[tuple[str, ...] | None] = None
    # JSON schemas of the keys present() adds to the columns, or shapes it more precisely (OpenAPI).
    output_fields: ClassVar[dict[str, dict[str, Any]]] = {}
    write_role: ClassVar[ProjectRole] = ProjectRole.DEVELOPER

    # ---- presentation -------------------------------------------------------------
    def present(self, obj: Any) -> dict[str, Any]:
        cols = self.columns or column_names(self.model)
        return {c: to_json_value(getattr(obj, c)) for c in cols}

    @classmethod
    def presents_columns(cls) -> bool:
        """present() reads only columns (not overridden), so a list may hand it plain rows."""
        return cls.present is ResourceApi.present

    def body_schema(self, partial: bool = False) -> Schema:
        if self.schema is None:  # a read-only API that still routes a write: a programming error
            raise TypeError(f"{type(self).__name__} declares no schema")
        return self.schema(partial=partial)

    # ---- scope ----------------------------------------------------------------------
    def project_of(self, obj: Any) -> int:
        return obj.id if self.model is Project else obj.project_id

    def scope_projects(self) -> list[int] | None:
        """The projects a list of this API is limited to (None: every project, for admins and other scopes)."""
        return visible_project_ids() if self.scope == "project" else None

    @classmethod
    def scope_condition(cls) -> sa.ColumnElement:
        """What limits a list to the projects in the bind parameter scope_projects (scope_projects())."""
        return in_ids(table_column(cls.model, "id" if cls.model is Project else "project_id"), "scope_projects")

    def load(self, pk: int, needed: ProjectRole = ProjectRole.VIEWER) -> Any:
        obj = db.session.get(self.model, pk)
        missing = NotFound(self.label, pk)
        if obj is None:
            raise missing
        if self.scope == "project":
            check_project(self.project_of(obj), needed, missing)
        return obj

    def resolve_parent(self, data: dict[str, Any]) -> int | None:
        """Check the caller may write into the parent; return the new object's project id."""
        if self.parent is None:
            return None
        field, parent_model = self.parent
        parent_id = data[field]
        missing = NotFound(parent_model.__tablename__.replace("_", " "), parent_id)
        parent = db.session.get(parent_model, parent_id)
        if parent is None:
            raise missing
        project_id = parent.id if parent_model is Project else parent.project_id
        check_project(project_id, ProjectRole.DEVELOPER, missing)
        return project_id

    def check_refs(self, values: dict[str, Any], project_id: int | None) -> None:
        for field, ref in self.refs.items():
            value = values.get(field)
            if value is None:
                continue
            target = db.session.get(ref.model, value)
            hidden = target is None or (
                ref.same_project and project_id is not None and target.project_id != project_id
            )
            if hidden:
                raise FieldError(field, f"{ref.label} {value} not found", status=404)
            if ref.same and getattr(target, ref.same) != values.get(ref.same):
                raise FieldError(field, f"{ref.label} {value} is not in the same {ref.same[:-3]}")

    def check_unique(self, obj: Any) -> None:
        """Name clashes answer 409 naming the field, before the database has to refuse."""
        for constraint in self.model.__table__.constraints:
            if not isinstance(constraint, sa.UniqueConstraint):
                continue
            names = [c.name for c in constraint.columns]
            if "id" in names:
                continue
            values = {n: getattr(obj, n) for n in names}
            if any(v is None for v in values.values()):
                continue
            query = sa.select(self.model.id).filter_by(**values)
            if obj.id is not None:
                query = query.where(self.model.id != obj.id)
            if db.session.scalar(query.limit(1)) is not None:
                shown = ", ".join(f"{n}={values[n]!r}" for n in names if n != "project_id")
                raise FieldError(names[-1], f"already exists ({shown})", status=409)

    # ---- hooks for subclasses -----------------------------------------------------------
    def before_save(self, obj: Any, data: dict[str, Any], creating: bool) -> None:
        """Cross-field and cross-row checks; raise ApiError to refuse."""

    def after_create(self, obj: Any) -> None:
        """Rows that come with the object (e.g. the creator's membership)."""

    def before_delete(self, obj: Any) -> None:
        """Refuse deletes that would lose something (raise ApiError)."""

    # ---- list ---------------------------------------------------------------------------
    def _filter_value(self, name: str, raw: str) -> Any:
        column = getattr(self.model, name)
        ctype = column.type
        try:
            if isinstance(ctype, sa.Enum):
                if raw not in ctype.enums:
                    raise ValueError(f"must be one of {', '.join(ctype.enums)}")
                return next(m for m in ctype.enum_class if m.value == raw) if ctype.enum_class else raw
            if isinstance(ctype, sa.Boolean):
                if raw not in ("true", "false"):
                    raise ValueError("must be true or false")
                return raw == "true"
            if isinstance(ctype, sa.Integer):
                value = int(raw)
                bits, low, high = (64, INT64_MIN, INT64_MAX) if isinstance(ctype, sa.BigInteger) else (
                    32, INT32_MIN, INT32_MAX)
                if not low <= value <= high:
                    raise ValueError(f"must be an integer that fits in {bits} bits")
                return value
        except ValueError as exc:
            reason = str(exc) if "must be" in str(exc) else "must be an integer"
            raise FieldError(name, reason) from exc
        return raw

    def _page_args(self) -> tuple[int, int, str]:
        page = bounded_int(request.args, "page", 0, 0, 10**9)
        page_size = bounded_int(request.args, "page_size", 25, 1, MAX_PAGE_SIZE)
        order = request.args.get("order", "-id")
        if order.lstrip("-") not in self.orders:
            raise FieldError("order", f"must be one of {', '.join(self.orders)} (prefix - for descending)")
        return page, page_size, order

    # (API class, filter names, order, scoped) -> (the page, the count alone); shapes are few (filters x orders)
    _list_statements: ClassVar[dict[tuple[Any, ...], tuple[sa.Select, sa.Select]]] = {}

    def list_statements(self, names: tuple[str, ...], order: str, scoped: bool) -> tuple[sa.Select, sa.Select]:
        """The statements of a list of this shape, every value a bind parameter (list_params): built once
        per shape and process, so a request neither builds nor compiles SQL (raw_select compiles each once;
        SQLAlchemy's compiled cache keys on the statement, whose cache key it memoizes).

        A list whose present() reads only columns selects plain rows with the count (counts.count_of) on
        every row of the page as an uncorrelated scalar subquery, which the database evaluates once: one
        round trip and one snapshot instead of two; only a page past the end (no row to carry it) asks
        for the count alone."""
        key = (type(self), names, order, scoped)
        found = self._list_statements.get(key)
        if found is not None:
            return found
        conditions = [self.scope_condition()] if scoped else []
        conditions += [table_column(self.model, name) == sa.bindparam(f"f_{name}") for name in names]
        count = count_of(self.model, names, scoped, conditions)
        column = table_column(self.model, order.lstrip("-"))
        ordering = [column.desc() if order.startswith("-") else column.asc()]
        if column.key != "id":
            ordering.append(table_column(self.model, "id").desc())  # stable pages
        if self.presents_columns():
            cols = self.columns or column_names(self.model)
            page: sa.Select = sa.select(*table_columns(self.model, cols), count.label("_total"))
        else:
            page = sa.select(self.model)
        found = (page.where(*conditions).order_by(*ordering)
                 .limit(sa.bindparam("page_limit")).offset(sa.bindparam("page_offset")), sa.select(count))
        self._list_statements[key] = found
        return found

    @route("/", summary="List, newest first; filter with ?field=value, page with ?page=&page_size=",
           response="page")
    def get_list(self):
        page, page_size, order = self._page_args()
        filters = self.filters
        if self.scope == "project" and self.model is not Project and "project_id" not in filters:
            filters = ("project_id", *filters)  # every project-owned list filters by project
        given = {}
        for name, raw in request.args.items():
            if name in ("page", "page_size", "order"):
                continue
            if name not in filters:
                allowed = ", ".join(("page", "page_size", "order", *filters))
                raise FieldError(name, f"unknown query parameter; allowed: {allowed}")
            given[name] = self._filter_value(name, raw)
        projects = self.scope_projects()
        page_query, count_query = self.list_statements(tuple(sorted(given)), order, projects is not None)
        params = {"page_limit": page_size, "page_offset": page * page_size, "scope_projects": projects,
                  **{f"f_{name}": value for name, value in given.items()},
                  **count_params(self.model, given, projects)}
        if self.presents_columns():
            # Plain rows encoded straight to JSON, not ORM entities through present(): the same answer
            # (tests/api/test_lists.py) at a fraction of the cost (no identity map, no instance state), on
            # the DBAPI cursor with the statement compiled once (raw_select: SQLAlchemy's execution path
            # was a quarter of the request).
            connection = db.session.connection()
            rows = fetch_all(connection, page_query, params)
            total = rows[0][-1] if rows else fetch_all(connection, count_query, params)[0][0]
            items = encode_rows(self.model, self.columns or column_names(self.model), rows)
            return json_page(total, page, page_size, items)
        # present() reads more than columns: ORM entities, after the count (one statement each).
        total = db.session.scalar(count_query, params)
        return jsonify(count=total, page=page, page_size=page_size,
                       items=[self.present(obj) for obj in db.session.scalars(page_query, params)])

    @route("/<int:pk>", summary="Get one by id", response="model")
    def get(self, pk: int):
        return jsonify(self.present(self.load(pk)))

    @route("/", methods=("POST",), permission="write", body="schema", status=201, summary="Create",
           response="model")
    def post(self):
        return jsonify(self.present(self.create(self.body_schema().load(json_body())))), 201

    def create(self, data: dict[str, Any]) -> Any:
        """A new object from checked data (the create route's, or another route's: an upload)."""
        project_id = self.resolve_parent(data)
        if project_id is not None and self.model is not Project:
            data["project_id"] = project_id
        self.check_refs(data, project_id)
        obj = self.model(**data)
        self.before_save(obj, data, creating=True)
        self.check_unique(obj)
        db.session.add(obj)
        db.session.flush()
        self.after_create(obj)
        return obj

    @route("/<int:pk>", methods=("PUT",), permission="write", body="schema-partial",
           summary="Update the fields given", response="model")
    def put(self, pk: int):
        obj = self.load(pk, self.write_role)
        data = self.body_schema(partial=True).load(json_body())
        frozen = [f for f in data if f in self.immutable or (self.parent and f == self.parent[0])]
        if frozen:
            raise FieldError(frozen[0], "cannot be changed after creation")
        merged = {name: getattr(obj, name) for name in column_names(self.model)} | data
        self.check_refs(merged, self.project_of(obj) if self.scope == "project" else None)
        for key, value in data.items():
            setattr(obj, key, value)
        self.before_save(obj, data, creating=False)
        self.check_unique(obj)
        db.session.flush()
        return jsonify(self.present(obj))

    @route("/<int:pk>", methods=("DELETE",), permission="write", summary="Delete", response=MESSAGE)
    def delete(self, pk: int):
        obj = self.load(pk, self.write_role)
        self.before_delete(obj)
        db.session.delete(obj)
        db.session.flush()
        return jsonify(message=f"{self.label} {pk} deleted")

    # ---- OpenAPI ------------------------------------------------------------------------------
    def add_api_spec(self, api_spec: Any) -> None:
        add_components(api_spec)
        routes = []
        for attr_name in dir(self):
            attr = getattr(self, attr_name)
            spec = getattr(attr, "_spec", None)
            if spec is None or attr_name in self.exclude_route_methods:
                continue
            if self.include_route_methods is not None and attr_name not in self.include_route_methods:
                continue
            routes.append((attr, spec))
        answers_objects = any(spec.get("response") in ("model", "page") for _, spec in routes)
        if answers_objects and output_name(self.model) not in api_spec.components.schemas:
            api_spec.components.schema(output_name(self.model), component=model_schema(
                self.model, self.columns, self.output_fields, self.schema, api_spec))
        for attr, spec in routes:
            body = self.schema if spec["body"] in ("schema", "schema-partial") else spec["body"]
            body_name = None
            if body is not None:
                body_name = body.__name__.removesuffix("Schema")
                if body_name not in api_spec.components.schemas:
                    api_spec.components.schema(body_name, schema=body)
            for url, methods in attr._urls:
                path = self.path_helper(path=url)
                for method in methods:
                    operation = self._operation(path, spec, body_name, self._response_schema(spec, api_spec))
                    api_spec.path(path=path, operations={method.lower(): operation})

    def _response_schema(self, spec: dict[str, Any], api_spec: Any) -> dict[str, Any] | None:
        response = spec.get("response")
        if response is None or isinstance(response, dict):
            return response
        if response in ("model", "page"):
            item = schema_ref(output_name(self.model))
            return item if response == "model" else page_of(item)
        name = response.__name__.removesuffix("Schema")  # a marshmallow schema, like request bodies
        if name not in api_spec.components.schemas:
            api_spec.components.schema(name, schema=response)
        return schema_ref(name)

    def _operation(self, path: str, spec: dict[str, Any], body_name: str | None,
                   response: dict[str, Any] | None = None) -> dict[str, Any]:
        params = [
            {"in": "path", "name": name, "required": True, "schema": {"type": "integer"}}
            for name in re.findall(r"{(\w+)}", path)
        ]
        params += [{"in": "query", "name": n, "schema": {"type": "string"}, "description": d}
                   for n, d in spec["query"].items()]
        ok: dict[str, Any] = {"description": "OK"}
        if response is not None:
            # media_type may list several, comma-separated (a file answers as its kind).
            ok["content"] = {media.strip(): {"schema": response}
                             for media in spec.get("media_type", "application/json").split(",")}
        operation: dict[str, Any] = {
            "summary": spec["summary"].strip().splitlines()[0],
            "tags": [self.__class__.__name__.removesuffix("Api")],
            "parameters": params,
            "security": [{"jwt": []}],
            "responses": {str(spec["status"]): ok, **spec.get("answers", {}), **error_responses(
                spec["permission"] == "write", spec.get("media_type") == "text/event-stream", body_name is not None)},
            "x-permission": f"can_{spec['permission']}",
            "x-scope": self.scope,
            "x-resource": self.resource_name,
        }
        if body_name:
            operation["requestBody"] = {
                "required": True,
                "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{body_name}"}}},
            }
        return operation
