"""`myapp init`'s example search: digits-search over the demo pipeline's two parameters, stored (not
started), and left as it is when init runs again."""
from __future__ import annotations

from tests.support import unique


def test_the_demo_experiment_searches_lr_and_hidden_units(app, catalog):
    from myapp.extensions import db
    from myapp.models import Project
    from myapp.setup_data import ensure_demo_experiment, ensure_demo_pipeline

    with app.app_context():
        project = Project(name=unique("demo"), namespace=unique("demo"))
        db.session.add(project)
        db.session.commit()
        pipeline = ensure_demo_pipeline(project)
        assert pipeline.parameters == {"lr": 0.05, "hidden": 128, "epoch_seconds": 0}
        experiment = ensure_demo_experiment(pipeline)
        assert (experiment.name, experiment.state.value, experiment.max_trials, experiment.parallel_trials) == (
            "digits-search", "created", 12, 2)
        assert [p["name"] for p in experiment.search_space] == ["lr", "hidden"]
        assert experiment.objectives == [{"metric": "accuracy", "direction": "maximize"}]
        assert experiment.early_stopping["kind"] == "median"
        assert ensure_demo_experiment(ensure_demo_pipeline(project)).id == experiment.id
