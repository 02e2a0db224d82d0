"""The beat process's Kubernetes watches (myapp/tasks.watch_clusters): a run whose Job changes on a
cluster is requested at once, through the one-pending-request rule (myapp/shared/reconcile_requests.py)."""
from __future__ import annotations

import threading

from tests.pipelines.support import make_pipeline
from tests.support import unique, wait_until


class Sent(list):
    """A Celery app's send_task, recorded."""

    def send_task(self, name, args=None, queue=None, **_):
        self.append((name, tuple(args or ()), queue))


def test_a_changed_job_requests_its_run_once(app, catalog, double, monkeypatch):
    from myapp.backends.kubernetes import KubernetesBackend
    from myapp.extensions import db
    from myapp.models import Cluster, ClusterKind, PipelineRun
    from myapp.rendering.contract import MANAGED_BY, MANAGED_BY_LABEL, RUN_LABEL
    from myapp.shared.reconcile_requests import BACKGROUND_QUEUE, RECONCILE
    from myapp.tasks import watch_clusters
    from tests.k8s_double.support import NS, make_backend

    run_id, _ = make_pipeline(app, catalog, {"a": {}}, [])
    other_id, _ = make_pipeline(app, catalog, {"a": {}}, [])
    with app.app_context():
        db.session.add(Cluster(name=unique("k8s"), kind=ClusterKind.KUBERNETES, kube_context="double"))
        db.session.commit()
    monkeypatch.setattr(KubernetesBackend, "from_cluster", classmethod(lambda cls, cluster: make_backend(double)))
    sent, stop = Sent(), threading.Event()
    loop = threading.Thread(target=watch_clusters, args=(app, sent, stop), daemon=True)
    loop.start()

    def put(name: str, run: int) -> None:
        double.put({"apiVersion": "batch/v1", "kind": "Job",
                    "metadata": {"name": name, "namespace": NS,
                                 "labels": {MANAGED_BY_LABEL: MANAGED_BY, RUN_LABEL: str(run)}},
                    "spec": {"template": {"spec": {"containers": [{"name": "main", "image": "python:3.11"}]}}}})
    try:
        wait_until(lambda: double.open_streams("watch") >= 1, what="the cluster watched")
        put("first", run_id)
        wait_until(lambda: sent == [(RECONCILE, (run_id,), BACKGROUND_QUEUE)], what="the run requested")
        put("second", run_id)  # its request is still pending: no second message
        put("other", other_id)  # after it on the same watch: once this one is requested, that one was seen
        wait_until(lambda: len(sent) == 2, what="the other run requested")
        assert sent == [(RECONCILE, (run_id,), BACKGROUND_QUEUE), (RECONCILE, (other_id,), BACKGROUND_QUEUE)]
        with app.app_context():
            assert db.session.get(PipelineRun, run_id).reconcile_requested_at is not None
    finally:
        stop.set()
        loop.join(10)
    assert not loop.is_alive()
    wait_until(lambda: double.open_streams("watch") == 0, what="the watches closed")
