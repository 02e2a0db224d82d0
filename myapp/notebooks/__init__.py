"""Notebooks: JupyterLab per notebook, its lifecycle, the member-only proxy and idle culling.

`states.py` (the states and the intent the API records; no backend), `lifecycle.py` (what a worker
does: render, token Secret, submit, poll, stop, delete), `activity.py` (what a start waits for: its
image's build, its project's quota; idle culling from Jupyter's own activity), `proxy.py` (the asyncio
reverse proxy `myapp run` starts beside the web app). See docs/notebooks.md.
"""
