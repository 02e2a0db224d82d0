"""Optuna, driven through ask/tell, with the platform's rows as the source of truth.

Each look rebuilds an in-memory study from the stored trials (parameters, state, values, intermediate
values and the notes the sampler and pruner keep on them, ``system_attrs``) and puts back the sampler's
random state saved after the previous ask or tell (``snapshot``). So the platform asks exactly what one
long-lived Optuna study would ask (benchmarks/hpo.py compares the two), and a worker restart continues
from the stored trials: nothing lives only in a process.

Optuna is the maintained library every comparable platform anchors on (Katib and NNI wrap it or its
algorithms): TPE, CMA-ES, random, grid, quasi-random (QMC), NSGA-II, and the median, successive-halving
and Hyperband pruners, all behind one ask/tell interface.
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import optuna
from optuna.distributions import BaseDistribution, CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.samplers._lazy_random_state import LazyRandomState
from optuna.storages import InMemoryStorage
from optuna.trial import FrozenTrial
from optuna.trial import TrialState as OptunaState

from .space import grid_values

optuna.logging.set_verbosity(optuna.logging.WARNING)

# The platform's trial states as Optuna knows them; a trial the platform cancelled was never told
# (a cancel ends the experiment), it is kept as failed so that numbers stay those of the rows.
TO_OPTUNA = {"running": OptunaState.RUNNING, "complete": OptunaState.COMPLETE, "pruned": OptunaState.PRUNED,
             "failed": OptunaState.FAIL, "cancelled": OptunaState.FAIL}
BIG = 2**53  # larger integers (PCG64 states) are kept as text: JSON numbers hold this exactly


@dataclass
class StoredTrial:
    """A trial as the rows keep it."""

    number: int
    parameters: dict[str, Any]
    state: str = "running"
    values: list[float] | None = None
    intermediate: list[list[float]] = field(default_factory=list)
    system_attrs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Settings:
    """What an experiment's study is made of (the experiment row's columns)."""

    name: str
    search_space: list[dict[str, Any]]
    objectives: list[dict[str, Any]]
    algorithm: str = "tpe"
    seed: int | None = None
    early_stopping: dict[str, Any] | None = None


def distributions(space: Sequence[dict[str, Any]]) -> dict[str, BaseDistribution]:
    out: dict[str, BaseDistribution] = {}
    for spec in space:
        if spec["type"] == "categorical":
            out[spec["name"]] = CategoricalDistribution(spec["choices"])
        elif spec["type"] == "int":
            out[spec["name"]] = IntDistribution(int(spec["low"]), int(spec["high"]), log=bool(spec.get("log")),
                                                step=int(spec.get("step") or 1))
        else:
            out[spec["name"]] = FloatDistribution(spec["low"], spec["high"], log=bool(spec.get("log")),
                                                  step=spec.get("step"))
    return out


def make_sampler(settings: Settings) -> optuna.samplers.BaseSampler:
    seed, algorithm = settings.seed, settings.algorithm
    if algorithm == "tpe":
        return optuna.samplers.TPESampler(seed=seed)
    if algorithm == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    if algorithm == "cmaes":
        return optuna.samplers.CmaEsSampler(seed=seed, warn_independent_sampling=False)
    if algorithm == "qmc":
        with warnings.catch_warnings():  # experimental since Optuna 3.0; its interface is what we use
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            return optuna.samplers.QMCSampler(seed=seed, warn_independent_sampling=False)
    if algorithm == "nsga2":
        return optuna.samplers.NSGAIISampler(seed=seed)
    if algorithm == "grid":
        grid = {s["name"]: grid_values(s, s["name"]) for s in settings.search_space}
        return optuna.samplers.GridSampler(grid, seed=seed)
    raise ValueError(f"unknown algorithm {algorithm!r}")  # space.check refused it before it was stored


def make_pruner(early_stopping: dict[str, Any] | None) -> optuna.pruners.BasePruner:
    if not early_stopping:
        return optuna.pruners.NopPruner()
    kind = early_stopping["kind"]
    if kind == "median":
        return optuna.pruners.MedianPruner(n_startup_trials=early_stopping.get("startup_trials", 3),
                                           n_warmup_steps=early_stopping.get("warmup_steps", 0))
    if kind == "successive_halving":
        return optuna.pruners.SuccessiveHalvingPruner(min_resource=early_stopping.get("min_resource", 1),
                                                      reduction_factor=early_stopping.get("reduction_factor", 3))
    if kind == "hyperband":
        return optuna.pruners.HyperbandPruner(min_resource=early_stopping.get("min_resource", 1),
                                              max_resource=early_stopping.get("max_resource", "auto"),
                                              reduction_factor=early_stopping.get("reduction_factor", 3))
    raise ValueError(f"unknown early stopping {kind!r}")


class Study:
    """One look's study: rebuilt from the rows, used for a few asks, tells and prune checks, then dropped."""

    def __init__(self, settings: Settings, trials: Sequence[StoredTrial], snapshot: dict[str, Any] | None):
        self.dists = distributions(settings.search_space)
        self.study = optuna.create_study(
            storage=InMemoryStorage(), sampler=make_sampler(settings), pruner=make_pruner(settings.early_stopping),
            study_name=settings.name, directions=[o["direction"] for o in settings.objectives])
        # As inside Study.optimize: a grid sampler whose points are all taken calls study.stop(), which
        # outside that loop raises (and loses the tell); the driver's budget stops at the grid's size.
        self.study._thread_local.in_optimize_loop = True
        for stored in sorted(trials, key=lambda t: t.number):
            self.study.add_trial(self._frozen(stored))
        if snapshot:
            _restore(self.study, snapshot)

    def _frozen(self, stored: StoredTrial) -> FrozenTrial:
        state = TO_OPTUNA[stored.state]
        values = stored.values if state == OptunaState.COMPLETE else None
        if state == OptunaState.PRUNED and stored.values:
            values = stored.values
        return optuna.trial.create_trial(
            state=state, params=stored.parameters,
            distributions={k: self.dists[k] for k in stored.parameters if k in self.dists},
            values=values, intermediate_values={int(s): v for s, v in stored.intermediate},
            system_attrs=stored.system_attrs)

    def _trial(self, number: int) -> FrozenTrial:
        trial = self.study.get_trials(deepcopy=False)[number]
        assert trial.number == number  # added in number order, from 0
        return trial

    def ask(self) -> StoredTrial:
        """The next trial's parameters (and the notes the sampler put on it)."""
        trial = self.study.ask(self.dists)
        params = {name: trial.params[name] for name in self.dists}  # the search space's order
        return StoredTrial(trial.number, params, system_attrs=dict(self._trial(trial.number).system_attrs))

    def tell(self, number: int, state: str, values: Sequence[float] | None = None) -> StoredTrial:
        """Finish a running trial (complete with its values, pruned, failed); returns it as Optuna keeps it."""
        self.study.tell(number, values=list(values) if values is not None else None, state=TO_OPTUNA[state],
                        skip_if_finished=False)
        return self.stored(number)

    def should_prune(self, number: int) -> bool:
        """Would the pruner stop this running trial at its last reported step? (Optuna's Trial.should_prune)"""
        trial = self._trial(number)
        if trial.last_step is None or len(self.study.directions) > 1:
            return False
        return bool(self.study.pruner.prune(self.study, trial))

    def stored(self, number: int) -> StoredTrial:
        trial = self._trial(number)
        state = next(k for k, v in TO_OPTUNA.items() if v == trial.state)
        return StoredTrial(number, dict(trial.params), state, list(trial.values) if trial.values else None,
                           [[step, value] for step, value in sorted(trial.intermediate_values.items())],
                           dict(trial.system_attrs))

    def snapshot(self) -> dict[str, Any]:
        """The sampler's random states and the study's notes, to be stored with the rows."""
        rngs = {path: _to_json(rng.get_state()) for path, rng in _random_states(self.study.sampler)}
        return {"rng": rngs, "study_attrs": dict(self.study._storage.get_study_system_attrs(self.study._study_id))}


def _restore(study: optuna.Study, snapshot: dict[str, Any]) -> None:
    states = snapshot.get("rng", {})
    for path, rng in _random_states(study.sampler):
        if path in states:
            rng.set_state(_from_json(states[path]))
    for key, value in snapshot.get("study_attrs", {}).items():
        study._storage.set_study_system_attr(study._study_id, key, value)


def _random_states(obj: Any, path: str = "", depth: int = 0) -> Iterator[tuple[str, np.random.RandomState]]:
    """Every numpy RandomState a sampler (and the samplers inside it) draws from, by attribute path.
    The samplers' own objects only (optuna's classes): nothing else is walked."""
    if depth > 4 or not type(obj).__module__.startswith("optuna."):
        return
    for name, value in sorted(vars(obj).items()):
        here = f"{path}.{name}" if path else name
        if isinstance(value, LazyRandomState):
            yield here, value.rng
        elif isinstance(value, np.random.RandomState):
            yield here, value
        elif hasattr(value, "__dict__"):
            yield from _random_states(value, here, depth + 1)


def _to_json(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return {"$array": value.dtype.str, "items": value.tolist()}
    if isinstance(value, tuple | list):
        return [_to_json(v) for v in value]
    if isinstance(value, dict):
        return {k: _to_json(v) for k, v in value.items()}
    if isinstance(value, bool | str) or value is None:
        return value
    if isinstance(value, int | np.integer) and abs(int(value)) >= BIG:
        return {"$int": str(int(value))}
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        return float(value) if math.isfinite(value) else {"$float": repr(float(value))}
    return value


def _from_json(value: Any) -> Any:
    if isinstance(value, dict) and "$array" in value:
        return np.array(value["items"], dtype=value["$array"])
    if isinstance(value, dict) and "$int" in value:
        return int(value["$int"])
    if isinstance(value, dict) and "$float" in value:
        return float(value["$float"])
    if isinstance(value, list):
        return tuple(_from_json(v) for v in value)
    if isinstance(value, dict):
        return {k: _from_json(v) for k, v in value.items()}
    return value
