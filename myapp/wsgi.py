"""WSGI entry point for gunicorn: one FAB app per worker process."""
from .app import create_app

app = create_app()
