"""The claim reader's pure parts: its script run for real on a folder, the parser's checks (a cut log, a
copy that is not what the listing said, paths leaving the folder) and the reader pod as rendered."""
from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from myapp.outputs.reader import COPY_BYTES, LINE_CHARS, ReaderOutputError, command, kept_files, parse
from myapp.outputs.store import preview_kind

METRICS = b'{"step": 0, "name": "loss", "value": 0.5}\n'


def run_script(folder: Path, budget: int = COPY_BYTES) -> list[str]:
    """The reader's command, run here as the pod would run it (python, the folder and bounds as argv)."""
    argv = command(str(folder))
    argv[0], argv[-2] = sys.executable, str(budget)
    done = subprocess.run(argv, capture_output=True, timeout=60, check=True)
    return done.stdout.decode().splitlines()


def folder_with_files(root: Path) -> Path:
    folder = root / "claim" / "12" / "make" / "1"
    (folder / "plots").mkdir(parents=True)
    (folder / "data.csv").write_bytes(b"x,y\n1,2\n")
    (folder / "metrics.jsonl").write_bytes(METRICS)
    (folder / "plots" / "loss.png").write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(3000))
    (folder / "model.bin").write_bytes(os.urandom(5000))
    (root / "secret.txt").write_text("outside the folder")
    os.symlink(root / "secret.txt", folder / "link.txt")
    return folder


def test_the_script_lists_everything_and_copies_within_the_bound(tmp_path):
    folder = folder_with_files(tmp_path)
    lines = run_script(folder, budget=3000)  # metrics first, then the smallest, while they fit
    assert all(len(line) <= LINE_CHARS for line in lines)
    into = tmp_path / "platform"
    listing = parse(lines, into)
    assert listing.files == [("data.csv", 8), ("metrics.jsonl", len(METRICS)), ("model.bin", 5000),
                             ("plots/loss.png", 3008)]
    assert listing.copied == {"metrics.jsonl", "data.csv"}  # 3008 more would pass 3000
    assert sorted(p.relative_to(into).as_posix() for p in into.rglob("*") if p.is_file()) == [
        "data.csv", "metrics.jsonl"]
    assert (into / "data.csv").read_bytes() == b"x,y\n1,2\n"
    assert kept_files(listing, preview_kind) == [
        {"path": "data.csv", "size": 8, "preview": "csv"},
        {"path": "metrics.jsonl", "size": len(METRICS), "preview": "metrics"},
        {"path": "model.bin", "size": 5000, "preview": "none", "on_claim": True},
        {"path": "plots/loss.png", "size": 3008, "preview": "image", "on_claim": True}]  # fetched when previewed
    everything = parse(run_script(folder), tmp_path / "all")
    assert everything.copied == {"data.csv", "metrics.jsonl", "model.bin", "plots/loss.png"}
    assert (tmp_path / "all" / "model.bin").read_bytes() == (folder / "model.bin").read_bytes()
    assert not (tmp_path / "all" / "link.txt").exists()  # symlinks are neither listed nor followed


def test_a_missing_folder_is_an_empty_listing(tmp_path):
    listing = parse(run_script(tmp_path / "never-written"), tmp_path / "into")
    assert listing.files == [] and listing.copied == frozenset()


def answer(files, copied, members: dict[str, bytes], *, cut: bool = False, length: int | None = None,
           symlink: str | None = None) -> list[str]:
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:gz") as tar:
        for name, body in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
        if symlink:
            info = tarfile.TarInfo(symlink)
            info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
            tar.addfile(info)
    text = base64.b64encode(data.getvalue()).decode()
    lines = ["some line the image printed first",
             json.dumps({"myapp-outputs": 1, "files": files, "copied": copied}),
             *[text[i:i + LINE_CHARS] for i in range(0, len(text), LINE_CHARS)]]
    if not cut:
        lines.append(json.dumps({"myapp-outputs-end": len(data.getvalue()) if length is None else length}))
    return lines


def test_a_whole_answer_is_parsed(tmp_path):
    listing = parse(answer([["a.txt", 2]], ["a.txt"], {"a.txt": b"hi"}), tmp_path)
    assert listing.copied == {"a.txt"} and (tmp_path / "a.txt").read_bytes() == b"hi"


@pytest.mark.parametrize(("lines", "says"), [
    (answer([["a.txt", 2]], ["a.txt"], {"a.txt": b"hi"}, cut=True), "cut short"),
    (answer([["a.txt", 2]], ["a.txt"], {"a.txt": b"hi"}, length=5), "it said 5"),
    (answer([["a.txt", 2]], ["a.txt"], {}), "lacks"),
    (answer([["a.txt", 2]], ["a.txt"], {"a.txt": b"hi", "b.txt": b"no"}), "did not list"),
    (answer([["../x", 2]], [], {}), "not a path inside the folder"),
    (answer([["/etc/passwd", 2]], [], {}), "not a path inside the folder"),
    (answer([["a.txt", 2]], ["b.txt"], {}), "malformed"),
    (answer([["a.txt", 2]], ["a.txt"], {}, symlink="a.txt"), "did not list"),
    (answer([["a.txt", 2]], [], {"../a.txt": b"hi"}), "did not list"),
    (["no reader here"], "no listing"),
])
def test_anything_but_a_whole_answer_is_refused(tmp_path, lines, says):
    with pytest.raises(ReaderOutputError, match=says):
        parse(lines, tmp_path / "into")
    assert not (tmp_path / "b.txt").exists() and not (tmp_path / "a.txt").exists()


def test_a_copy_beyond_the_bound_is_refused(tmp_path):
    big = os.urandom(COPY_BYTES + 1)
    with pytest.raises(ReaderOutputError, match="more than"):
        parse(answer([["big.bin", len(big)]], ["big.bin"], {"big.bin": big}), tmp_path)


def test_the_reader_pod_reads_its_own_claim_read_only_and_runs_restricted():
    from myapp.rendering import policy
    from myapp.rendering.kinds.outputs_reader import DEADLINE_SECONDS, reader_pod
    from myapp.rendering.schemas import builtin_validator

    pod = reader_pod("team-a", 42, "12/make/1", "python:3.12-slim")
    assert builtin_validator("v1", "Pod").is_valid(pod)
    assert [p for p in policy.check(pod) if "labels" not in p[0]] == []  # restricted security, as rendered pods
    spec = pod["spec"]
    assert pod["metadata"] == {"name": "myapp-outputs-read-42", "namespace": "team-a", "labels": {
        "app.kubernetes.io/managed-by": "myapp", "myapp.io/outputs-reader": "42"}}
    assert spec["volumes"] == [{"name": "myapp-outputs",
                                "persistentVolumeClaim": {"claimName": "myapp-outputs", "readOnly": True}}]
    (container,) = spec["containers"]
    assert container["volumeMounts"] == [{"name": "myapp-outputs", "mountPath": "/outputs", "readOnly": True}]
    assert container["command"][:5] == ["python", "-I", "-S", "-B", "-c"]
    assert container["command"][6:] == ["/outputs/12/make/1", str(COPY_BYTES), "1000"]  # data as argv only
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert spec["automountServiceAccountToken"] is False and spec["restartPolicy"] == "Never"
    assert spec["activeDeadlineSeconds"] == DEADLINE_SECONDS
    assert spec["securityContext"]["runAsUser"] == 65534 and spec["securityContext"]["runAsNonRoot"] is True
    with pytest.raises(ValueError, match="not an attempt's outputs folder"):
        reader_pod("team-a", 42, "../../etc", "python:3.12-slim")
