"""The Optuna adapter (myapp/experiments/study.py): a study rebuilt from stored trials and the saved random
state asks exactly what one long-lived Optuna study asks, for every algorithm; pruning and tells keep what
Optuna keeps. Pure: no database."""
from __future__ import annotations

import json
import math

import optuna
import pytest

from myapp.experiments.study import Settings, StoredTrial, Study, distributions, make_sampler

SPACE = [{"name": "x", "type": "float", "low": -5.0, "high": 10.0},
         {"name": "lr", "type": "float", "low": 1e-4, "high": 1.0, "log": True},
         {"name": "k", "type": "int", "low": 1, "high": 8},
         {"name": "opt", "type": "categorical", "choices": ["sgd", "adam"]}]
MIN = {"metric": "loss", "direction": "minimize"}


def objective(params: dict) -> float:
    return ((params.get("x", 0) - 2) ** 2 + math.log10(params.get("lr", 1)) ** 2 + 0.1 * params["k"]
            + (params.get("opt") == "sgd"))


def values_of(settings: Settings, value: float) -> list[float]:
    return [value, -value][:len(settings.objectives)]


def through_rows(settings: Settings, trials: int) -> list[dict]:
    """As the platform does: every ask and tell on a study rebuilt from JSON rows."""
    rows, snapshot, asked = [], None, []
    for _ in range(trials):
        study = Study(settings, rows, snapshot)
        trial = study.ask()
        rows.append(trial)
        snapshot = json.loads(json.dumps(study.snapshot()))  # through the JSON column
        rows = [StoredTrial(**row) for row in json.loads(json.dumps([vars(r) for r in rows]))]  # the JSON columns
        study = Study(settings, rows, snapshot)
        rows[-1] = study.tell(trial.number, "complete", values_of(settings, objective(trial.parameters)))
        snapshot = json.loads(json.dumps(study.snapshot()))
        asked.append(trial.parameters)
    return asked


def alone(settings: Settings, trials: int) -> list[dict]:
    study = optuna.create_study(sampler=make_sampler(settings),
                                directions=[o["direction"] for o in settings.objectives])
    asked = []
    for _ in range(trials):
        trial = study.ask(distributions(settings.search_space))
        study.tell(trial, values_of(settings, objective(trial.params)))
        asked.append(trial.params)
    return asked


@pytest.mark.parametrize("algorithm", ["tpe", "random", "cmaes", "qmc", "nsga2"])
def test_rebuilt_from_rows_it_asks_what_optuna_alone_asks(algorithm):
    objectives = [MIN, {"metric": "acc", "direction": "maximize"}] if algorithm == "nsga2" else [MIN]
    settings = Settings("e", SPACE, objectives, algorithm, seed=3)
    count = 13 if algorithm == "tpe" else 6  # past TPE's 10 random start-up trials (CMA-ES: 1)
    assert through_rows(settings, count) == alone(settings, count)


def test_grid_search_tries_each_point_once():
    space = [{"name": "k", "type": "int", "low": 1, "high": 3},
             {"name": "c", "type": "categorical", "choices": ["a", "b"]}]
    asked = through_rows(Settings("e", space, [MIN], "grid", seed=1), 6)
    assert sorted((p["k"], p["c"]) for p in asked) == [(k, c) for k in (1, 2, 3) for c in ("a", "b")]


def test_a_different_seed_asks_differently():
    one, two = (through_rows(Settings("e", SPACE, [MIN], "random", seed), 3) for seed in (1, 2))
    assert one != two


def test_median_pruning_stops_a_trial_worse_than_the_median_at_its_step():
    settings = Settings("e", SPACE[:1], [MIN], "random", 0, {"kind": "median", "startup_trials": 2})
    rows = []
    study = Study(settings, rows, None)
    for number, curve in enumerate(([3.0, 2.0, 1.0], [3.0, 2.5, 2.0])):
        rows.append(study.ask())
        rows[-1].intermediate = [[s, v] for s, v in enumerate(curve)]
        study = Study(settings, rows, study.snapshot())
        rows[number] = study.tell(number, "complete", [curve[-1]])
    good, bad = study.ask(), None
    good.intermediate = [[0, 1.0], [1, 0.5]]
    rows.append(good)
    bad = Study(settings, rows, study.snapshot()).ask()
    bad.intermediate = [[0, 9.0], [1, 8.0]]
    rows.append(bad)
    study = Study(settings, rows, None)
    assert not study.should_prune(good.number) and study.should_prune(bad.number)
    told = study.tell(bad.number, "pruned")
    assert told.state == "pruned" and told.values == [8.0]  # Optuna's: a pruned trial's value is its last one


def test_several_objectives_are_never_pruned():
    settings = Settings("e", SPACE[:1], [MIN, {"metric": "acc", "direction": "maximize"}], "nsga2", 0)
    trial = Study(settings, [], None).ask()
    trial.intermediate = [[0, 100.0]]
    assert not Study(settings, [trial], None).should_prune(trial.number)


def test_hyperband_keeps_its_bracket_notes_on_the_trial():
    settings = Settings("e", SPACE[:1], [MIN], "random", 0, {"kind": "hyperband", "min_resource": 1,
                                                            "max_resource": 9})
    rows = []
    for number in range(4):
        study = Study(settings, rows, None)
        rows.append(study.ask())
        rows[-1].intermediate = [[s, 10.0 - s + number] for s in range(9)]
        study = Study(settings, rows, None)
        study.should_prune(number)
        rows[number] = study.stored(number)
    assert any(key.startswith("completed_rung") for row in rows for key in row.system_attrs)
