"""Where a resource group's capacity comes from: its node list, else its totals, else (a local cluster) the
machine's CPUs, memory and GPUs; a Kubernetes group with no capacity given is not gated."""
from __future__ import annotations

import os

import pytest

from myapp.admission import group_state
from myapp.backends.local.gpu import GpuDevice
from myapp.models import Cluster, ClusterKind, ResourceGroup
from myapp.scheduler.model import Node


def group(kind=ClusterKind.LOCAL, **fields):
    return ResourceGroup(name="rg", cluster=Cluster(name="c", kind=kind),
                         **{"nodes": [], "gpus": 0, "cpu_millicores": 0, "memory_bytes": 0} | fields)


@pytest.fixture()
def two_gpus(monkeypatch):
    monkeypatch.setattr(group_state, "nvml_devices", lambda: [GpuDevice(0, "GPU-a"), GpuDevice(1, "GPU-b")])
    group_state.machine_node.cache_clear()
    yield
    group_state.machine_node.cache_clear()


def test_a_local_group_without_capacity_is_the_machine(two_gpus):
    (node,) = group_state.nodes_of(group())
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert node == Node("local", 2, cpu=float(os.cpu_count()), memory=float(memory))


def test_listed_nodes_then_totals_then_nothing(two_gpus):
    listed = group(nodes=[{"name": "a", "gpus": 8, "cpu_millicores": 64000, "memory_bytes": 2**38},
                          {"name": "b", "gpus": 4}])
    assert group_state.nodes_of(listed) == [Node("a", 8, cpu=64.0, memory=2.0**38), Node("b", 4)]
    assert group_state.nodes_of(group(gpus=4, cpu_millicores=1500)) == [Node("rg", 4, cpu=1.5)]
    assert group_state.nodes_of(group(ClusterKind.KUBERNETES)) == []  # unknown: not gated
