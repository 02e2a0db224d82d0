"""The page a browser gets instead of a notebook (stopped, starting, not found, a used link, not signed in), from
the platform and from a notebook's origin alike: one autoescaped template in the product's look, never HTML
put together by hand. API calls keep their JSON answers (the callers decide which a request gets)."""
from __future__ import annotations

from pathlib import Path

import jinja2

_env = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent), autoescape=True,
                          undefined=jinja2.StrictUndefined)
# The page runs nothing and is framed by nobody; the link is all it offers (a starting notebook's page
# reloads itself with a meta refresh, which needs no script).
HEADERS = {"Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
           "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store"}
TITLES = {401: "Open this notebook from the platform", 403: "You cannot open this notebook",
          404: "No notebook here", 409: "This notebook is not running",
          502: "The notebook does not answer"}
# States on the way to running, in the Notebooks page's words: the page waits with them.
STARTING = {"pending": "starting", "pulling": "preparing image", "waiting": "waiting for resources"}
REFRESH_SECONDS = 3


def page(status: int, message: str, link: str | None, link_text: str, title: str | None = None,
         state: str | None = None, refresh: int | None = None) -> str:
    return _env.get_template("notice.html").render(title=title or TITLES.get(status, "Notebook"),
                                                   message=message, link=link or "", link_text=link_text,
                                                   state=state or "", refresh=refresh or 0)


def not_running(name: str, state: str, message: str, notebooks: str | None) -> str:
    """A notebook that exists and is yours but does not run: its state, and how it gets to run. A starting
    one's page reloads itself every few seconds, so it becomes the notebook once JupyterLab answers."""
    if state in STARTING:
        return page(409, f"{message}. This page opens the notebook as soon as it runs.", notebooks,
                    "Go to Notebooks", title=f"Notebook {name} is starting", state=STARTING[state],
                    refresh=REFRESH_SECONDS)
    return page(409, f"{message}. To start it, press Start on its row of the Notebooks page, then open it "
                     "again.", notebooks, "Start it on the Notebooks page", title=f"Notebook {name} is {state}",
                state=state)
