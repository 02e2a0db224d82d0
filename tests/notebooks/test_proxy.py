"""What the notebook proxy forwards to Jupyter: never the platform's cookies nor the caller's credentials."""
from __future__ import annotations

from aiohttp.test_utils import make_mocked_request

from myapp.notebooks.proxy import Allowed, NotebookProxy


def test_forwarded_headers_carry_the_notebook_token_only():
    proxy = NotebookProxy("http://127.0.0.1:1", "key")
    request = make_mocked_request("GET", "/notebook/p/lab/api/kernels", headers={
        "Host": "127.0.0.1:8081", "Cookie": "session=platform; remember_token=r; _xsrf=j",
        "Authorization": "Bearer users-jwt", "Connection": "keep-alive", "Origin": "http://127.0.0.1:8081"})
    headers = proxy._headers(request, Allowed("http://127.0.0.1:9", "jupyter-token", 0))
    assert headers["Authorization"] == "token jupyter-token"
    assert headers["Cookie"] == "_xsrf=j"  # Jupyter's own cookie passes, the platform's do not
    assert headers["Host"] == "127.0.0.1:8081" and headers["Origin"] == "http://127.0.0.1:8081"
    assert "Connection" not in headers and "users-jwt" not in str(headers)
