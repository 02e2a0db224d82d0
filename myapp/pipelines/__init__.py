"""Pipelines: DAG rules, macros, and the run controller that drives runs on Celery."""
