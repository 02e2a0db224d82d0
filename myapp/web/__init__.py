"""The web process besides the REST API: gunicorn's settings, worker and access log, the UI's routes, cookie
sessions, client addresses behind proxies, request bodies, and the notebook gate and ext-authz endpoints.
"""
