"""A file left on a Kubernetes claim (beyond the reader's copy bound), fetched when a download asks for it:
the API answers 202 while the worker's task (myapp.fetch_output) copies it chunk by chunk through reader
pods on the API-server double (which runs their real command: tests/k8s_double/readers.py); then it is
served byte-identical. One fetch at a time per file; a failure is answered once; bounds refused."""
from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest

from myapp.outputs import reader as outputs_reader
from myapp.outputs.reader import ReaderOutputError, chunk_command, parse_chunk
from myapp.rendering.kinds.outputs_reader import FETCH_LABEL
from tests.outputs.test_outputs_claim import claim, finished_make, reader_pods  # noqa: F401 (a fixture)

CHUNK = 1024 * 1024  # smaller chunks: the 6 MiB file takes six readers


def chunk_readers(double) -> list[dict[str, Any]]:
    return [pod for pod in double.readers.seen if FETCH_LABEL in pod["metadata"]["labels"]]


@pytest.fixture()
def world(app, catalog, double, k8s_backend, tmp_path, claim, monkeypatch):  # noqa: F811
    """A finished run on the double whose `make` left model.bin (random bytes, listed) on the claim; the
    worker's backend is the double's; the Celery messages the API sends are recorded."""
    import myapp.tasks  # noqa: F401 (registers myapp.fetch_output)

    monkeypatch.setattr(outputs_reader, "CHUNK_BYTES", CHUNK)
    _run, attempt_id, output_dir = finished_make(app, catalog, double, k8s_backend, tmp_path, claim, monkeypatch)
    body = os.urandom(outputs_reader.COPY_BYTES)
    (claim / str(output_dir) / "model.bin").write_bytes(body)  # the same size as listed
    sent: list[tuple[str, Any]] = []
    celery = app.extensions["celery"]
    monkeypatch.setattr(celery, "send_task", lambda name, args=None, **kw: sent.append((name, args)))
    return {"id": attempt_id, "body": body, "sent": sent, "url": f"/api/v1/task_run/{attempt_id}/output",
            "task": celery.tasks["myapp.fetch_output"]}


def test_a_file_beyond_the_copy_is_fetched_in_chunks_and_served_identical(app, double, admin, world):
    first = admin.get(f"{world['url']}?path=model.bin")
    assert first.status_code == 202, first.get_json()
    assert first.headers["Retry-After"] == "5" and "being fetched" in first.get_json()["message"]
    assert world["sent"] == [("myapp.fetch_output", [world["id"], "model.bin", False])]
    # While it is fetched, asking again starts nothing more.
    again = admin.get(f"{world['url']}?path=model.bin")
    assert again.status_code == 202 and len(world["sent"]) == 1 and chunk_readers(double) == []
    assert admin.request("HEAD", f"{world['url']}?path=model.bin").status_code == 202  # the run view asks with HEAD
    assert len(world["sent"]) == 1

    assert world["task"].apply(args=world["sent"][0][1]).get() is True
    readers = chunk_readers(double)
    assert len(readers) == 6  # 6 MiB in 1 MiB chunks, one reader each
    offsets = [int(pod["spec"]["containers"][0]["command"][-2]) for pod in readers]
    assert sorted(offsets) == [i * CHUNK for i in range(6)]
    assert all(pod["spec"]["containers"][0]["volumeMounts"][0]["readOnly"] for pod in readers)
    assert reader_pods(double) == []  # every reader deleted
    assert admin.request("HEAD", f"{world['url']}?path=model.bin").status_code == 200
    served = admin.get(f"{world['url']}?path=model.bin")
    assert served.status_code == 200 and served.data == world["body"]
    assert len(world["sent"]) == 1
    with app.app_context():
        from myapp.extensions import db
        from myapp.models import Project, TaskRun
        from myapp.outputs import fetch as outputs_fetch
        from myapp.outputs import store as outputs_store

        attempt = db.session.get(TaskRun, world["id"])
        namespace = db.session.get(Project, attempt.project_id).namespace
        marker, part = outputs_fetch._fetch_names(attempt, "model.bin")
        here = outputs_store.root() / namespace
        assert not (here / marker).exists() and not (here / part).exists()
        # the marker and the copy being written live beside the attempt's folder, never inside it
        assert [f["path"] for f in outputs_store.listing(attempt, namespace)] == [
            "data.csv", "metrics.jsonl", "model.bin", "plots/loss.png"]


def test_a_failing_reader_records_its_reason_answered_once(app, double, admin, world):
    double.readers.exit_code = 1
    assert admin.get(f"{world['url']}?path=model.bin").status_code == 202
    assert world["task"].apply(args=world["sent"][0][1]).get() is False
    assert reader_pods(double) == []
    failed = admin.get(f"{world['url']}?path=model.bin")
    assert failed.status_code == 503
    assert "fetching 'model.bin' from the cluster failed" in failed.get_json()["message"]
    assert "outputs reader" in failed.get_json()["message"] and "failed" in failed.get_json()["message"]
    assert len(chunk_readers(double)) == 1  # it stopped at the first failed chunk
    # Nothing half-written is served: the next request starts again.
    retry = admin.get(f"{world['url']}?path=model.bin")
    assert retry.status_code == 202 and len(world["sent"]) == 2
    double.readers.exit_code = None
    assert world["task"].apply(args=world["sent"][1][1]).get() is True
    assert admin.get(f"{world['url']}?path=model.bin").data == world["body"]


def test_a_file_beyond_the_fetch_bound_is_refused(admin, world, monkeypatch):
    monkeypatch.setenv("MYAPP_OUTPUTS_CLAIM_FETCH_BYTES", str(outputs_reader.COPY_BYTES - 1))
    refused = admin.get(f"{world['url']}?path=model.bin")
    assert refused.status_code == 422 and "MYAPP_OUTPUTS_CLAIM_FETCH_BYTES" in refused.get_json()["message"]
    assert "/myapp/outputs/" in refused.get_json()["message"] and world["sent"] == []
    assert admin.get(f"{world['url']}?path=absent.bin").status_code == 404 and world["sent"] == []


def run_chunk(path, offset: int, length: int) -> list[str]:
    argv = chunk_command(str(path), offset, length)
    argv[0] = sys.executable
    return subprocess.run(argv, capture_output=True, timeout=60, check=True).stdout.decode().splitlines()


def test_chunks_are_bounded_checked_and_cover_the_file(tmp_path):
    body = os.urandom(10_000)
    (tmp_path / "f.bin").write_bytes(body)
    parts = [parse_chunk(run_chunk(tmp_path / "f.bin", start, 4096), start, 4096) for start in (0, 4096, 8192)]
    assert b"".join(p.data for p in parts) == body and {p.size for p in parts} == {10_000}
    lines = run_chunk(tmp_path / "f.bin", 0, 4096)
    with pytest.raises(ReaderOutputError, match="checksum"):
        parse_chunk([lines[0], base64_of(b"x" * 4096), lines[-1]], 0, 4096)
    with pytest.raises(ReaderOutputError, match="cut short"):
        parse_chunk(lines[:-1], 0, 4096)
    with pytest.raises(ReaderOutputError, match="malformed"):
        parse_chunk(lines, 4096, 4096)  # not the offset asked for
    for offset, length in ((0, 0), (-1, 10), (0, outputs_reader.CHUNK_BYTES + 1)):
        with pytest.raises(ValueError):
            chunk_command("/outputs/x", offset, length)
    os.symlink(tmp_path / "f.bin", tmp_path / "link.bin")
    argv = chunk_command(str(tmp_path / "link.bin"), 0, 10)
    argv[0] = sys.executable
    assert subprocess.run(argv, capture_output=True, timeout=60, check=False).returncode == 3


def base64_of(data: bytes) -> str:
    import base64

    return base64.b64encode(data).decode()
