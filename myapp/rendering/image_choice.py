"""Which job templates let a task pick the image its containers run, and the template a pick makes.

A template that runs the user's code (a script, a training job) may run in another image: one of the
catalog's, or an environment its project built (docs/images.md). The platform's own steps run the code
their image carries (registering a model, serving it, building an image, a notebook's Jupyter), so
theirs stays. Pure: the caller has checked the image is one the project may use (myapp/pipelines/images.py).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import ArgumentError

# The kinds whose containers run the user's code (the training operators', Volcano's, a batch Job).
USER_CODE_KINDS = frozenset({"job", "pytorchjob", "tfjob", "xgboostjob", "mpijob", "volcanojob"})
# Built-in templates of those kinds that are the platform's own steps; the editor's copy of both sets is
# frontend/src/pages/editor/imageChoice.ts (tests/pipelines/test_task_image.py keeps them equal).
PLATFORM_STEPS = frozenset({"model-register", "deploy-service", "serve-model", "image-build", "notebook"})


def image_choice_refusal(template: Mapping[str, Any]) -> str | None:
    """Why a task of this template cannot choose its image, or None when it can."""
    if template.get("name") in PLATFORM_STEPS or template.get("kind") not in USER_CODE_KINDS:
        return f"the {template.get('name')} template runs the platform's own step in its own image"
    return None


def with_image(template: Mapping[str, Any], image: str | None) -> Mapping[str, Any]:
    """The template as a task choosing ``image`` renders it (every container of every replica runs it);
    the template itself when image is None. Raises ArgumentError("image") for a template that keeps its own."""
    if image is None:
        return template
    if (refusal := image_choice_refusal(template)) is not None:
        raise ArgumentError("image", refusal)
    return {**template, "image": image}
