"""Previews of files left on a Kubernetes claim (beyond the reader's copy bound): listed with their real preview
kind and `on_claim`; a text preview answers 202 while the worker reads only the file's first 64 KiB (one
reader pod, on the API-server double: tests/k8s_double/readers.py), kept apart from the file, so a later
download still fetches it whole; an image is fetched whole to be shown. Failures are answered once."""
from __future__ import annotations

import os
from typing import Any

import pytest

from myapp.outputs import reader as outputs_reader
from myapp.outputs.store import PREVIEW_BYTES
from myapp.rendering.kinds.outputs_reader import FETCH_LABEL
from tests.outputs import test_outputs_claim
from tests.outputs.test_outputs_claim import claim, finished_make, reader_pods  # noqa: F401 (a fixture)

COPY = 64 * 1024  # the end-of-attempt copy's bound here: the log and the big image stay on the claim
CHUNK = 128 * 1024  # a download's chunks here: the log takes three readers
LOG = b"".join(f"step {i} loss {1 / (i + 1):.6f}\n".encode() for i in range(14_000))  # ~300 KiB of text
BIG_PNG = b"\x89PNG\r\n\x1a\n" + os.urandom(100 * 1024)


def readers_for(double, purpose: str) -> list[dict[str, Any]]:
    return [pod for pod in double.readers.seen if pod["metadata"]["labels"].get(FETCH_LABEL) == purpose]


@pytest.fixture()
def world(app, catalog, double, k8s_backend, tmp_path, claim, monkeypatch):  # noqa: F811
    """A finished run on the double whose `make` also wrote train.log and plots/big.png, both left on the
    claim; the worker's backend is the double's; the Celery messages the API sends are recorded."""
    import myapp.tasks  # noqa: F401 (registers myapp.fetch_output)

    assert len(LOG) > 4 * PREVIEW_BYTES and len(LOG) > 2 * CHUNK
    write = test_outputs_claim.write_outputs

    def write_more(folder):
        write(folder)
        (folder / "train.log").write_bytes(LOG)
        (folder / "plots" / "big.png").write_bytes(BIG_PNG)

    monkeypatch.setattr(test_outputs_claim, "write_outputs", write_more)
    monkeypatch.setattr(outputs_reader, "COPY_BYTES", COPY)
    monkeypatch.setattr(outputs_reader, "CHUNK_BYTES", CHUNK)
    run_id, attempt_id, _folder = finished_make(app, catalog, double, k8s_backend, tmp_path, claim, monkeypatch)
    sent: list[tuple[str, Any]] = []
    celery = app.extensions["celery"]
    monkeypatch.setattr(celery, "send_task", lambda name, args=None, **kw: sent.append((name, args)))
    return {"id": attempt_id, "run": run_id, "sent": sent, "url": f"/api/v1/task_run/{attempt_id}/output",
            "task": celery.tasks["myapp.fetch_output"]}


def copied_here(app, world, path: str) -> bool:
    from myapp.extensions import db
    from myapp.models import Project, TaskRun
    from myapp.outputs import store as outputs_store

    with app.app_context():
        attempt = db.session.get(TaskRun, world["id"])
        folder = outputs_store.attempt_folder(attempt, db.session.get(Project, attempt.project_id).namespace)
        assert folder is not None
        return (folder / path).is_file()


def test_a_text_preview_reads_only_the_start_and_a_later_download_still_fetches_it_whole(app, double, admin,
                                                                                      world):
    files = {f["path"]: f for f in admin.get(f"/api/v1/task_run/{world['id']}/outputs").get_json()["files"]}
    assert files["train.log"] == {"path": "train.log", "size": len(LOG), "preview": "text", "on_claim": True}
    assert files["plots/big.png"]["preview"] == "image" and files["plots/big.png"]["on_claim"] is True
    assert "on_claim" not in files["data.csv"]  # copied when the attempt ended

    preview = f"{world['url']}?path=train.log&preview=1"
    first = admin.get(preview)
    assert first.status_code == 202 and first.headers["Retry-After"] == "5"
    assert "first 64 KiB of 'train.log'" in first.get_json()["message"]
    assert world["sent"] == [("myapp.fetch_output", [world["id"], "train.log", True])]
    assert admin.get(preview).status_code == 202 and len(world["sent"]) == 1  # one preview fetch at a time

    assert world["task"].apply(args=world["sent"][0][1]).get() is True
    (reader,) = readers_for(double, "preview")  # one reader, asked for the first 64 KiB only
    assert reader["spec"]["containers"][0]["command"][-2:] == ["0", str(PREVIEW_BYTES)]
    assert readers_for(double, "chunk") == [] and reader_pods(double) == []
    shown = admin.get(preview)
    assert shown.status_code == 200 and shown.mimetype == "text/plain"
    assert shown.data == LOG[:PREVIEW_BYTES]
    assert len(world["sent"]) == 1

    # The start it kept is not the file: a download fetches the whole file, in chunks, byte-identical.
    assert not copied_here(app, world, "train.log")
    download = admin.get(f"{world['url']}?path=train.log")
    assert download.status_code == 202 and "being fetched" in download.get_json()["message"]
    assert world["sent"][1] == ("myapp.fetch_output", [world["id"], "train.log", False])
    assert world["task"].apply(args=world["sent"][1][1]).get() is True
    assert len(readers_for(double, "chunk")) == 3 and len(readers_for(double, "preview")) == 1
    served = admin.get(f"{world['url']}?path=train.log")
    assert served.status_code == 200 and served.data == LOG
    assert admin.get(preview).data == LOG[:PREVIEW_BYTES]
    assert len(world["sent"]) == 2 and reader_pods(double) == []


def test_a_failed_preview_is_answered_once_then_tried_again(app, double, admin, world):
    preview = f"{world['url']}?path=train.log&preview=1"
    double.readers.exit_code = 1
    assert admin.get(preview).status_code == 202
    assert world["task"].apply(args=world["sent"][0][1]).get() is False
    assert reader_pods(double) == []
    # HEAD has no body to say why: the failure stays for the GET that does.
    assert admin.request("HEAD", preview).status_code == 503
    failed = admin.get(preview)
    assert failed.status_code == 503
    assert "fetching the first 64 KiB of 'train.log' from the cluster failed" in failed.get_json()["message"]
    assert "outputs reader" in failed.get_json()["message"]
    assert len(world["sent"]) == 1
    retry = admin.get(preview)
    assert retry.status_code == 202 and world["sent"][1] == ("myapp.fetch_output", [world["id"], "train.log", True])
    double.readers.exit_code = None
    assert world["task"].apply(args=world["sent"][1][1]).get() is True
    assert admin.get(preview).data == LOG[:PREVIEW_BYTES]
    assert len(readers_for(double, "preview")) == 2 and readers_for(double, "chunk") == []


def test_an_image_left_on_the_claim_is_fetched_whole_to_be_shown(double, admin, world):
    url = f"{world['url']}?path=plots/big.png"
    assert admin.request("HEAD", url).status_code == 202  # what the run view asks until it is here
    assert world["sent"] == [("myapp.fetch_output", [world["id"], "plots/big.png", False])]
    assert world["task"].apply(args=world["sent"][0][1]).get() is True
    shown = admin.get(url)
    assert shown.status_code == 200 and shown.mimetype == "image/png" and shown.data == BIG_PNG
    assert "attachment" not in shown.headers.get("Content-Disposition", "")


def test_other_projects_previews_are_not_found(user, world):
    for url in (f"{world['url']}?path=train.log&preview=1", f"{world['url']}?path=plots/big.png"):
        assert user.get(url).status_code == 404
    assert world["sent"] == []


def test_a_reader_done_with_one_file_leaves_the_readers_of_other_files_and_purposes(double, k8s_backend,
                                                                                   claim):  # noqa: F811
    """Readers are deleted by label when done: those of another file, or of a download of the same file,
    belong to other fetches under way (other workers) and stay."""
    from myapp.rendering.kinds.outputs_reader import chunk_reader_pod

    namespace, folder = "team-a", "5/make/1"
    (claim / folder).mkdir(parents=True)
    (claim / folder / "train.log").write_bytes(LOG)
    double.claims[namespace] = claim
    others = [chunk_reader_pod(namespace, 7, folder, "other.log", 0, PREVIEW_BYTES, "python:3.12-slim", "preview"),
              chunk_reader_pod(namespace, 7, folder, "train.log", 0, CHUNK, "python:3.12-slim", "chunk")]
    for pod in others:
        double.put(pod)
        double.set_pod_status(namespace, pod["metadata"]["name"], {"phase": "Running"})  # under way elsewhere
    chunk = k8s_backend.fetch_output_chunk(namespace, 7, folder, "train.log", 0, PREVIEW_BYTES, purpose="preview")
    assert chunk.data == LOG[:PREVIEW_BYTES] and chunk.size == len(LOG)
    assert sorted(p["metadata"]["name"] for p in reader_pods(double)) == sorted(
        p["metadata"]["name"] for p in others)
    with pytest.raises(ValueError, match="a chunk reader is for one of"):
        chunk_reader_pod(namespace, 7, folder, "train.log", 0, CHUNK, "python:3.12-slim", "everything")
