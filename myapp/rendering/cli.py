"""``myapp render``: preview the manifests a task would submit, as multi-document YAML.

A plain click command (no Flask app needed); the main ``myapp`` CLI attaches it with
``cli.add_command(render_command)``. Also runnable as ``python -m myapp.rendering.cli``.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import yaml

from .context import RenderContext, ResourceGroup
from .contract import run_token_secret
from .errors import RenderError
from .image_choice import with_image
from .render import render


def _parse_sets(pairs: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--set")
        out[key] = value
    return out


def _json_object(text: str | None, option: str) -> dict[str, Any]:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise click.BadParameter(f"not valid JSON: {exc}", param_hint=option) from None
    if not isinstance(value, dict):
        raise click.BadParameter("must be a JSON object", param_hint=option)
    return value


@click.command("render")
@click.argument("template")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Set one argument (repeatable).")
@click.option("--args", "args_json", metavar="JSON", help="Arguments as a JSON object (--set wins).")
@click.option("--project", default="demo", show_default=True)
@click.option("--namespace", default="demo", show_default=True)
@click.option("--pipeline", default="", help="Pipeline name.")
@click.option("--run-id", default="", help="Run id.")
@click.option("--task", default="", help="Task name (default: the template name).")
@click.option("--attempt", default=1, show_default=True, type=click.IntRange(min=1))
@click.option("--service-account", default="project-runner", show_default=True,
              help="The project's service account.")
@click.option("--cpu", default=None, help="CPU per pod, e.g. 2 or 500m.")
@click.option("--memory", default=None, help="Memory per pod, e.g. 4Gi.")
@click.option("--gpu", default=None, help="GPUs per pod.")
@click.option("--resource-group", "group_json", metavar="JSON",
              help='e.g. {"name": "a100", "node_selector": {...}, "gpu_type": "...", '
                   '"queue": "q", "gang_scheduling": true}')
@click.option("--image", default=None, metavar="REPOSITORY:TAG",
              help="The image a task chose instead of the template's (templates running user code only).")
@click.option("--catalog-root", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Job template folder (default: MYAPP_CATALOG_ROOT or the repo's job-templates/).")
def render_command(template: str, sets: tuple[str, ...], args_json: str | None, project: str, namespace: str,
                   pipeline: str, run_id: str, task: str, attempt: int, service_account: str,
                   cpu: str | None, memory: str | None, gpu: str | None, group_json: str | None,
                   image: str | None, catalog_root: Path | None) -> None:
    """Print the manifests TEMPLATE renders to, as multi-document YAML."""
    from myapp.rendering.catalog import get_template  # late import: the catalog is only needed here

    args = {**_json_object(args_json, "--args"), **_parse_sets(sets)}
    resources = {k: v for k, v in (("cpu", cpu), ("memory", memory), ("gpu", gpu)) if v is not None}
    group_fields = _json_object(group_json, "--resource-group")
    try:
        group = ResourceGroup(**group_fields) if group_fields else None
    except TypeError as exc:
        raise click.BadParameter(str(exc), param_hint="--resource-group") from None
    try:
        spec = get_template(template, catalog_root)
        ctx = RenderContext(project=project, namespace=namespace, pipeline=pipeline, run_id=run_id,
                            task=task or template, attempt=attempt, service_account=service_account,
                            resource_group=group,
                            # as the run would: its token Secret (myapp.rendering.contract.run_token_secret)
                            api_token_secret=run_token_secret(run_id) if run_id.isdigit() else "")
        manifests = render(with_image(spec, image), args, ctx, resources or None)
    except (RenderError, ValueError, LookupError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(yaml.safe_dump_all(manifests, sort_keys=False, explicit_start=True, allow_unicode=True), nl=False)


if __name__ == "__main__":
    render_command()
