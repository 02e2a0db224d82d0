"""What `myapp init` puts in the database: roles, the first admin, the catalog, the demo project."""
from __future__ import annotations

import contextlib
import os
import secrets
from typing import Any

import sqlalchemy as sa
import yaml
from flask_appbuilder.security.manager import BaseSecurityManager

from .admission.group_state import machine_node
from .auth.passwords import check_password
from .auth.security import ADMIN_ROLE, USER_ROLE
from .extensions import appbuilder, db
from .fs.beneath import Folder
from .models import (
    LOCAL_CLUSTER,
    LOCAL_DEFAULT_GROUP,
    Cluster,
    ClusterKind,
    Experiment,
    JobTemplate,
    Pipeline,
    Project,
    ProjectMember,
    ProjectRole,
    ResourceGroup,
)


def sync_roles() -> None:
    """Create Admin, User and Public roles and every API permission; Admin gets them all.
    `myapp init` creates the first admin before (ensure_admin), so FAB finds a user here."""
    sm = appbuilder.sm
    BaseSecurityManager.create_db(sm)  # roles only; Alembic made the tables
    appbuilder.add_permissions(update_perms=True)
    sm.add_role(USER_ROLE)


def ensure_admin() -> tuple[str, str | None]:
    """Return (username, password-if-generated). Never a default password."""
    sm = appbuilder.sm
    username = os.environ.get("MYAPP_ADMIN_USER", "admin")
    if sm.find_user(username=username):
        return username, None
    given = os.environ.get("MYAPP_ADMIN_PASSWORD")
    if given:
        check_password(given, username, email=f"{username}@localhost", names=("Platform", "Admin"))  # FieldError
    password = given or secrets.token_urlsafe(12)
    user = sm.add_user(username, "Platform", "Admin", f"{username}@localhost",
                       [sm.add_role(ADMIN_ROLE)], password=password)  # the role as found, or made now
    if not user:
        raise RuntimeError(f"could not create the admin user {username!r}")
    return username, (None if given else password)


def create_user(username: str, password: str, admin: bool = False, email: str | None = None):
    check_password(password, username, email=email or f"{username}@localhost")
    sm = appbuilder.sm
    role = sm.find_role(ADMIN_ROLE if admin else USER_ROLE)
    user = sm.add_user(username, username, "-", email or f"{username}@localhost", [role], password=password)
    if not user:
        raise RuntimeError(f"could not create user {username!r}")
    return user


def sync_catalog(templates: list[dict[str, Any]]) -> int:
    """Upsert the shipped job templates (by name and version)."""
    columns = {c.key for c in sa.inspect(JobTemplate).column_attrs} - {"id", "created_at", "updated_at"}
    count = 0
    for spec in templates:
        values = {k: v for k, v in spec.items() if k in columns} | {"builtin": True}
        row = db.session.scalar(sa.select(JobTemplate).filter_by(name=spec["name"], version=spec["version"]))
        if row is None:
            db.session.add(JobTemplate(**values))
        else:
            for key, value in values.items():
                setattr(row, key, value)
        count += 1
    db.session.commit()
    return count


def ensure_local_cluster() -> ResourceGroup:
    """This machine as a cluster (kind local) with a default resource group holding its CPUs, memory and
    GPUs as read from it, where the work that names no resource group counts (admission/usage.py).
    Idempotent: made once; an admin's later changes to either are kept."""
    cluster = db.session.scalar(sa.select(Cluster).filter_by(name=LOCAL_CLUSTER))
    if cluster is None:
        cluster = Cluster(name=LOCAL_CLUSTER, kind=ClusterKind.LOCAL)
        db.session.add(cluster)
        db.session.flush()
    group = db.session.scalar(sa.select(ResourceGroup).filter_by(name=LOCAL_DEFAULT_GROUP))
    if group is None:
        machine = machine_node()
        group = ResourceGroup(name=LOCAL_DEFAULT_GROUP, cluster_id=cluster.id, cpu_millicores=int(machine.cpu * 1000),
                              memory_bytes=int(machine.memory), gpus=machine.gpus)
        db.session.add(group)
    db.session.commit()
    return group


def ensure_demo_project(owner_username: str) -> Project:
    project = db.session.scalar(sa.select(Project).filter_by(name="demo"))
    if project is None:
        project = Project(name="demo", namespace="demo", description="Example project with a pipeline ready to run.")
        db.session.add(project)
        db.session.flush()
    owner = appbuilder.sm.find_user(username=owner_username)
    if not db.session.scalar(sa.select(ProjectMember.id).filter_by(project_id=project.id, user_id=owner.id)):
        db.session.add(ProjectMember(project_id=project.id, user_id=owner.id, role=ProjectRole.OWNER))
    db.session.commit()
    return project


def retire_shared_token(project: Project) -> None:
    """Jobs get a token of their own run now (myapp/auth/run_tokens.py), none shared: the project's bot
    (the identity run tokens act as) is set up, which deactivates a bot of the shared 365-day token
    era so that token is refused, and that token's files are deleted."""
    from .auth.run_tokens import ensure_bot
    from .backends.registry import local_workdir

    ensure_bot(project)
    db.session.commit()
    secrets_dir = local_workdir() / "secrets"
    for parent in (secrets_dir / project.namespace, secrets_dir):
        with contextlib.suppress(FileNotFoundError), Folder.open(parent) as folder:
            folder.remove_tree("myapp-api-token")


def ensure_demo_pipeline(project: Project) -> Pipeline:
    """The example: train a digits classifier with DDP (2 replicas), register it, serve it."""
    from .backends.registry import local_workdir
    from .pipelines.spec import apply, parse

    # The project's data folder of the local backend: every job of the project reads and writes it.
    model = local_workdir() / "data" / project.namespace / "digits-{{ run_id }}.pt"
    spec = {
        "name": "digits", "project": project.name,
        "description": "Train a digits classifier with PyTorch DDP, register it, serve it.",
        # Run with another learning rate: `myapp pipeline run digits --param lr=0.01`, or Run in the editor;
        # the experiment digits-search (ensure_demo_experiment) searches both. epoch_seconds slows each epoch
        # down (the trainer saves a checkpoint per epoch and resumes from it: docs/checkpoints.md).
        "parameters": {"lr": 0.05, "hidden": 128, "epoch_seconds": 0},
        "tasks": [
            {"name": "train", "template": "pytorch-ddp",
             "args": {"workers": 1, "epochs": 12, "lr": "{{ params.lr }}", "hidden": "{{ params.hidden }}",
                      "epoch_seconds": "{{ params.epoch_seconds }}", "output_path": str(model)},
             "timeout": 1800},
            {"name": "register", "template": "model-register", "depends_on": ["train"],
             "args": {"model_name": "digits", "model_path": str(model), "framework": "pytorch",
                      "signature": '{"shape": [null, 64], "dtype": "float32"}'}},
            # The service object outlives the run (its servers stop when it is deleted); each run's version
            # replaces the one before on it (docs/serving.md).
            {"name": "serve", "template": "serve-model", "depends_on": ["register"],
             "args": {"service_name": "digits", "model_name": "digits"}},
        ],
    }
    pipeline = apply(parse(yaml.safe_dump(spec)), project, None)
    db.session.commit()
    return pipeline


def ensure_demo_experiment(pipeline: Pipeline) -> Experiment:
    """The example search: the demo pipeline's lr and hidden units, 12 trials, 2 at once, median pruning on
    the trainer's per-epoch test accuracy. Stored, not started: `myapp experiment run digits-search --wait`."""
    from .experiments import spec as experiment_spec

    project = db.session.get(Project, pipeline.project_id)
    found = db.session.scalar(sa.select(Experiment).filter_by(project_id=project.id, name="digits-search"))
    if found is not None:
        return found
    experiment = experiment_spec.apply(experiment_spec.parse(yaml.safe_dump({
        "name": "digits-search", "project": project.name, "pipeline": pipeline.name,
        "description": "Search the digits trainer's learning rate and hidden units for the best test accuracy.",
        "objectives": [{"metric": "accuracy", "direction": "maximize"}], "algorithm": "tpe", "seed": 1,
        "search_space": [{"name": "lr", "type": "float", "low": 0.005, "high": 0.5, "log": True},
                         {"name": "hidden", "type": "int", "low": 16, "high": 256, "step": 16}],
        "max_trials": 12, "parallel_trials": 2, "max_failed_trials": 2,
        "early_stopping": {"kind": "median", "startup_trials": 2, "warmup_steps": 3}})), pipeline, None)
    db.session.commit()
    return experiment


def ensure_default_environments() -> list[str]:
    """The platform's own notebook environments in the shared catalog (myapp/images/defaults.py)."""
    from flask import current_app

    from .images.defaults import ensure_defaults
    from .images.environments import default_root

    return ensure_defaults(default_root(), local_backend=current_app.config["MYAPP_BACKEND"] == "local")
