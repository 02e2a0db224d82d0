"""A running attempt on a cluster the beat watches is polled only as a safety net (WATCHED_POLL): its
changes request the run as they happen (myapp/tasks.watch_clusters). Without a fresh mark in the shared
cache (no beat, or its watch down) the short polls stand."""
from __future__ import annotations

import datetime as dt

import pytest

from tests.pipelines.support import make_pipeline
from tests.support import unique


@pytest.mark.parametrize("watched", [True, False])
def test_next_look_of_a_watched_cluster_is_the_safety_net(app, catalog, double, k8s_backend, watched):
    from myapp.extensions import cache, db
    from myapp.models import Cluster, ClusterKind, PipelineRun, ResourceGroup
    from myapp.pipelines.controller import RunController
    from myapp.pipelines.timers import POLL_MAX, WATCHED_POLL

    with app.app_context():
        cluster = Cluster(name=unique("c"), kind=ClusterKind.KUBERNETES, in_cluster=True)
        db.session.add(cluster)
        db.session.flush()
        group = ResourceGroup(name=unique("g"), cluster_id=cluster.id)
        db.session.add(group)
        db.session.commit()
        group_id = group.id
    k8s_backend.watch_key = unique("kubernetes-watch:")
    run_id, _ = make_pipeline(app, catalog, {"a": {"resource_group_id": group_id, "args": {"command": "echo a"}}}, [])
    controller = RunController(lambda task: k8s_backend)
    with app.app_context():
        if watched:
            cache.set(k8s_backend.watch_key, 1.0, timeout=30)
        controller.reconcile(run_id)  # submits a; the double's Job has no status yet: pending
        controller.reconcile(run_id)
        run = db.session.get(PipelineRun, run_id)
        wait = (run.next_reconcile_at.replace(tzinfo=dt.UTC) - dt.datetime.now(dt.UTC)).total_seconds()
        assert run.state.value == "running"
    if watched:
        assert POLL_MAX < wait <= WATCHED_POLL  # not the short polls: the safety net
    else:
        assert wait <= POLL_MAX
