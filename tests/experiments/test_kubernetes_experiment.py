"""An experiment on Kubernetes (the API-server double), driven in-process with the workers' driver looks and
run controller: each trial is an ordinary run whose distributed task renders as a PyTorchJob (no Katib); the
trial's metrics.jsonl is on the project's claim (no S3 store) and reaches the pruner while the job runs
(a reader pod per read: myapp/outputs/live.py); a pruned trial's PyTorchJob is deleted; the others complete
with their last values."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.experiments.test_local_experiment import new_experiment
from tests.pipelines.support import make_pipeline
from tests.support import wait_until

PYTORCH = ("kubeflow.org/v1", "PyTorchJob")
CURVES = {0: [1.0, 0.8, 0.6], 1: [5.0, 4.0], 2: [0.9, 0.7, 0.5]}  # trial 1 is worse from its first step


@pytest.fixture()
def claim(app, tmp_path, monkeypatch) -> Path:
    monkeypatch.delenv("MYAPP_OUTPUTS_S3_BUCKET", raising=False)  # the claim is where outputs are
    monkeypatch.setitem(app.config, "MYAPP_CLAIM_METRICS_SECONDS", 0.0)  # read at every look (10 s by default)
    path = tmp_path / "claim"
    path.mkdir()
    return path


def test_trials_run_as_pytorchjobs_and_are_pruned_from_the_claims_metrics(app, catalog, double, k8s_backend,
                                                                        claim, tmp_path, monkeypatch):
    from myapp.backends import registry
    from myapp.backends.archive import FileLogArchive
    from myapp.experiments import driver
    from myapp.extensions import db
    from myapp.models import Experiment, PipelineRun, Project, TaskRun, Trial
    from myapp.pipelines.controller import RunController

    monkeypatch.setattr(registry, "backend_for", lambda task: k8s_backend)
    run_id, _ = make_pipeline(app, catalog, {"train": {"template": "pytorch-ddp", "args": {"workers": 1}}}, [],
                              parameters={"x": 0.0})
    with app.app_context():
        first = db.session.get(PipelineRun, run_id)
        pipeline_id, namespace = first.pipeline_id, db.session.get(Project, first.project_id).namespace
    double.claims[namespace] = claim
    experiment_id = new_experiment(app, pipeline_id, algorithm="random", seed=2, max_trials=3, parallel_trials=1,
                                   early_stopping={"kind": "median", "startup_trials": 1, "warmup_steps": 0})
    controller = RunController(lambda task: k8s_backend, archive=FileLogArchive(tmp_path / "logs"))
    hooks = driver.Hooks(cancel_runs=lambda run_ids, reason: [controller.cancel(r, reason) for r in run_ids])

    def look() -> dict[int, tuple[str, list, int | None]]:
        """One look and one pass of the running trials' runs; the trials as stored (state, curve, run)."""
        with app.app_context():
            driver.look(experiment_id, hooks)
            rows = db.session.scalars(sa.select(Trial).filter_by(experiment_id=experiment_id)).all()
            for trial in rows:
                if trial.state.value == "running":
                    controller.reconcile(trial.pipeline_run_id)
            db.session.commit()
            return {t.number: (t.state.value, t.intermediate, t.pipeline_run_id) for t in rows}

    def job_of(number: int) -> tuple[int, dict, Path]:
        """Trial `number`'s run, what its attempt submitted (once it has) and its folder on the claim."""
        def submitted():
            run = look()[number][2]
            with app.app_context():
                attempt = db.session.scalars(sa.select(TaskRun).filter_by(pipeline_run_id=run)).first()
                return attempt is not None and attempt.backend_ref and (run, attempt.backend_ref,
                                                                        claim / attempt.output_dir)
        return wait_until(submitted, timeout=30, what=f"trial {number}'s job")

    def left(run: int, ref: dict) -> list[str]:
        """The objects of the attempt still in the cluster (the project's claims stay: every run's)."""
        with app.app_context():
            controller.reconcile(run)
            db.session.commit()
        return [f"{o['kind']}/{o['name']}" for o in ref["objects"] if o["kind"] != "PersistentVolumeClaim"
                and double.get(o["api_version"], o["kind"], o["namespace"], o["name"]) is not None]

    def running(name: str) -> None:
        double.set_status(*PYTORCH, namespace, name, {"conditions": [{"type": "Created", "status": "True"},
                                                                     {"type": "Running", "status": "True"}]})

    def report(folder: Path, values: list[float]) -> None:  # what rank 0 appends, epoch by epoch
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / "metrics.jsonl", "a") as fh:
            for step, value in enumerate(values):
                fh.write(json.dumps({"step": step, "name": "loss", "value": value}) + "\n")

    def trial(number: int) -> None:
        run, ref, folder = job_of(number)
        name = ref["primary"]["name"]
        assert double.get(*PYTORCH, namespace, name) is not None  # a PyTorchJob, as any run of the pipeline
        running(name)
        report(folder, CURVES[number])
        curve = [[s, v] for s, v in enumerate(CURVES[number])]
        if number == 1:  # read off the claim while the job runs, and pruned: its objects are deleted
            wait_until(lambda: look()[1][:2] == ("pruned", curve), timeout=30, what=lambda: f"trial 1 pruned: {look()}")
            assert double.get(*PYTORCH, namespace, name) is None
            assert any(d.kind == "PyTorchJob" and d.name == name for d in double.deletions)
            wait_until(lambda: not left(run, ref), timeout=30, what=lambda: f"{left(run, ref)} to be deleted")
            return
        wait_until(lambda: look()[number][:2] == ("running", curve), timeout=30,
                   what=lambda: f"trial {number}'s curve while it runs: {look()}")
        if number == 2:  # at the default pace, more looks read the claim no more
            for _ in range(3):
                look()
            assert len(live_reads(name)) == 1
        double.set_status(*PYTORCH, namespace, name, {"conditions": [{"type": "Succeeded", "status": "True"}]})
        wait_until(lambda: look()[number][0] == "complete", timeout=30, what=lambda: f"trial {number}: {look()}")

    def live_reads(job: str) -> list[dict]:
        with app.app_context():
            # other tests' attempts share the database: some hold a JSON null or no primary object
            ids = {str(a.id) for a in db.session.scalars(sa.select(TaskRun).where(TaskRun.backend_ref.isnot(None)))
                   if (a.backend_ref or {}).get("namespace") == namespace
                   and ((a.backend_ref or {}).get("primary") or {}).get("name") == job}
        return [p for p in double.readers.seen if p["metadata"]["labels"].get("myapp.io/outputs-fetch") == "live"
                and p["metadata"]["labels"]["myapp.io/outputs-reader"] in ids]

    for number in (0, 1, 2):
        if number == 2:
            monkeypatch.setitem(app.config, "MYAPP_CLAIM_METRICS_SECONDS", 3600.0)
        trial(number)
    with app.app_context():
        experiment = db.session.get(Experiment, experiment_id)
        trials = db.session.scalars(sa.select(Trial).filter_by(experiment_id=experiment_id)
                                    .order_by(Trial.number)).all()
        assert experiment.state.value == "succeeded"
        assert [(t.state.value, t.values, t.pruned_step) for t in trials] == [
            ("complete", [0.6], None), ("pruned", [4.0], 1), ("complete", [0.5], None)]
    # Live reads ran as reader pods in the project's namespace and none is left behind.
    live = [p for p in double.readers.seen if p["metadata"]["labels"].get("myapp.io/outputs-fetch") == "live"]
    assert live and {p["metadata"]["namespace"] for p in live} == {namespace}
    assert [p for p in double.list("v1", "Pod", namespace) if p["metadata"]["name"].startswith("myapp-outputs-")] == []
