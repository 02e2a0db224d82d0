"""gunicorn's logger (`logger_class` in myapp/web/gunicorn_conf.py) with the access line of gunicorn's default
format built directly.

gunicorn's own access() builds a dict of every request header, response header and environ variable, then
wraps and escapes all of it, for each line: about 80 us per request, 4% of a list request's CPU in the
web process. The line is the same, byte for byte (tests/web/test_gunicorn_conf.py compares them); another
access_log_format goes through gunicorn's code.
"""
from __future__ import annotations

import traceback
from typing import Any

from gunicorn.config import AccessLogFormat
from gunicorn.glogging import Logger

DEFAULT_FORMAT = AccessLogFormat.default


def _safe(value: str) -> str:
    return value.replace('"', '\\"')  # as gunicorn's SafeAtoms


class AccessLogger(Logger):
    def access(self, resp: Any, req: Any, environ: dict[str, Any], request_time: Any) -> None:
        if not self.access_log_enabled:
            return
        if self.cfg.access_log_format != DEFAULT_FORMAT:
            super().access(resp, req, environ, request_time)
            return
        status = resp.status
        if isinstance(status, str):
            status = status.split(None, 1)[0]
        sent = getattr(resp, "sent", None)
        request_line = f"{environ['REQUEST_METHOD']} {environ['RAW_URI']} {environ['SERVER_PROTOCOL']}"
        line = '%s - %s %s "%s" %s %s "%s" "%s"' % (  # noqa: UP031 - gunicorn's format, %s for every atom
            _safe(environ.get("REMOTE_ADDR", "-")), _safe(self._get_user(environ) or "-"), self.now(),
            _safe(request_line), _safe(status) if isinstance(status, str) else status,
            (sent is not None and str(sent)) or "-", _safe(environ.get("HTTP_REFERER", "-")),
            _safe(environ.get("HTTP_USER_AGENT", "-")))
        try:
            self.access_log.info(line)
        except Exception:
            self.error(traceback.format_exc())
