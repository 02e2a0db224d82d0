"""Fixtures of the image tests shared by modules: the package index every environment build here installs
from, and a resource group on a Kubernetes cluster (the double)."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.images.test_task_environment import PACKAGE, VERSION
from tests.support import package_index, publish, unique
from tests.world import created


@pytest.fixture(scope="session")
def served_index(tmp_path_factory) -> Iterator[tuple[str, Path]]:
    """A package index on 127.0.0.1 (one per test process) with `six` 1.17.0 (a stand-in) and the probe
    package of test_task_environment (`VALUE == "from-the-wheel"`)."""
    folder = tmp_path_factory.mktemp("index")
    publish(folder, "six", "1.17.0", "1.17.0")
    publish(folder, PACKAGE, "from-the-wheel", VERSION)
    with package_index(folder) as url:
        yield url, folder


@pytest.fixture(autouse=True)
def pip_index(served_index, monkeypatch) -> Path:
    """No build here installs from the network: PIP_INDEX_URL, which builds pass to pip, is the local index.
    Returns its folder (tests.support.publish adds a wheel)."""
    url, folder = served_index
    monkeypatch.setenv("PIP_INDEX_URL", url)
    return folder


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
