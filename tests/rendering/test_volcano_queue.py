"""A resource group as a Volcano Queue, and its gangs' PodGroups in it: pure rendering, strict-valid against
the upstream CRDs (myapp/rendering/crds)."""
from __future__ import annotations

import copy
import dataclasses

import pytest

from myapp.rendering import ContextError, ManifestError, RenderContext, render, validate_manifest
from myapp.rendering.contract import GROUP_NAME_ANNOTATION, MANAGED_BY_LABEL, PRIORITY_CLASS, RESOURCE_GROUP_LABEL
from myapp.rendering.pod import pod_templates
from myapp.rendering.volcano_queue import Amount, QuotaShare, VolcanoQueue, queue_spec, render_queue
from tests.rendering.support import GANG_ARGS, GANG_CTX, GPU_GROUP, PLAIN_CTX, catalog

GIB = 2**30
CAPACITY = Amount(gpus=16, cpu_millicores=64_000, memory_bytes=256 * GIB)


def test_queue_capability_is_the_group_and_deserved_weight_come_from_quotas():
    spec = queue_spec("vision-gpu", "a100-pool", CAPACITY, [
        QuotaShare(Amount(8, 16_000, 64 * GIB)), QuotaShare(Amount(4, 8_000, 32 * GIB), can_borrow=False)])
    queue = render_queue(spec)
    validate_manifest(queue)
    assert queue["apiVersion"] == "scheduling.volcano.sh/v1beta1" and queue["kind"] == "Queue"
    assert "namespace" not in queue["metadata"]  # cluster-scoped
    assert queue["metadata"]["labels"] == {MANAGED_BY_LABEL: "myapp", RESOURCE_GROUP_LABEL: "a100-pool"}
    assert queue["spec"] == {
        "weight": 12, "reclaimable": True,
        "capability": {"cpu": "64", "memory": "256Gi", "nvidia.com/gpu": "16"},
        "deserved": {"cpu": "24", "memory": "96Gi", "nvidia.com/gpu": "12"},
    }


def test_quotas_beyond_the_capacity_deserve_only_the_capacity_and_no_borrowing_is_not_reclaimable():
    spec = queue_spec("q", "g", CAPACITY, [QuotaShare(Amount(40, 100_000, 10 * GIB), can_borrow=False)])
    assert spec.deserved == Amount(16, 64_000, 10 * GIB)
    assert spec.weight == 16 and spec.reclaimable is False
    assert render_queue(spec)["spec"]["reclaimable"] is False


def test_a_group_without_gpus_weighs_by_cpu_cores_and_unset_capacity_is_unbounded():
    spec = queue_spec("cpu-pool", "cpu-pool", Amount(0, 32_000, 0), [QuotaShare(Amount(0, 6_500, 0))])
    assert spec.weight == 6
    queue = render_queue(spec)
    validate_manifest(queue)
    assert queue["spec"] == {"weight": 6, "reclaimable": True, "capability": {"cpu": "32"},
                             "deserved": {"cpu": "6500m"}}
    bare = render_queue(queue_spec("open", "open", Amount(), []))
    validate_manifest(bare)
    assert bare["spec"] == {"weight": 1, "reclaimable": True}  # no quota: weight 1, nothing bounded


def test_weight_is_held_to_the_crd_bound():
    spec = queue_spec("big", "big", Amount(100_000, 0, 0), [QuotaShare(Amount(90_000, 0, 0))])
    assert spec.weight == 65535
    validate_manifest(render_queue(spec))


@pytest.mark.parametrize(("change", "field"), [
    ({"name": "default"}, "resource_group.volcano_queue.name"),  # Volcano's own queue is never rendered
    ({"name": "Not_A_Name"}, "resource_group.volcano_queue.name"),
    ({"group": "bad group"}, "resource_group.volcano_queue.group"),
    ({"weight": 0}, "resource_group.volcano_queue.weight"),
    ({"capability": Amount(-1, 0, 0)}, "resource_group.volcano_queue.capability"),
])
def test_bad_queue_data_is_refused_naming_the_field(change, field):
    spec = dataclasses.replace(queue_spec("q", "g", CAPACITY, []), **change)
    with pytest.raises(ContextError) as info:
        render_queue(spec)
    assert info.value.field == field


def test_the_crd_refuses_what_the_template_must_never_write():
    queue = render_queue(queue_spec("q", "g", CAPACITY, []))
    for mutate, where in ((lambda q: q["spec"].update(weight=0), "spec.weight"),
                          (lambda q: q["spec"].update(capabilty={}), "spec"),
                          (lambda q: q["spec"]["capability"].update(cpu="lots"), "spec.capability.cpu")):
        bad = copy.deepcopy(queue)
        mutate(bad)
        with pytest.raises(ManifestError) as info:
            validate_manifest(bad)
        assert info.value.path == where


def gang_ctx(queue: VolcanoQueue | None) -> RenderContext:
    return dataclasses.replace(GANG_CTX, resource_group=dataclasses.replace(GPU_GROUP, volcano_queue=queue))


@pytest.mark.parametrize("template", ["pytorch-ddp", "tf-distributed", "horovod-mpi", "python"])
def test_a_gang_renders_its_queue_first_then_its_podgroup_in_it(template):
    spec = queue_spec(GPU_GROUP.queue, GPU_GROUP.name, CAPACITY, [QuotaShare(Amount(8, 0, 0))])
    manifests = render(catalog()[template], GANG_ARGS.get(template, {}), gang_ctx(spec))
    assert manifests[0] == render_queue(spec)
    group = manifests[1]
    assert group["kind"] == "PodGroup"
    assert group["spec"]["queue"] == GPU_GROUP.queue and group["spec"]["priorityClassName"] == PRIORITY_CLASS
    pods = [pod for obj in manifests[2:] for pod in pod_templates(obj)]
    assert group["spec"]["minMember"] == sum(pod.replicas for pod in pods)  # every replica: the whole gang
    for pod in pods:
        assert pod.template["spec"]["schedulerName"] == "volcano"
        assert pod.template["metadata"]["annotations"][GROUP_NAME_ANNOTATION] == group["metadata"]["name"]


def test_no_queue_without_a_podgroup_or_without_queue_data():
    spec = queue_spec(GPU_GROUP.queue, GPU_GROUP.name, CAPACITY, [])
    without = render(catalog()["pytorch-ddp"], GANG_ARGS["pytorch-ddp"], gang_ctx(None))
    assert without[0]["kind"] == "PodGroup"
    plain_group = dataclasses.replace(GPU_GROUP, gang_scheduling=False, volcano_queue=spec)
    plain = render(catalog()["pytorch-ddp"], {}, dataclasses.replace(PLAIN_CTX, resource_group=plain_group))
    assert not [m for m in plain if m["kind"] in ("Queue", "PodGroup")]
    native = render(catalog()["volcano-job"], GANG_ARGS["volcano-job"], gang_ctx(spec))
    assert [m["kind"] for m in native] == ["Job"]  # a Volcano Job gangs itself (queue in its own spec)


def test_the_queue_must_be_the_groups_queue():
    spec = queue_spec("other", GPU_GROUP.name, CAPACITY, [])
    with pytest.raises(ContextError) as info:
        render(catalog()["pytorch-ddp"], {}, gang_ctx(spec))
    assert info.value.field == "resource_group.volcano_queue.name"
