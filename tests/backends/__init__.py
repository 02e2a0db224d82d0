"""Execution backend tests (Kubernetes against the API-server double, local processes)."""
