"""Request bodies over the limit are refused whole, however they arrive.

Werkzeug bounds a body without ``Content-Length`` (chunked: gunicorn terminates the stream) by stopping at
``max_content_length`` bytes: a longer body is read as its first ``max_content_length`` bytes, and handed on
(to a JSON parser, to a model through ``/serving/``) as if that were all of it. Here the stream reads one
byte past the limit when it gets there: a body of exactly the limit ends, a longer one is 413
(``RequestEntityTooLarge``) before whoever reads it has used any of it.
"""
from __future__ import annotations

from typing import IO

from flask import Request
from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.utils import cached_property
from werkzeug.wsgi import LimitedStream


class WholeOrRefused(LimitedStream):
    """A body read up to ``limit`` bytes; one byte more is a 413, never a shorter body."""

    def __init__(self, stream: IO[bytes], limit: int):
        super().__init__(stream, limit, is_max=True)

    def on_exhausted(self) -> None:
        if self._stream.read(1):
            raise RequestEntityTooLarge()

    def readall(self) -> bytes:
        data = super().readall()
        if self.is_exhausted:  # the loop stopped at the limit: is that the end of the body?
            self.on_exhausted()
        return data


class BoundedRequest(Request):
    """Flask's request, with a terminated stream (chunked) read whole or refused (413)."""

    @cached_property
    def stream(self) -> IO[bytes]:
        limit = self.max_content_length
        if (not self.shallow and limit is not None and self.content_length is None
                and "wsgi.input_terminated" in self.environ):
            return WholeOrRefused(self.environ["wsgi.input"], limit)  # type: ignore[return-value]
        return super().stream
