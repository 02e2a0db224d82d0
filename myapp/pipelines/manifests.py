"""From SQL rows to the plain data rendering takes: one place, used by preview and submission."""
from __future__ import annotations

from dataclasses import replace
from typing import Any

import sqlalchemy as sa

from ..errors import DomainError, Kind
from ..extensions import db
from ..models import ClusterKind, JobTemplate, Pipeline, Project, Quota, ResourceGroup, Task, TaskRun
from ..outputs import checkpoints
from ..outputs.declarations import attempt_dir, resolve, sample_paths
from ..rendering import ArgumentError, RenderContext, RenderError, render, validate_args
from ..rendering import ResourceGroup as GroupSpec
from ..rendering.context import MAX_AVOIDED_NODES
from ..rendering.contract import run_token_secret
from ..rendering.image_choice import with_image
from ..rendering.kinds import pipeline_refusal
from ..rendering.quantity import resolve_resources
from ..rendering.volcano_queue import VOLCANO_DEFAULT_QUEUE, Amount, QuotaShare, VolcanoQueue, queue_spec
from .images import pull_secrets, visible_image
from .macros import SAMPLE_VALUES, macro_values, substitute

TEMPLATE_KEYS = ("name", "version", "description", "category", "kind", "image", "command", "args_schema",
                 "default_resources", "max_resources", "env", "checkpoints")


def template_data(template: JobTemplate) -> dict[str, Any]:
    return {key: getattr(template, key) for key in TEMPLATE_KEYS}


def group_spec(group: ResourceGroup | None) -> GroupSpec | None:
    if group is None:
        return None
    queue, volcano = group.queue or "default", None
    if group.gang_scheduling and group.cluster.kind is ClusterKind.KUBERNETES:
        # On Kubernetes each gang-scheduled group is a Volcano Queue of its own (its name unless it names one).
        queue = group.queue or group.name
        if queue != VOLCANO_DEFAULT_QUEUE:
            volcano = volcano_queue(group, queue)
    return GroupSpec(name=group.name, node_selector=dict(group.node_selector), tolerations=tuple(group.tolerations),
                     gpu_type=group.gpu_type, queue=queue, gang_scheduling=group.gang_scheduling,
                     volcano_queue=volcano)


def volcano_queue(group: ResourceGroup, name: str) -> VolcanoQueue:
    """The group's Queue from its capacity and its projects' quotas (myapp/rendering/volcano_queue.py)."""
    quotas = db.session.scalars(sa.select(Quota).filter_by(resource_group_id=group.id)).all()
    return queue_spec(name, group.name, Amount(group.gpus, group.cpu_millicores, group.memory_bytes),
                      [QuotaShare(Amount(q.gpus, q.cpu_millicores, q.memory_bytes), q.can_borrow) for q in quotas])


def render_task(task: Task, run_id: str | int = "", attempt: int = 1,
                args: dict[str, Any] | None = None, output_dir: str = "",
                checkpoint_dir: str = "") -> list[dict[str, Any]]:
    """The exact manifests this task attempt submits (pure given the rows it reads).

    args: the task's arguments after macro substitution (default: as stored).
    output_dir: the attempt's folder on the outputs volume, mounted as MYAPP_OUTPUT_DIR
    (myapp/outputs/declarations.py).
    checkpoint_dir: the task's folder kept across attempts, mounted as MYAPP_CHECKPOINT_DIR when its template
    checkpoints and the task does not turn it off (myapp/outputs/checkpoints.py)."""
    project = db.session.get(Project, task.project_id)
    pipeline = db.session.get(Pipeline, task.pipeline_id)
    template = db.session.get(JobTemplate, task.template_id)
    if (refusal := pipeline_refusal(template.kind)) is not None:  # a task saved before the rule: fails clearly
        raise ArgumentError("template", refusal)
    group = db.session.get(ResourceGroup, task.resource_group_id) if task.resource_group_id else None
    ctx = RenderContext(project=project.name, namespace=project.namespace, pipeline=pipeline.name, run_id=run_id,
                        task=task.name, attempt=attempt, service_account=project.service_account,
                        resource_group=group_spec(group),
                        api_token_secret=run_token_secret(run_id) if run_id != "" else "", output_dir=output_dir,
                        checkpoint_dir=checkpoint_dir, pull_secrets=pull_secrets(task.project_id))
    if isinstance(run_id, int) and attempt > 1:  # a gang restarted after losing nodes keeps off them
        ctx = replace(ctx, avoid_nodes=lost_nodes(run_id, task.id))
    return render(with_image(template_data(template), task_image(task)), task.args if args is None else args, ctx,
                  task.resources or None)


def lost_nodes(run_id: int, task_id: int) -> tuple[str, ...]:
    """The nodes earlier attempts of the task in this run lost (TaskRun.lost_nodes: evicted, NotReady)."""
    rows = db.session.scalars(sa.select(TaskRun.lost_nodes).where(
        TaskRun.pipeline_run_id == run_id, TaskRun.task_id == task_id, TaskRun.lost_nodes.is_not(None)))
    return tuple(sorted({str(node) for nodes in rows for node in nodes or ()}))[:MAX_AVOIDED_NODES]


def task_image(task: Task) -> str | None:
    """The image the task chose, still one its project may use (it was when the task was saved, but an
    admin may have removed it since: the attempt fails saying so rather than run something else)."""
    if task.image is not None and visible_image(task.image, task.project_id) is None:
        raise ArgumentError("image", f"image {task.image!r} is no longer in the catalog or the project's images")
    return task.image


def preview_task(task: Task) -> list[dict[str, Any]]:
    """The manifests a run of this task would submit, before any run exists: macros are filled as at run
    time, with a sample date and run id and the pipeline's own names and parameter defaults."""
    project = db.session.get(Project, task.project_id)
    pipeline = db.session.get(Pipeline, task.pipeline_id)
    values = macro_values(ds=SAMPLE_VALUES["ds"], run_id=SAMPLE_VALUES["run_id"], pipeline=pipeline.name,
                          project=project.name, task=task.name, params=pipeline.parameters)
    try:
        args = substitute(resolve(task.args, sample_paths(task.args)), values)
        return render_task(task, SAMPLE_VALUES["run_id"], args=args,
                           output_dir=attempt_dir(SAMPLE_VALUES["run_id"], task.name, 1),
                           checkpoint_dir=checkpoints.task_dir(SAMPLE_VALUES["run_id"], task.name))
    except RenderError as exc:
        raise DomainError(f"cannot render task {task.name}: {exc}", kind=Kind.UNPROCESSABLE) from exc


def check_task_inputs(template: JobTemplate, args: dict[str, Any] | None, resources: dict[str, Any] | None,
                      parameters: dict[str, Any] | None = None) -> None:
    """Arguments and resources must fit the template when saved, not fail at run time.

    Raises ArgumentError whose field is `args.<name>` or `resources.<key>`."""
    try:
        # Macros and output references are filled at run time; check the arguments as they will be then.
        samples = SAMPLE_VALUES | {f"params.{k}": str(v) for k, v in (parameters or {}).items()}  # their defaults
        validate_args(template.args_schema, substitute(resolve(args or {}, sample_paths(args)), samples))
        resolve_resources(template.default_resources, template.max_resources, resources or None)
    except ArgumentError as exc:
        field = exc.field if exc.field.startswith("resources") else f"args.{exc.field}"
        raise ArgumentError(field, exc.reason) from None
