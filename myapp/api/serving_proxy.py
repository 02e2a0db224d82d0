"""The stable URL of an inference service, ``/serving/<project>/<service>/<path>``: any member of the
project (a person's token or session, or a run token of the project) reaches the service's router (on
Kubernetes its front Service), with the service's token added (docs/serving.md). Only the model's API is
reachable: the router's own control paths (``/_router/...``: its routes name the servers' addresses) are
not, however the path is spelled."""
from __future__ import annotations

from typing import Any
from urllib.parse import quote

import sqlalchemy as sa
from flask import current_app, request
from flask_appbuilder.api import BaseApi
from werkzeug.exceptions import RequestEntityTooLarge

from ..extensions import db
from ..models import InferenceService, Project, ProjectRole
from ..serving.router_client import RouterUnavailable, forward, router_token
from .errors import ApiError, NotFound
from .routing import route
from .scope import check_project

PASSED_HEADERS = ("Content-Type", "Accept")
CONTROL_PREFIX = "_router"  # the router's own paths (router.py), the platform's alone
PCHAR_SAFE = "!$&'()*+,;=:@-._~"  # what a path segment keeps unquoted (RFC 3986), so "v1/models/m:predict" passes


def upstream_path(rest: str) -> str | None:
    """The path sent upstream for ``rest`` (already percent-decoded by the server), each segment quoted
    again so the router sees exactly the segments checked here; None for a path that is not the model's:
    a dot or empty segment (which a client or urllib3 would resolve, e.g. ``%2e%2e/_router/config``),
    a backslash or control character, or a first segment naming the router's control paths."""
    segments = rest.split("/") if rest else []
    for segment in segments[:-1] + [s for s in segments[-1:] if s]:  # a trailing slash is the model's
        if segment in ("", ".", "..") or "\\" in segment or any(ord(c) < 32 or ord(c) == 127 for c in segment):
            return None
    if segments and segments[0].lower().startswith(CONTROL_PREFIX):
        return None
    return "/" + "/".join(quote(segment, safe=PCHAR_SAFE) for segment in segments)


class ServingProxyApi(BaseApi):
    """``/serving/<project>/<service>/<path>``: the service's router answers, with ``X-Model-Version``. Not
    in the OpenAPI spec (it is the model's API, not the platform's); tests/serving/test_api.py walks its
    permissions, tests/serving/test_proxy.py its paths and bodies."""

    route_base = "/serving"
    class_permission_name = "InferenceService"
    # The whole set InferenceServiceApi declares: with only its own (can_read), every permission sync would
    # try to drop can_write from the shared view.
    base_permissions = ["can_read", "can_write"]
    allow_browser_login = True
    csrf_exempt = True  # routing.check_csrf does it, for session callers only

    def add_api_spec(self, api_spec: Any) -> None:
        pass

    @route("/<project>/<service>/", methods=("GET", "POST"), permission="read")
    def root(self, project: str, service: str):
        return self._forward(project, service, "")

    @route("/<project>/<service>/<path:rest>", methods=("GET", "POST"), permission="read")
    def path(self, project: str, service: str, rest: str):
        return self._forward(project, service, rest)

    def _forward(self, project_name: str, service_name: str, rest: str):
        row = db.session.execute(sa.select(InferenceService.id, InferenceService.url, InferenceService.project_id)
                                 .join(Project, Project.id == InferenceService.project_id)
                                 .where(Project.name == project_name, InferenceService.name == service_name,
                                        InferenceService.deleting.is_(False))).first()
        missing = NotFound("inference service", f"{project_name}/{service_name}")
        if row is None:
            raise missing
        check_project(row.project_id, ProjectRole.VIEWER, missing)
        db.session.rollback()  # nothing to write: do not hold a transaction while the model answers
        path = upstream_path(rest)
        if path is None:
            raise ApiError(f"no such path of inference service {service_name}: /{rest}", status=404)
        if not row.url or not row.url.startswith("http://"):
            raise ApiError(f"inference service {service_name} is not answering yet", status=503)
        headers = {h: request.headers[h] for h in PASSED_HEADERS if h in request.headers}
        query = ("?" + request.query_string.decode("latin-1")) if request.query_string else ""
        try:
            body = request.get_data()  # all of it, or 413 before anything is sent (myapp/web/request_body.py)
        except RequestEntityTooLarge:
            raise ApiError(f"the request body is larger than {request.max_content_length} bytes", status=413) from None
        try:
            answer = forward(row.url, router_token(current_app.config["SECRET_KEY"], row.id), request.method,
                             f"{path}{query}", body, headers)
        except RouterUnavailable as exc:
            raise ApiError(str(exc), status=503) from None
        response = current_app.response_class(answer.data, status=answer.status,
                                              content_type=answer.headers.get("Content-Type", "application/json"))
        version = answer.headers.get("X-Model-Version")
        if version:
            response.headers["X-Model-Version"] = version
        return response
