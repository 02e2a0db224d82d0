"""The checkpoint contract in rendering: every replica of a training template's attempt mounts its task's
folder on the project's checkpoints claim as MYAPP_CHECKPOINT_DIR, with the template's grace period; a task
turns it off with checkpoint: false; templates that do not checkpoint and bad folders get nothing."""
from __future__ import annotations

import pytest
import yaml

from myapp.outputs.checkpoints import ENV, MOUNT, VOLUME
from myapp.rendering import RenderContext, render
from myapp.rendering.catalog import get_template, load_template
from myapp.rendering.errors import CatalogError, ContextError

TRAINING = ("pytorch-ddp", "tf-distributed", "xgboost", "horovod-mpi", "volcano-job", "python")


def ctx(**kw):
    return RenderContext(project="vision", namespace="proj-vision", pipeline="digits", run_id=42, task="train",
                         attempt=3, service_account="proj-vision-runner", output_dir="42/train/3", **kw)


def pod_specs(manifests):
    from myapp.rendering.pod import pod_templates

    return [pod.template["spec"] for obj in manifests for pod in pod_templates(obj)]


@pytest.mark.parametrize("name", TRAINING)
def test_every_replica_of_a_training_template_mounts_the_tasks_folder(name):
    manifests = render(get_template(name), {}, ctx(checkpoint_dir="42/train"))
    claims = [m for m in manifests if m["kind"] == "PersistentVolumeClaim" and m["metadata"]["name"] == VOLUME]
    assert len(claims) == 1 and claims[0]["spec"]["accessModes"] == ["ReadWriteMany"]
    specs = pod_specs(manifests)
    assert specs
    for spec in specs:
        assert {"name": VOLUME, "persistentVolumeClaim": {"claimName": VOLUME}} in spec["volumes"]
        assert spec["terminationGracePeriodSeconds"] == 30
        for container in spec["containers"]:
            mount = {"name": VOLUME, "mountPath": f"{MOUNT}/42/train", "subPath": "42/train"}
            assert mount in container["volumeMounts"]
            assert {"name": ENV, "value": f"{MOUNT}/42/train"} in container["env"]
    # The same folder for the task's next attempt; none with checkpoint: false.
    off = render(get_template(name), {"checkpoint": False}, ctx(checkpoint_dir="42/train"))
    assert VOLUME not in yaml.safe_dump(off) and ENV not in yaml.safe_dump(off)


def test_templates_that_do_not_checkpoint_and_bad_folders_get_nothing():
    assert "checkpoint" not in get_template("model-register")["args_schema"]["properties"]
    plain = render(get_template("model-register"), {"model_name": "m", "model_path": "/data/m.pt"},
                   ctx(checkpoint_dir="42/train"))
    assert VOLUME not in yaml.safe_dump(plain)
    for bad in ("42/train/3", "../x", "42/Train", "/42/train"):
        with pytest.raises(ContextError, match="checkpoint_dir"):
            render(get_template("python"), {}, ctx(checkpoint_dir=bad))


def test_a_templates_grace_period_is_checked(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "README.md").write_text("x")
    (folder / "Dockerfile").write_text("FROM x")
    base = {"name": "mine", "version": "1.0.0", "description": "d", "category": "training", "kind": "job",
            "image": "x:1", "command": ["python"], "resources": {"default": {"cpu": "1", "memory": "1Gi"},
                                                                 "max": {"cpu": "2", "memory": "2Gi"}}}
    for bad in (-1, 3601, "30", True):
        (folder / "template.yaml").write_text(yaml.safe_dump(base | {"grace_period": bad}))
        with pytest.raises(CatalogError, match="grace_period"):
            load_template(folder)
    (folder / "template.yaml").write_text(yaml.safe_dump(base | {"checkpoints": True, "grace_period": 5}))
    loaded = load_template(folder)
    assert loaded["args_schema"]["x-grace-period"] == 5
    assert loaded["args_schema"]["properties"]["checkpoint"]["default"] is True
