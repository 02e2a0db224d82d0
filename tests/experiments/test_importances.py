"""Parameter importances: Optuna's fANOVA over the study rebuilt from the stored trials, the parameter that
drives the objective ranked first; too few complete trials, or none that differ, say why instead."""
from __future__ import annotations

import random

from tests.experiments.support import body, pipeline_with_parameters
from tests.world import created

SPACE = [{"name": "lr", "type": "float", "low": 0.001, "high": 1.0, "log": True},
         {"name": "epochs", "type": "int", "low": 1, "high": 5}]


def settings(objectives=None):
    from myapp.experiments.study import Settings

    return Settings("importances", SPACE, objectives or [{"metric": "accuracy", "direction": "maximize"}])


def trials(count: int, value=lambda lr, epochs: epochs + lr / 100, state="complete"):
    from myapp.experiments.study import StoredTrial

    rng = random.Random(7)
    out = []
    for number in range(count):
        params = {"lr": 10 ** rng.uniform(-3, 0), "epochs": rng.randint(1, 5)}
        out.append(StoredTrial(number, params, state, [value(**params)] if state == "complete" else None))
    return out


def test_the_parameter_that_drives_the_objective_ranks_first():
    from myapp.experiments.importances import param_importances
    from myapp.experiments.study import StoredTrial

    stored = [*trials(12), StoredTrial(12, {"lr": 0.5, "epochs": 2}, "pruned", None, [[1, 9.0]])]
    answer = param_importances(settings(), stored)
    assert answer["complete"] == 12 and answer["reason"] is None
    names = [i["name"] for i in answer["importances"]]
    assert names == ["epochs", "lr"] and answer["importances"][0]["importance"] > 0.9, answer
    assert abs(sum(i["importance"] for i in answer["importances"]) - 1) < 1e-9
    assert param_importances(settings(), stored) == answer  # seeded: the same trials, the same answer


def test_too_few_or_indistinct_trials_say_why():
    from myapp.experiments.importances import param_importances

    one = param_importances(settings(), trials(1) + trials(3, state="running"))
    assert one == {"importances": [], "complete": 1,
                   "reason": "importances need at least 2 complete trials; 1 so far"}
    flat = param_importances(settings(), trials(4, value=lambda lr, epochs: 0.5))
    assert flat["importances"] == [] and "same objective value" in flat["reason"]


def test_the_api_answers_members_only(app, user, make_user, catalog):
    from myapp.extensions import db
    from myapp.models import Trial, TrialState

    pipeline = pipeline_with_parameters(user, catalog)
    experiment = created(user.post("/api/v1/experiment/", json=body(pipeline["id"], start=False)))
    url = f"/api/v1/experiment/{experiment['id']}/importances"
    assert user.get(url).get_json() == {
        "importances": [], "complete": 0, "reason": "importances need at least 2 complete trials; 0 so far"}
    with app.app_context():
        for stored in trials(8):
            db.session.add(Trial(project_id=experiment["project_id"], experiment_id=experiment["id"],
                                 number=stored.number, parameters=stored.parameters, state=TrialState.COMPLETE,
                                 values=stored.values))
        db.session.commit()
    answer = user.get(url).get_json()
    assert answer["complete"] == 8 and answer["importances"][0]["name"] == "epochs", answer
    assert make_user().get(url).status_code == 404
