"""Preemption that knows the cost, end to end on the local backend (real sandboxed processes, the real
trainer): the demo's PyTorch trainer, borrowing another project's quota, is preempted right after its
epoch-6 checkpoint when that project takes its quota back; the stop (SIGTERM) saves epoch 7, whose steps
were done, at once; the attempt says so, the next one resumes at epoch 8 (past a torn epoch-8 checkpoint
planted as a save killed mid-write would leave it) and ends with the accuracy of an uninterrupted run."""
from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys

import sqlalchemy as sa

from myapp.rendering.catalog import catalog_root
from tests.admission.test_admission_local import Platform, make_group, python_task, submit

EPOCHS, EPOCH_SECONDS, HIDDEN = 8, 1.5, 32
TRAIN_ARGS = {"workers": 0, "epochs": EPOCHS, "hidden": HIDDEN, "lr": 0.05}


def reference_run(output) -> subprocess.Popen:
    """The same training uninterrupted, without checkpoints, beside the platform's (as fast as it goes)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MYAPP_")} | {
        "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "WORLD_SIZE": "1", "RANK": "0",
        "OMP_NUM_THREADS": "1"}
    script = catalog_root() / "pytorch-ddp" / "main.py"
    return subprocess.Popen([sys.executable, str(script), "--epochs", str(EPOCHS), "--hidden", str(HIDDEN),
                             "--lr", "0.05", "--output-path", str(output)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def attempt_rows(app, run_id):
    from myapp.extensions import db
    from myapp.models import TaskRun

    with app.app_context():
        rows = db.session.scalars(sa.select(TaskRun).where(TaskRun.pipeline_run_id == run_id)
                                  .order_by(TaskRun.id)).all()
        out = [{"attempt": r.attempt, "state": r.state.value, "reason": r.reason or "",
                "started": r.started_at, "finished": r.finished_at} for r in rows]
        db.session.commit()
        return out


def test_training_preempted_for_a_quota_resumes_from_its_checkpoint(app, catalog, tmp_path):
    from myapp.extensions import db
    from myapp.models import Project

    reference = reference_run(tmp_path / "reference.pt")
    group, (owner, trainer) = make_group(app, 2000, [{"cpu_millicores": 2000}, None])
    with app.app_context():
        owner_name = db.session.get(Project, owner).name
        namespace = db.session.get(Project, trainer).namespace
    platform = Platform(app, tmp_path)
    try:
        model = platform.backend.data_dir(namespace) / "model.pt"
        training = submit(app, catalog, group, trainer, {"train": {
            "template": "pytorch-ddp", "resources": {"cpu": "2", "memory": "1Gi"},
            "args": TRAIN_ARGS | {"epoch_seconds": EPOCH_SECONDS, "output_path": str(model)}}})
        folder = f"{training}/train"
        platform.runs = [training]

        def saved(step):  # the trainer's checkpoints, as admission reads them
            manifest = platform.backend.last_checkpoint(namespace, folder)
            return manifest if manifest and manifest["step"] >= step else None

        sixth = platform.until(lambda: saved(6), "the trainer saved its epoch-6 checkpoint", timeout=120)
        assert sixth["step"] == 6 and sixth["unit"] == "epoch"
        owned = submit(app, catalog, group, owner, {"mine": python_task(1, cpu="2")})
        platform.runs = [owned, training]
        platform.until(lambda: attempt_rows(app, training)[0]["state"] == "cancelled", "the trainer was preempted")
        first = attempt_rows(app, training)[0]
        assert f"for project {owner_name}'s quota" in first["reason"], first["reason"]
        # The stop came in epoch 7, after its steps (they take milliseconds, its 1.5 s the rest): the trainer
        # saved it at once, before its end (while the preemption stopped it: after the decision), and the
        # attempt says the task resumes from it, losing nothing.
        seventh = saved(7)
        assert seventh["step"] == 7 and seventh["saved_at"] - sixth["saved_at"] < EPOCH_SECONDS, (sixth, seventh)
        assert "the task resumes from epoch 7 (0 s of work since that checkpoint lost)" in first["reason"], \
            first["reason"]
        # A save of epoch 8 killed mid-write: its data renamed into place, no manifest; and a manifest whose
        # data was cut short. Neither is loaded: the next attempt resumes from epoch 7.
        checkpoints = platform.backend.checkpoints_dir(namespace) / folder
        (checkpoints / "ckpt-8.bin").write_bytes(b"torn")
        torn = dict(seventh, step=9, file="ckpt-9.bin", size=10_000)
        (checkpoints / "ckpt-9.bin").write_bytes(b"short")
        (checkpoints / "ckpt-9.json").write_text(json.dumps(torn))

        platform.until(lambda: platform.run_state(training) in ("succeeded", "failed"), "the training finished",
                       timeout=180)
        assert platform.run_state(owned) == "succeeded"
        attempts = attempt_rows(app, training)
        assert platform.run_state(training) == "succeeded", attempts
        assert [a["state"] for a in attempts] == ["cancelled", "succeeded"]
        reported = platform.backend.outputs_dir(namespace) / f"{training}/train/2/metrics.jsonl"
        lines = [json.loads(line) for line in reported.read_text().splitlines()]
        accuracy = {m["step"]: m["value"] for m in lines if m["name"] == "accuracy"}
        assert sorted(accuracy) == [EPOCHS], "the second attempt trained epoch 8 alone"
        out, _ = reference.communicate(timeout=180)
        uninterrupted = float(re.search(r"test accuracy: ([0-9.]+)", out).group(1))
        assert abs(accuracy[EPOCHS] - uninterrupted) <= 0.01, (accuracy, uninterrupted)
    finally:
        platform.stop()
        if reference.poll() is None:
            reference.kill()
