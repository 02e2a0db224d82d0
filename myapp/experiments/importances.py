"""Which parameters mattered: Optuna's parameter importances (fANOVA) over an experiment's study, rebuilt
from its stored trials as every look rebuilds it (study.py). Only complete trials count; with fewer than
MIN_COMPLETE of them, or when every complete trial scored the same, there is nothing to compare and the
answer says why instead."""
from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..models import Experiment
from . import driver

if TYPE_CHECKING:
    from .study import Settings, StoredTrial

MIN_COMPLETE = 2
SEED = 0  # fANOVA's forest is random: a fixed seed answers the same for the same trials


def of_experiment(experiment: Experiment) -> dict[str, Any]:
    """The experiment's importances from its stored trials (Optuna is loaded only when there is enough to
    compare: the web process answers "too few" without it)."""
    rows = driver.trials_of(experiment)
    complete = sum(1 for t in rows if t.state.value == "complete" and t.values)
    if complete < MIN_COMPLETE:
        return _too_few(complete)
    return param_importances(driver.settings_of(experiment), [driver.stored(t) for t in rows])


def _too_few(complete: int) -> dict[str, Any]:
    return {"importances": [], "complete": complete,
            "reason": f"importances need at least {MIN_COMPLETE} complete trials; {complete} so far"}


def param_importances(settings: Settings, trials: Sequence[StoredTrial]) -> dict[str, Any]:
    """{"importances": [{"name", "importance"}] largest first (summing to 1), "complete": n, "reason"}:
    the importances of the first objective's parameters, or none and the reason."""
    complete = sum(1 for t in trials if t.state == "complete" and t.values)
    if complete < MIN_COMPLETE:
        return _too_few(complete)
    answer: dict[str, Any] = {"importances": [], "complete": complete, "reason": None}
    import optuna
    from optuna.importance import FanovaImportanceEvaluator, get_param_importances

    from .study import Study

    study = Study(settings, trials, None).study
    try:
        with warnings.catch_warnings():  # multi-objective target: Optuna warns that it is given
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            found = get_param_importances(study, evaluator=FanovaImportanceEvaluator(seed=SEED),
                                          target=lambda t: t.values[0], normalize=True)
    except RuntimeError as error:  # fANOVA: "zero total variance in all trees"
        if "variance" not in str(error):
            raise
        answer["reason"] = "every complete trial has the same objective value: no parameter made a difference"
        return answer
    answer["importances"] = [{"name": name, "importance": float(value)} for name, value in found.items()]
    return answer
