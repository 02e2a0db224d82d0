"""The job SDK (myapp.checkpoint) reaches every checkpointing job from its one copy in myapp/: an image built
from a training template's Dockerfile has it beside the entry, which imports it without a fallback; a local job
imports the platform's own, bound into its sandbox."""
from __future__ import annotations

import ast
import dataclasses
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from myapp.backends.base import JobState
from myapp.backends.local.commands import EntryMap
from myapp.backends.local.job_folders import JOB_SDK
from myapp.rendering.catalog import JOB_SDK as SDK_FILES
from myapp.rendering.catalog import SOURCE_ROOT, catalog_root, load_catalog
from tests.backends.local.support import finished, lines_of, make_ctx, render_template

TRAINING = {t["name"]: t for t in load_catalog() if t["checkpoints"]}


def copy_sources(dockerfile: str) -> list[str]:
    """The build-context paths the Dockerfile's COPY/ADD lines copy (multi-stage copies left out)."""
    sources = []
    for line in dockerfile.splitlines():
        if line.split(None, 1)[:1] not in (["COPY"], ["ADD"]):
            continue
        words = shlex.split(line)
        if not any(w.startswith("--from") for w in words):
            sources += [w for w in words[1:-1] if not w.startswith("--")]
    return sources


def test_the_training_templates_are_the_ones_that_checkpoint():
    assert sorted(TRAINING) == ["horovod-mpi", "python", "pytorch-ddp", "tf-distributed", "volcano-job", "xgboost"]


@pytest.mark.parametrize("name", sorted(t["name"] for t in load_catalog()))
def test_every_copy_source_is_in_the_build_context(name):
    """The build context is the source tree's root: a source the local backend cannot find is a broken image."""
    folder = catalog_root() / name
    sources = copy_sources((folder / "Dockerfile").read_text())
    assert sources
    for source in sources:
        host = EntryMap(folder).source(source)
        assert host is not None and host.exists(), f"{name}: COPY {source} is not in the build context"


@pytest.mark.parametrize("name", sorted(TRAINING))
def test_a_training_image_has_the_job_sdk_where_its_entry_imports_it(name, tmp_path):
    """The image's files laid out as its Dockerfile copies them; the entry's folder (sys.path[0] of
    `python /app/main.py`) imports myapp.checkpoint from there, with the standard library alone (-S: no
    site-packages, so not the platform's installed package)."""
    template, folder = TRAINING[name], catalog_root() / name
    python, entry = template["command"][:2]
    assert python == "python" and entry.startswith("/")
    copied = EntryMap(folder).files
    assert copied[entry] == folder / "main.py"
    beside = os.path.dirname(entry)
    for sdk_file in SDK_FILES:  # the platform's one copy, the same files the local sandbox binds
        assert copied[os.path.join(beside, sdk_file)] == SOURCE_ROOT / sdk_file
    assert set(copied.values()) - {folder / "main.py"} <= set(JOB_SDK)
    image = tmp_path / "image"
    for target, host in copied.items():
        (image / target.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(host, image / target.lstrip("/"))
    app = image / beside.lstrip("/")
    probe = ("import sys; sys.path.insert(0, sys.argv[1]); from myapp.checkpoint import load_latest, save; "
             "import myapp.checkpoint as sdk; print(sdk.__file__)")
    done = subprocess.run([sys.executable, "-I", "-S", "-c", probe, str(app)], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(app / "myapp" / "checkpoint.py")


@pytest.mark.parametrize("name", sorted(set(TRAINING) - {"python"}))  # python runs the user's own script
def test_a_trainer_that_cannot_import_the_sdk_fails(name):
    """The import is at the top of the module, outside any try: without the SDK the job fails at start
    instead of training every attempt from scratch."""
    tree = ast.parse((catalog_root() / name / "main.py").read_text())
    found = [node for node in tree.body if isinstance(node, ast.ImportFrom) and node.module == "myapp.checkpoint"]
    assert found, f"{name}: no top-level import of myapp.checkpoint"
    assert not [node for node in ast.walk(tree) if isinstance(node, ast.Try)
                and any(isinstance(n, ast.ImportFrom) and n.module == "myapp.checkpoint" for n in ast.walk(node))]


@pytest.mark.parametrize("name", ["horovod-mpi", "pytorch-ddp", "tf-distributed", "xgboost"])
def test_a_distributed_trainer_reads_the_stop_and_exits_as_stopped(name):
    """Each distributed trainer turns SIGTERM into the SDK's flag (Stop), asks it between its steps (agreed)
    and exits with STOPPED: saving on a stop is the trainers' contract, run for real in tests/test_checkpoint.py
    (pytorch-ddp and the agreement of ranks everywhere; xgboost and tf-distributed where installed)."""
    tree = ast.parse((catalog_root() / name / "main.py").read_text())
    calls = {node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
             for node in ast.walk(tree) if isinstance(node, ast.Call)}
    assert {"Stop", "agreed", "save"} <= calls, f"{name}: calls {sorted(calls)}"
    exits = [node for node in ast.walk(tree) if isinstance(node, ast.Name) and node.id == "STOPPED"]
    assert exits, f"{name}: never exits with STOPPED"


SAVE_AND_LOAD = ("import myapp.checkpoint as sdk; sdk.save(3, b'x', unit='epoch'); "
                 "print(sdk.__file__); print(sdk.load_latest().step)")


@pytest.mark.slow
def test_a_local_job_imports_the_platforms_sdk_and_saves_in_its_folder(backend):
    ctx = make_ctx()
    ctx = dataclasses.replace(ctx, checkpoint_dir=f"{ctx.run_id}/job")
    ref = backend.submit(render_template("python", {"script": SAVE_AND_LOAD}, ctx=ctx))
    status = finished(backend, ref)
    assert status.state is JobState.SUCCEEDED, status.reason
    assert lines_of(backend, ref) == [str(SOURCE_ROOT / "myapp" / "checkpoint.py"), "3"]
    saved = Path(backend.checkpoints_dir(ref.namespace)) / ctx.checkpoint_dir
    assert sorted(p.name for p in saved.iterdir()) == ["ckpt-3.bin", "ckpt-3.json"]
