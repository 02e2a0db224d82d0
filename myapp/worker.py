"""Celery entry point: `celery -A myapp.worker:celery worker|beat`."""
from .app import create_app

app = create_app()
celery = app.extensions["celery"]
