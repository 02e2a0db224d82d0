"""The job-template catalog: contents, and clear errors for malformed folders."""
from __future__ import annotations

import py_compile
import shutil
from pathlib import Path

import pytest
import yaml

from myapp.rendering import CatalogError
from myapp.rendering.catalog import CATALOG_ROOT, load_catalog
from myapp.rendering.security import ROOT_TEMPLATES

KEYS = {"name", "version", "description", "category", "kind", "image", "command", "args_schema",
        "default_resources", "max_resources", "env", "checkpoints", "path"}
EXPECTED = {"python": "job", "pytorch-ddp": "pytorchjob", "tf-distributed": "tfjob", "xgboost": "xgboostjob",
            "horovod-mpi": "mpijob", "volcano-job": "volcanojob", "image-build": "imagebuild",
            "model-register": "job", "deploy-service": "service", "serve-model": "job", "notebook": "notebook"}


def test_catalog_contents():
    templates = load_catalog()
    assert {t["name"]: t["kind"] for t in templates} == EXPECTED
    assert [t["name"] for t in templates] == sorted(EXPECTED)
    for template in templates:
        assert set(template) == KEYS
        assert isinstance(template["command"], list) and all(isinstance(c, str) for c in template["command"])
        assert template["args_schema"]["type"] == "object"
        assert template["args_schema"]["additionalProperties"] is False
        for section in ("default_resources", "max_resources"):
            assert isinstance(template[section]["cpu"], str) and isinstance(template[section]["memory"], str)
            assert isinstance(template[section]["gpu"], int)
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in template["env"].items())
        folder = Path(template["path"])
        assert folder.name == template["name"]
        assert (folder / "README.md").is_file() and (folder / "Dockerfile").is_file()
        entry = [p for p in folder.iterdir() if p.name in ("main.py", "start.sh")]
        assert entry, f"{folder} has no entry code"
        for script in folder.glob("*.py"):
            py_compile.compile(str(script), doraise=True)


def test_catalog_root_defaults_to_repo_and_env_overrides(tmp_path, monkeypatch):
    assert Path(__file__).resolve().parents[2] / "job-templates" == CATALOG_ROOT
    shutil.copytree(CATALOG_ROOT / "python", tmp_path / "python")
    monkeypatch.setenv("MYAPP_CATALOG_ROOT", str(tmp_path))
    assert [t["name"] for t in load_catalog()] == ["python"]


def make(tmp_path: Path, mutate) -> Path:
    """A one-template catalog copied from python/, with template.yaml changed by ``mutate``."""
    folder = tmp_path / "python"
    shutil.copytree(CATALOG_ROOT / "python", folder)
    raw = yaml.safe_load((folder / "template.yaml").read_text())
    mutate(raw)
    (folder / "template.yaml").write_text(yaml.safe_dump(raw))
    return tmp_path


@pytest.mark.parametrize("mutate,field", [
    (lambda t: t.pop("image"), "image"),
    (lambda t: t.update(version=1.0), "version"),
    (lambda t: t.update(name="other"), "name"),
    (lambda t: t.update(kind="spark"), "kind"),
    (lambda t: t.update(command="python main.py"), "command"),
    (lambda t: t.update(image="Not An Image"), "image"),
    (lambda t: t.update(extra=1), "extra"),
    (lambda t: t["args"]["backoff_limit"].update(default=99), "args.backoff_limit.default"),
    (lambda t: t["args"]["backoff_limit"].update(type="int"), "args.backoff_limit.type"),
    (lambda t: t["args"]["backoff_limit"].pop("maximum"), "args.backoff_limit.maximum"),
    (lambda t: t["args"]["script"].update(pattern="("), "args.script.pattern"),
    (lambda t: t["args"]["script"].update(color="red"), "args.script.color"),
    (lambda t: t["args"]["script"].update(required="yes"), "args.script.required"),
    (lambda t: t["args"].update({"Bad-Name": {"type": "string"}}), "args.Bad-Name"),
    (lambda t: t["args"]["backoff_limit"].update(type="string", pattern=".*"), "args.backoff_limit.maximum"),
    (lambda t: t["args"].update(backoff_limit={"type": "string", "pattern": "[0-9]", "default": "0"}),
     "args.backoff_limit.type"),
    (lambda t: t["resources"]["default"].update(cpu="64"), "resources.default.cpu"),
    (lambda t: t["resources"]["default"].update(memory="lots"), "resources.default.memory"),
    (lambda t: t["resources"]["max"].update(tpu=1), "resources.max.tpu"),
    (lambda t: t["resources"].pop("max"), "resources"),
    (lambda t: t["env"].update(MYAPP_TASK="x"), "env.MYAPP_TASK"),
    (lambda t: t["env"].update(DB_PASSWORD="hunter2"), "env.DB_PASSWORD"),
    (lambda t: t["env"].update(RETRIES=3), "env.RETRIES"),
    (lambda t: t["env"].update(API_TOKEN="secret://bad name/key"), "env.API_TOKEN"),
    (lambda t: t.update(checkpoints="yes"), "checkpoints"),
])
def test_malformed_template_names_folder_and_field(tmp_path, mutate, field):
    root = make(tmp_path, mutate)
    with pytest.raises(CatalogError) as info:
        load_catalog(root)
    assert info.value.folder == "python"
    assert info.value.field == field, str(info.value)
    assert "'python'" in str(info.value) and repr(field) in str(info.value)


def test_missing_files_and_bad_yaml(tmp_path):
    root = make(tmp_path, lambda t: None)
    (root / "python" / "Dockerfile").unlink()
    with pytest.raises(CatalogError, match="Dockerfile"):
        load_catalog(root)
    (root / "python" / "Dockerfile").write_text("FROM scratch\n")
    (root / "python" / "template.yaml").write_text("name: [unclosed\n")
    with pytest.raises(CatalogError, match="not valid YAML"):
        load_catalog(root)


def test_kind_specific_arguments_are_required(tmp_path):
    folder = tmp_path / "pytorch-ddp"
    shutil.copytree(CATALOG_ROOT / "pytorch-ddp", folder)
    raw = yaml.safe_load((folder / "template.yaml").read_text())
    del raw["args"]["workers"]
    (folder / "template.yaml").write_text(yaml.safe_dump(raw))
    with pytest.raises(CatalogError) as info:
        load_catalog(tmp_path)
    assert info.value.field == "args.workers" and "pytorchjob" in info.value.reason


# Base images whose own USER is a numeric non-root one (their Dockerfile here sets no USER).
NON_ROOT_BASES = {"quay.io/jupyter/": 1000}  # Jupyter docker-stacks: NB_UID


def image_user(dockerfile: str) -> int:
    """The numeric user the image runs as: its last USER line, else its base's, else root."""
    user, base = None, ""
    for line in dockerfile.splitlines():
        words = line.split()
        if words and words[0].upper() == "FROM":
            base, user = words[1], None  # each stage starts from its base's user
        elif words and words[0].upper() == "USER":
            user = words[1].split(":")[0]
    if user is None:
        return next((uid for prefix, uid in NON_ROOT_BASES.items() if base.startswith(prefix)), 0)
    assert user.isdigit(), f"USER {user!r}: the kubelet checks runAsNonRoot only against a numeric user"
    return int(user)


def test_root_templates_are_exactly_the_images_without_a_non_root_user():
    """Rendering gives every template runAsNonRoot: true except security.ROOT_TEMPLATES; a template
    whose image runs as root without being listed would never start (and the reverse loses a
    restriction for nothing)."""
    users = {t["name"]: image_user((Path(t["path"]) / "Dockerfile").read_text()) for t in load_catalog()}
    assert {name for name, uid in users.items() if uid == 0} == set(ROOT_TEMPLATES)
    assert image_user("FROM python:3.11-slim\nUSER 1000\nFROM python:3.11-slim\n") == 0
    assert image_user("FROM quay.io/jupyter/scipy-notebook:x\n") == 1000
