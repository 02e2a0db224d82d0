"""Cross-cutting policy applied to every rendered object and pod template.

Kind templates only describe structure; this module is the single place that decides
labels, the env contract, service account, pod security, node placement and gang
scheduling, so no kind can forget one of them. All functions are pure (they mutate only the dicts given).
"""
from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from .context import RenderContext
from .contract import (
    API_TOKEN_SECRET,
    GROUP_NAME_ANNOTATION,
    ISTIO_INJECT_ANNOTATION,
    JOB_NAME_LABEL,
    MANAGED_BY,
    MANAGED_BY_LABEL,
    PIPELINE_LABEL,
    PROJECT_LABEL,
    RUN_LABEL,
    TASK_LABEL,
    TEMPLATE_LABEL,
)
from .names import label_value
from .quantity import GPU_RESOURCE
from .security import container_security, operator_service_account, pod_security

# Node labels set by NVIDIA's feature discovery and the kubelet (not the platform's own).
GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"
HOSTNAME_TOPOLOGY = "kubernetes.io/hostname"
CONTRACT_ENV = ("MYAPP_PROJECT", "MYAPP_PIPELINE", "MYAPP_RUN_ID", "MYAPP_TASK", "MYAPP_ATTEMPT",
                "MYAPP_CPU", "MYAPP_MEMORY", "MYAPP_GPU")
# "?optional": the job starts without it (the generic python template's run token, absent outside a run).
SECRET_REF = re.compile(r"secret://([a-z0-9]([-a-z0-9.]*[a-z0-9])?)/([-._a-zA-Z0-9]+)(\?optional)?")
# Replica-spec maps of the training-operator kinds.
KSERVE = ("serving.kserve.io/v1beta1", "InferenceService")
REPLICA_SPECS = {"PyTorchJob": "pytorchReplicaSpecs", "TFJob": "tfReplicaSpecs",
                 "XGBoostJob": "xgbReplicaSpecs", "MPIJob": "mpiReplicaSpecs"}


class PodTemplate(NamedTuple):
    template: dict[str, Any]
    replicas: int
    path: str  # dotted path of the template inside its object
    has_metadata: bool  # False for Notebook: its CRD pod template has no metadata field


def pod_templates(obj: Mapping[str, Any]) -> Iterator[PodTemplate]:
    """Every pod template inside a manifest, whatever its kind."""
    api, kind, spec = obj.get("apiVersion"), obj.get("kind"), obj.get("spec") or {}
    if (api, kind) in (("batch/v1", "Job"), ("apps/v1", "Deployment")):
        count = spec.get("parallelism" if kind == "Job" else "replicas", 1)
        yield PodTemplate(spec["template"], count, "spec.template", True)
    elif api == "kubeflow.org/v1" and kind in REPLICA_SPECS:
        field = REPLICA_SPECS[kind]
        for rtype, rspec in (spec.get(field) or {}).items():
            yield PodTemplate(rspec["template"], rspec.get("replicas", 1), f"spec.{field}.{rtype}.template", True)
    elif (api, kind) == ("batch.volcano.sh/v1alpha1", "Job"):
        for index, task in enumerate(spec.get("tasks") or []):
            yield PodTemplate(task["template"], task.get("replicas", 1), f"spec.tasks[{index}].template", True)
    elif (api, kind) == ("kubeflow.org/v1", "Notebook"):
        yield PodTemplate(spec["template"], 1, "spec.template", False)
    elif (api, kind) == KSERVE:  # the predictor is a pod spec itself (its labels beside it, no metadata)
        predictor = spec["predictor"]
        yield PodTemplate({"spec": predictor}, predictor.get("minReplicas", 1), "spec.predictor", False)


def replica_names(manifests: Any) -> list[str]:
    """The replicas a training job's manifests declare, named as the training operator and the local
    backend name them ("master-0", "worker-1"): every one, also those that never write a log line
    (DDP's workers often print nothing). Other kinds name their pods at run time: none here."""
    names: list[str] = []
    for obj in manifests if isinstance(manifests, list) else []:
        if not isinstance(obj, Mapping) or obj.get("apiVersion") != "kubeflow.org/v1":
            continue
        field = REPLICA_SPECS.get(str(obj.get("kind")))
        specs = (obj.get("spec") or {}).get(field) if field else None
        for rtype, rspec in (specs or {}).items():
            count = rspec.get("replicas", 1) if isinstance(rspec, Mapping) else 0
            names += [f"{rtype.lower()}-{index}" for index in range(count if isinstance(count, int) else 0)]
    return names


def containers(pod_spec: Mapping[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for group in ("initContainers", "containers"):
        for index, container in enumerate(pod_spec.get(group) or []):
            yield f"{group}[{index}]", container


def common_labels(ctx: RenderContext, template_name: str) -> dict[str, str]:
    return {
        MANAGED_BY_LABEL: MANAGED_BY,
        PROJECT_LABEL: label_value(ctx.project),
        PIPELINE_LABEL: label_value(ctx.pipeline),
        RUN_LABEL: label_value(ctx.run_id),
        TASK_LABEL: label_value(ctx.task),
        TEMPLATE_LABEL: label_value(template_name),
    }


def env_from_template(env: Mapping[str, str], api_token_secret: str = "") -> list[dict[str, Any]]:
    """Template env as container env; ``secret://<secret>/<key>`` becomes a secretKeyRef.

    ``secret://myapp-api-token/<key>`` names the platform API token: bound to ``api_token_secret``
    (the run's own Secret) when given, so a job never mounts a token shared by other runs."""
    out = []
    for name, value in env.items():
        match = SECRET_REF.fullmatch(value)
        if match:
            secret = match.group(1)
            if secret == API_TOKEN_SECRET and api_token_secret:
                secret = api_token_secret
            ref = {"name": secret, "key": match.group(3)} | ({"optional": True} if match.group(4) else {})
            out.append({"name": name, "valueFrom": {"secretKeyRef": ref}})
        else:
            out.append({"name": name, "value": value})
    return out


def contract_env(ctx: RenderContext, limits: Mapping[str, str]) -> list[dict[str, str]]:
    values = (ctx.project, ctx.pipeline, str(ctx.run_id), ctx.task, str(ctx.attempt),
              limits.get("cpu", ""), limits.get("memory", ""), limits.get(GPU_RESOURCE, "0"))
    return [{"name": name, "value": value} for name, value in zip(CONTRACT_ENV, values, strict=True)]


def _pod_gpus(pod_spec: Mapping[str, Any]) -> int:
    return sum(int(c.get("resources", {}).get("limits", {}).get(GPU_RESOURCE, 0)) for _, c in containers(pod_spec))


def _affinity(obj_name: str, gpu_type: str | None, colocate: bool, avoid_nodes: tuple[str, ...] = ()
              ) -> dict[str, Any]:
    affinity: dict[str, Any] = {}
    required = []  # one term: every expression must hold
    if gpu_type:
        required.append({"key": GPU_PRODUCT_LABEL, "operator": "In", "values": [gpu_type]})
    if avoid_nodes:  # lost by an earlier attempt: not chosen again
        required.append({"key": HOSTNAME_TOPOLOGY, "operator": "NotIn", "values": sorted(set(avoid_nodes))})
    if required:
        affinity["nodeAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": required}]}}
    if colocate:
        # Replicas of one job talk to each other constantly: prefer (not require) one node.
        affinity["podAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [{
            "weight": 100,
            "podAffinityTerm": {"labelSelector": {"matchLabels": {JOB_NAME_LABEL: obj_name}},
                                "topologyKey": HOSTNAME_TOPOLOGY},
        }]}
    return affinity


def apply_object_policy(obj: dict[str, Any], ctx: RenderContext, labels: Mapping[str, str]) -> None:
    meta = obj.setdefault("metadata", {})
    meta["namespace"] = ctx.namespace
    meta["labels"] = {**(meta.get("labels") or {}), **labels}  # platform labels win


def apply_pod_policy(obj: dict[str, Any], pod: PodTemplate, ctx: RenderContext, labels: Mapping[str, str],
                     template_env: Mapping[str, str], *, batch: bool, colocate: bool, podgroup: bool,
                     template_name: str) -> None:
    """Labels, annotations, env contract, service account, security and placement for one pod template."""
    name = obj["metadata"]["name"]
    spec = pod.template.pop("spec", None) or {}
    if pod.has_metadata:
        meta = pod.template.setdefault("metadata", {})
        meta["labels"] = {**(meta.get("labels") or {}), **labels, JOB_NAME_LABEL: name}
        annotations = dict(meta.get("annotations") or {})
        if batch:  # a sidecar would keep a finished Job's pod running forever
            annotations[ISTIO_INJECT_ANNOTATION] = "false"
        if podgroup:
            annotations[GROUP_NAME_ANNOTATION] = name
        if annotations:
            meta["annotations"] = annotations
    pod.template["spec"] = spec  # re-inserted so metadata reads first in the YAML
    if (obj.get("apiVersion"), obj.get("kind")) == KSERVE:  # KServe copies these onto the predictor's pods
        spec["labels"] = {**(spec.get("labels") or {}), **labels, JOB_NAME_LABEL: name}
    operator_account = operator_service_account(obj, pod.path)
    spec["serviceAccountName"] = operator_account or ctx.service_account
    # Jobs need no API access; the project's account has none, and no token is even mounted.
    spec["automountServiceAccountToken"] = operator_account is not None
    spec["securityContext"] = pod_security(template_name)
    if podgroup:
        spec["schedulerName"] = "volcano"
    group = ctx.resource_group
    gpus = _pod_gpus(spec)
    if group and group.node_selector:
        spec["nodeSelector"] = {**dict(group.node_selector), **(spec.get("nodeSelector") or {})}
    tolerations = [dict(t) for t in group.tolerations] if group else []
    if gpus:  # GPU nodes are conventionally tainted nvidia.com/gpu:NoSchedule
        tolerations.append({"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"})
    if tolerations:
        spec["tolerations"] = tolerations
    affinity = _affinity(name, group.gpu_type if group and gpus else None, colocate, ctx.avoid_nodes)
    if affinity:
        spec["affinity"] = affinity
    for _, container in containers(spec):
        limits = container.get("resources", {}).get("limits", {})
        own_env = list(container.get("env") or [])  # kind-specific, e.g. the notebook's NB_PREFIX
        container["env"] = contract_env(ctx, limits) + env_from_template(template_env, ctx.api_token_secret) + own_env
        container["securityContext"] = container_security(container.get("securityContext"))
    pull = sorted({ctx.pull_secrets[c["image"]] for _, c in containers(spec) if c.get("image") in ctx.pull_secrets})
    if pull:  # the pod's private images: the kubelet pulls them with these (a Secret each, in the namespace)
        spec["imagePullSecrets"] = [{"name": name} for name in pull]
