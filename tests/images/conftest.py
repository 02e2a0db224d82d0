"""Fixtures of the image tests shared by modules: a resource group on a Kubernetes cluster (the double)."""
from __future__ import annotations

import pytest

from tests.support import unique
from tests.world import created


@pytest.fixture()
def kubernetes_group(admin, k8s_backend):
    """A resource group on a Kubernetes cluster whose backend is the real one, on the API-server double."""
    from myapp.backends import registry

    cluster = created(admin.post("/api/v1/cluster/", json={"name": unique("k8s"), "kind": "kubernetes",
                                                          "kube_context": "double"}))
    group = created(admin.post("/api/v1/resource_group/", json={"name": unique("builds"), "cluster_id": cluster["id"],
                                                                "cpu": "8", "memory": "16Gi", "gpus": 0}))
    registry._backends[("cluster", cluster["id"])] = k8s_backend
    yield group["id"]
    registry._backends.pop(("cluster", cluster["id"]), None)
