"""Image builds: Kaniko on Kubernetes, Python environments locally. See docs/images.md.

``logs``, ``dockerfile`` and ``usage`` are what the web reads and renders from plain data; ``builder``
(a local environment) and ``kaniko`` (a Job on a cluster) run in the worker, driven by ``drive``.
"""
