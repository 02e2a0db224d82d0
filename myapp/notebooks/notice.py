"""The page a browser gets instead of a notebook (stopped, not found, a used link, not signed in), from the
platform and from a notebook's origin alike: one autoescaped template, never HTML put together by hand."""
from __future__ import annotations

from pathlib import Path

import jinja2

_env = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent), autoescape=True,
                          undefined=jinja2.StrictUndefined)
# The page runs nothing and is framed by nobody; the link is all it offers.
HEADERS = {"Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
           "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store"}
TITLES = {401: "Open this notebook from the platform", 403: "You cannot open this notebook",
          404: "No notebook here", 409: "This notebook is not running",
          502: "The notebook does not answer"}


def page(status: int, message: str, link: str | None, link_text: str, title: str | None = None) -> str:
    return _env.get_template("notice.html").render(title=title or TITLES.get(status, "Notebook"),
                                                   message=message, link=link or "", link_text=link_text)
