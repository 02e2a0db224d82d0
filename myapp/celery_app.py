"""Celery configured from the Flask app; every task runs inside an app context."""
from __future__ import annotations

from typing import Any

from celery import Celery, Task
from flask import Flask

from . import broker  # noqa: F401 - registers the embedded transport (myappfs://)


def make_celery(app: Flask, settings: dict[str, Any] | None = None, default: bool = True) -> Celery:
    """default: make it the process's default Celery app (what shared tasks' .delay use); tests
    that build extra apps on other brokers pass False so they do not take that place."""
    class AppContextTask(Task):
        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            with app.app_context():
                return self.run(*args, **kwargs)

    celery = Celery(app.import_name, task_cls=AppContextTask, set_as_current=default)
    celery.config_from_object(settings or app.config["CELERY"])
    celery.conf.include = ["myapp.tasks"]
    celery.conf.beat_schedule = {
        "heartbeat": {"task": "myapp.heartbeat", "schedule": 30.0},
        "tick": {"task": "myapp.tick", "schedule": float(app.config["MYAPP_TICK_SECONDS"])},
        # Notebooks: lost starts requested again, idle ones marked and culled (myapp/notebooks/activity.py).
        "notebook-tick": {"task": "myapp.notebook_tick", "schedule": max(5.0, float(app.config["MYAPP_TICK_SECONDS"]))},
    }
    celery.conf.beat_schedule_filename = f"{app.config['INSTANCE_PATH']}/celerybeat-schedule"
    if default:
        celery.set_default()
    return celery
