"""What a trial of an experiment (myapp/experiments) runs of its pipeline: every task but the serving
steps (templates of category ``serving``: serve-model, deploy-service), with the edges between the rest.
A trial never deploys: the best trial's model is deployed on request. A pipeline's model-register step
still runs in each trial (its versions name the trial's run); the Experiments page registers the best
trial's model under another name on request."""
from __future__ import annotations

import sqlalchemy as sa

from ..extensions import db
from ..models import JobTemplate, Task

SERVING = "serving"


def without_serving(tasks: dict[int, Task], edges: list[tuple[int, int]]
                    ) -> tuple[dict[int, Task], list[tuple[int, int]]]:
    template_ids = {t.template_id for t in tasks.values()}
    serving = set(db.session.scalars(sa.select(JobTemplate.id).where(
        JobTemplate.id.in_(template_ids), JobTemplate.category == SERVING)))
    kept = {tid: task for tid, task in tasks.items() if task.template_id not in serving}
    return kept, [(up, down) for up, down in edges if up in kept and down in kept]
