"""A resource group's Volcano Queue through the real client against the API-server double: created before the
group's first gang, adopted by the next (409) without a write, brought to a changed spec (PUT),
kept when a job is cancelled or cleaned up; the PodGroup comes and goes with its job."""
from __future__ import annotations

import dataclasses

import pytest

from myapp.backends.archive import FileLogArchive
from myapp.backends.base import InvalidManifest, PermanentBackendError
from myapp.rendering import render
from myapp.rendering.contract import PRIORITY_CLASS
from myapp.rendering.volcano_queue import Amount, QuotaShare, queue_spec
from tests.k8s_double.support import NS, make_backend
from tests.rendering.support import GANG_ARGS, GANG_CTX, GPU_GROUP, catalog

QUEUE = ("scheduling.volcano.sh/v1beta1", "Queue")
PODGROUP = ("scheduling.volcano.sh/v1beta1", "PodGroup")
CAPACITY = Amount(gpus=16, cpu_millicores=64_000, memory_bytes=256 * 2**30)


def gang(run_id: int = 43, quotas: tuple[QuotaShare, ...] = (QuotaShare(Amount(8, 0, 0)),),
         capacity: Amount = CAPACITY) -> list[dict]:
    spec = queue_spec(GPU_GROUP.queue, GPU_GROUP.name, capacity, quotas)
    ctx = dataclasses.replace(GANG_CTX, run_id=run_id,
                              resource_group=dataclasses.replace(GPU_GROUP, volcano_queue=spec))
    return render(catalog()["pytorch-ddp"], GANG_ARGS["pytorch-ddp"], ctx)


def stored_queue(double) -> dict | None:
    return double.get(*QUEUE, "", GPU_GROUP.queue)


def test_the_queue_is_created_cluster_scoped_before_the_podgroup_and_is_not_the_jobs(double, k8s_backend):
    manifests = gang()
    ref = k8s_backend.submit(manifests)
    queue = stored_queue(double)
    assert queue is not None and queue["spec"] == manifests[0]["spec"]
    assert "namespace" not in queue["metadata"]
    posts = [r.path for r in double.requests_matching("POST", ".")]
    assert posts[0] == "/apis/scheduling.volcano.sh/v1beta1/queues"  # first, no namespace in the path
    assert "/namespaces/" + NS + "/podgroups" in posts[1]
    group = double.get(*PODGROUP, NS, ref.primary.name)
    assert group["spec"]["queue"] == GPU_GROUP.queue and group["spec"]["priorityClassName"] == PRIORITY_CLASS
    assert group["spec"]["minMember"] == 4  # master + 3 workers
    assert "Queue" not in [o.kind for o in ref.objects]


def test_resubmit_and_the_next_job_of_the_group_adopt_the_queue_without_a_write(double, k8s_backend):
    k8s_backend.submit(gang(43))
    queue_version = stored_queue(double)["metadata"]["resourceVersion"]
    k8s_backend.submit(gang(43))  # the same attempt again (a worker killed between submit and commit)
    k8s_backend.submit(gang(44))  # another job in the group
    assert stored_queue(double)["metadata"]["resourceVersion"] == queue_version
    assert not double.requests_matching("PUT", "queues")
    assert len(double.requests_matching("POST", "queues")) == 3  # 1 created + 2 answered 409
    assert len(double.list(*PODGROUP, NS)) == 2


def test_a_changed_quota_or_capacity_is_merged_into_the_queue(double, k8s_backend):
    k8s_backend.submit(gang(43))
    k8s_backend.submit(gang(44, quotas=(QuotaShare(Amount(12, 0, 0), can_borrow=False),)))
    spec = stored_queue(double)["spec"]
    assert spec["weight"] == 12 and spec["reclaimable"] is False and spec["deserved"] == {"nvidia.com/gpu": "12"}
    # The quotas are gone: `deserved` is no longer rendered, so it is removed, not left as it was.
    k8s_backend.submit(gang(45, quotas=(), capacity=Amount(gpus=8)))
    spec = stored_queue(double)["spec"]
    assert "deserved" not in spec and spec["capability"] == {"nvidia.com/gpu": "8"} and spec["weight"] == 1
    assert len(double.requests_matching("PUT", "queues")) == 2


def test_cancel_and_cleanup_delete_the_podgroup_and_keep_the_queue(double, k8s_backend, tmp_path):
    first, second = k8s_backend.submit(gang(43)), k8s_backend.submit(gang(44))
    k8s_backend.cancel(first)
    assert double.get(*PODGROUP, NS, first.primary.name) is None
    k8s_backend.cleanup(second, FileLogArchive(tmp_path))
    assert double.get(*PODGROUP, NS, second.primary.name) is None
    assert stored_queue(double) is not None
    assert "Queue" not in {d.kind for d in double.deletions}


def test_a_queue_the_api_server_refuses_is_a_permanent_error_and_nothing_else_is_created(double, k8s_backend):
    manifests = gang()
    manifests[0]["spec"]["weight"] = 0  # below the CRD's minimum
    with pytest.raises(InvalidManifest, match="weight"):
        k8s_backend.submit(manifests)
    assert double.store.objects == {}


def test_a_queue_with_a_namespace_is_refused_before_sending(double, k8s_backend):
    manifests = gang()
    manifests[0]["metadata"]["namespace"] = NS
    with pytest.raises(InvalidManifest, match="cluster-scoped"):
        k8s_backend.submit(manifests)
    assert not double.requests


def test_dry_run_stores_no_queue(double, sleeps):
    dry = make_backend(double, sleeps, dry_run=True)
    dry.submit(gang())
    assert stored_queue(double) is None
    assert double.requests_matching("POST", "queues")[0].query.get("dryRun") == "All"
    dry.close()


def test_a_lost_answer_of_the_queue_create_is_adopted_on_retry(double, k8s_backend, sleeps):
    # the server creates the Queue but the answer never arrives: the retry gets 409 -> adopt, no patch
    double.inject_fault("POST", r"/queues$", hang=3, process=True)
    k8s_backend.submit(gang())
    assert stored_queue(double) is not None
    assert len(double.requests_matching("POST", r"/queues$")) == 2 and len(sleeps) == 1
    assert not double.requests_matching("PUT", "queues")


def test_a_queue_changed_between_read_and_replace_is_read_again(double, k8s_backend):
    k8s_backend.submit(gang(43))
    # another worker's replace lands between this one's read and its replace: the first PUT is a 409 Conflict
    original = k8s_backend.api.get_cluster

    def read_then_race(*args):
        seen = original(*args)
        if not double.requests_matching("PUT", "queues"):
            double.patch_metadata(*QUEUE, "", GPU_GROUP.queue, {"labels": {"team": "ops"}})
        return seen

    k8s_backend.api.get_cluster = read_then_race
    k8s_backend.submit(gang(44, quotas=(QuotaShare(Amount(2, 0, 0)),)))
    queue = stored_queue(double)
    assert queue["spec"]["weight"] == 2
    assert queue["metadata"]["labels"]["team"] == "ops"  # the other change is kept, not overwritten
    assert len(double.requests_matching("PUT", "queues")) == 2  # the first answered 409


def test_an_account_without_the_queue_grant_fails_at_once_saying_what_to_grant(double, k8s_backend, sleeps):
    double.inject_fault("POST", r"/queues$", status=403)
    with pytest.raises(PermanentBackendError, match="grants its worker account create, get and update") as raised:
        k8s_backend.submit(gang())
    assert "install/components/volcano" in str(raised.value) and PRIORITY_CLASS in str(raised.value)
    assert not sleeps and double.store.objects == {}  # not retried, and no job without its queue
