"""This machine as `myapp init` registers it (a local cluster and its default resource group of the machine's
CPUs, memory and GPUs), and the usage report counting there what runs without a resource group: attempts,
started notebooks and model servers, per project (myapp/admission/usage.py), as the group's detail does
(myapp/admission/report.py)."""
from __future__ import annotations

import os

import sqlalchemy as sa

from tests.pipelines.support import make_pipeline


def test_init_registers_this_machine_once_with_its_real_capacity(app):
    from myapp.backends.local.gpu import nvml_devices
    from myapp.extensions import db
    from myapp.models import Cluster, ResourceGroup
    from myapp.setup_data import ensure_local_cluster

    with app.app_context():
        group = ensure_local_cluster()
        assert group.cluster.name == "local" and group.cluster.kind.value == "local" and group.name == "default"
        assert group.cpu_millicores == (os.cpu_count() or 1) * 1000
        assert group.memory_bytes == os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        assert group.gpus == len(nvml_devices())
        group.cpu_millicores = 2000  # an admin's change stays
        db.session.commit()
        again = ensure_local_cluster()
        assert again.id == group.id and again.cpu_millicores == 2000
        # once: other tests of this database add clusters of their own, never a second 'local'
        assert db.session.scalar(sa.select(sa.func.count()).select_from(Cluster).filter_by(name="local")) == 1
        assert db.session.scalar(sa.select(sa.func.count()).select_from(ResourceGroup)
                                 .filter_by(cluster_id=group.cluster_id)) == 1


def test_work_without_a_resource_group_counts_in_the_machines_default_group(app, admin, catalog):
    from myapp.extensions import db
    from myapp.models import (
        InferenceService,
        ModelVersion,
        Notebook,
        NotebookState,
        Project,
        ServiceState,
        TaskRun,
        TaskState,
    )
    from myapp.setup_data import ensure_local_cluster

    run_id, tasks = make_pipeline(app, catalog, {"train": {}}, [])
    container = {"name": "c", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}
    job = {"kind": "Job", "spec": {"template": {"spec": {"containers": [container]}}}}
    ref = {"backend": "local", "namespace": "ns", "job_name": "j"}
    with app.app_context():
        group = ensure_local_cluster()
        project_id = db.session.scalar(sa.select(Project.id).order_by(Project.id.desc()).limit(1))
        db.session.add(TaskRun(project_id=project_id, pipeline_run_id=run_id, task_id=tasks["train"], attempt=1,
                               state=TaskState.RUNNING, manifests=[job]))
        db.session.add(Notebook(project_id=project_id, name="nb", image="python:3.11", state=NotebookState.RUNNING,
                                resources={"cpu": "1", "memory": "2Gi"}, job={"ref": ref}))
        version = ModelVersion(project_id=project_id, name="m", version=1, uri="/tmp/m.pt")
        db.session.add(version)
        db.session.flush()
        db.session.add(InferenceService(project_id=project_id, name="svc", model_version_id=version.id,
                                        state=ServiceState.RUNNING, min_replicas=2, resources={"cpu": "2"},
                                        jobs={f"v{version.id}": ref, "router": ref}))
        db.session.commit()
        group_id = group.id

    report = admin.get("/api/v1/quota/usage").get_json()["items"]
    assert all(e["resource_group_id"] is not None for e in report)  # nothing left as "(no resource group)"
    (entry,) = [e for e in report if e["resource_group_id"] == group_id]
    assert entry["name"] == "default"
    (mine,) = [p for p in entry["projects"] if p["project_id"] == project_id]
    assert mine["running"] == {"tasks": 1, "notebooks": 1, "services": 1}
    # 0.5 (the attempt) + the notebook's rendered pod + 2 replicas x 2 CPUs of the model server
    assert mine["used"]["cpu_millicores"] == 500 + 1000 + 4000, mine
    # memory: the server takes the serving template's default (2Gi) where the service names none
    assert mine["used"]["memory_bytes"] == 2**30 + 2 * 2**30 + 2 * 2 * 2**30, mine
    # the group's total is its projects' (other tests of this database may run work there too)
    assert all(entry["used"][k] == sum(p["used"][k] for p in entry["projects"]) for k in mine["used"])

    # The group's detail counts the same work: the attempt among its running ones, and each project's use.
    status = admin.get(f"/api/v1/resource_group/{group_id}/status").get_json()
    (attempt,) = [r for r in status["running"] if r["project"] == mine["project"]]
    assert attempt["cpu_millicores"] == 500 and attempt["task"] == "train"
    (detail,) = [p for p in status["projects"] if p["project_id"] == project_id]
    assert detail["project"] == mine["project"] and detail["used"] == mine["used"], (detail, mine)
    assert all(status["used"][k] >= mine["used"][k] for k in mine["used"])
