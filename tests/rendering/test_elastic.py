"""Elastic PyTorch: a template that asks for it (template.yaml ``elastic: {min, max}``) renders a PyTorchJob
whose replicas run torchrun with a min:max c10d rendezvous and the operator's elasticPolicy, valid against
the PyTorchJob CRD the repo carries; the catalog refuses an elastic setting it cannot honour."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from myapp.rendering import render
from myapp.rendering.catalog import catalog_root, load_template
from myapp.rendering.errors import ArgumentError, CatalogError
from myapp.rendering.schemas import crd_validator
from tests.rendering.support import PLAIN_CTX


def elastic_copy(root: Path, template: str = "pytorch-ddp", **fields) -> Path:
    """A copy of a catalog template folder with fields added to its template.yaml."""
    folder = root / template
    shutil.copytree(catalog_root() / template, folder)
    raw = yaml.safe_load((folder / "template.yaml").read_text())
    (folder / "template.yaml").write_text(yaml.safe_dump({**raw, **fields}, sort_keys=False))
    return folder


def test_an_elastic_template_renders_torchrun_with_a_min_max_rendezvous(tmp_path):
    template = load_template(elastic_copy(tmp_path, elastic={"min": 2, "max": 4}))
    (job,) = [m for m in render(template, {"workers": 2}, PLAIN_CTX) if m["kind"] == "PyTorchJob"]
    name = job["metadata"]["name"]
    assert job["spec"]["elasticPolicy"] == {"minReplicas": 2, "maxReplicas": 4, "rdzvBackend": "c10d",
                                            "maxRestarts": 3, "nProcPerNode": 1}
    for rtype, replica in job["spec"]["pytorchReplicaSpecs"].items():
        (container,) = replica["template"]["spec"]["containers"]
        assert container["command"] == [
            "torchrun", "--nnodes=2:4", "--nproc-per-node=1", "--rdzv-backend=c10d",
            "--rdzv-endpoint=$(MASTER_ADDR):$(MASTER_PORT)", f"--rdzv-id={name}",
            f"--rdzv-conf=is_host={int(rtype == 'Master')}", "--max-restarts=3", "/app/main.py"]
        assert container["args"][:2] == ["--epochs", "20"]
        # every rendezvous round's workers get a store of their own, not the last round's keys
        assert {"name": "TORCH_DISABLE_SHARE_RDZV_TCP_STORE", "value": "1"} in container["env"]
    errors = list(crd_validator("kubeflow.org/v1", "PyTorchJob").iter_errors(job))
    assert errors == []
    plain = load_template(catalog_root() / "pytorch-ddp")
    (job,) = [m for m in render(plain, {"workers": 2}, PLAIN_CTX) if m["kind"] == "PyTorchJob"]
    assert "elasticPolicy" not in job["spec"]  # asked for by the template only
    assert all("TORCH_DISABLE_SHARE_RDZV_TCP_STORE" not in str(replica)
               for replica in job["spec"]["pytorchReplicaSpecs"].values())


def test_replicas_outside_the_elastic_range_are_refused_naming_workers(tmp_path):
    template = load_template(elastic_copy(tmp_path, elastic={"min": 2, "max": 3}))
    for workers in (0, 3):
        with pytest.raises(ArgumentError) as refused:
            render(template, {"workers": workers}, PLAIN_CTX)
        assert refused.value.field == "workers" and "from 1 to 2" in refused.value.reason


@pytest.mark.parametrize(("template", "value", "says"), [
    ("xgboost", {"min": 1, "max": 2}, "only a pytorchjob template can be elastic"),
    ("pytorch-ddp", {"min": 3, "max": 2}, "1 <= min <= max <= 64"),
    ("pytorch-ddp", {"min": True, "max": 2}, "whole numbers"),
    ("pytorch-ddp", {"min": 1}, "exactly min and max"),
    ("pytorch-ddp", [1, 2], "exactly min and max"),
])
def test_the_catalog_refuses_an_elastic_setting_it_cannot_honour(tmp_path, template, value, says):
    with pytest.raises(CatalogError) as refused:
        load_template(elastic_copy(tmp_path, template, elastic=value))
    assert refused.value.field == "elastic" and says in str(refused.value)
