"""Reading an attempt's outputs off a Kubernetes claim the platform cannot mount: the reader's side.

Without an S3-compatible store an attempt on Kubernetes writes the project's claim ``myapp-outputs``,
which only pods of its namespace mount. When the attempt ends, the worker runs one short-lived reader
pod there (``myapp/rendering/kinds/outputs_reader.py`` renders it, ``myapp/backends/kubernetes/outputs.py``
runs and deletes it) that mounts the attempt's folder read-only and prints, on its log:

1. a JSON header: every file (relative path, size; symlinks skipped, at most ``MAX_FILES``) and which
   of them it copies: ``metrics.jsonl`` first, then the smallest first, while the copied bytes stay
   within ``COPY_BYTES``;
2. those files as one gzip'd tar, base64 in lines of ``LINE_CHARS``;
3. an end line with the tar's length, so a log cut short (the kubelet rotates a container's log at
   10 MiB by default) is an error instead of missing files.

``parse`` (pure: no network) checks all of it and writes the copies into the platform's outputs folder,
where the run view reads them like a local attempt's. Files beyond the bound stay listed, on the claim
only (the project's notebooks read them at ``/myapp/outputs``).
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import io
import json
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..fs.beneath import Folder, Refused
from .declarations import PATH

COPY_BYTES = 6 * 1024 * 1024  # copied per attempt: base64'd (x4/3) it stays under the kubelet's 10 MiB log
MAX_FILES = 1000  # listed per attempt (outputs_store.MAX_FILES)
LINE_CHARS = 4096  # well under the runtime's 16 KiB, beyond which it splits a log line
HEADER_KEY = "myapp-outputs"
END_KEY = "myapp-outputs-end"

# Fixed text, run as `python -I -S -B -c SCRIPT <folder> <copy bytes> <max files>`: the folder and the
# bounds reach it as arguments, never inside the code.
SCRIPT = r"""
import base64, io, json, os, sys, tarfile
root, budget, most = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
files = []
for base, dirs, names in os.walk(root):
    dirs.sort()
    for name in sorted(names):
        full = os.path.join(base, name)
        if len(files) < most and not os.path.islink(full) and os.path.isfile(full):
            files.append((os.path.relpath(full, root).replace(os.sep, "/"), os.path.getsize(full)))
order = sorted(files, key=lambda f: (f[0] != "metrics.jsonl", f[1], f[0]))
copied, total = [], 0
for path, size in order:
    if total + size <= budget and os.access(os.path.join(root, path), os.R_OK):
        copied.append((path, size))
        total += size
data = io.BytesIO()
with tarfile.open(fileobj=data, mode="w:gz") as tar:
    for path, size in copied:
        with open(os.path.join(root, path), "rb") as fh:
            body = fh.read(size)
        info = tarfile.TarInfo(path)
        info.size = len(body)
        tar.addfile(info, io.BytesIO(body))
print(json.dumps({"myapp-outputs": 1, "files": files, "copied": [p for p, _ in copied]}), flush=True)
text = base64.b64encode(data.getvalue()).decode()
for start in range(0, len(text), 4096):
    print(text[start:start + 4096])
print(json.dumps({"myapp-outputs-end": len(data.getvalue())}), flush=True)
"""


class ReaderOutputError(ValueError):
    """What the reader printed is not a whole, well-formed answer (cut short, or not the reader's)."""


@dataclass(frozen=True)
class Listing:
    files: list[tuple[str, int]]  # every file, as listed
    copied: frozenset[str]  # those written to the platform's folder


def command(folder: str) -> list[str]:
    return ["python", "-I", "-S", "-B", "-c", SCRIPT, folder, str(COPY_BYTES), str(MAX_FILES)]


def _json_line(line: str, key: str) -> dict[str, Any] | None:
    if not line.startswith("{"):
        return None
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) and key in value else None


def _framed(lines: list[str], head_key: str, end_key: str, missing: str,
            body: str) -> tuple[dict[str, Any], bytes, Any]:
    """What both readers print: a JSON header line, the body in base64 lines, a JSON end line. Returns the
    header, the decoded body and the end line's value; ReaderOutputError naming ``missing`` (no header),
    a log cut short (no end line) or a ``body`` that is not base64."""
    start = next((i for i, line in enumerate(lines) if _json_line(line, head_key) is not None), None)
    if start is None:
        raise ReaderOutputError(missing)
    header = _json_line(lines[start], head_key) or {}
    end = next((i for i in range(start + 1, len(lines)) if _json_line(lines[i], end_key) is not None), None)
    if end is None:
        raise ReaderOutputError("the reader's output was cut short (no end line)")
    try:
        data = base64.b64decode("".join(lines[start + 1:end]), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ReaderOutputError(f"the reader's {body} is not base64: {exc}") from None
    return header, data, (_json_line(lines[end], end_key) or {}).get(end_key)


def parse(lines: list[str], into: Path) -> Listing:
    """The reader's log lines (without timestamps) -> its listing; the copied files written under into
    (a file of the same path there is replaced). ReaderOutputError when anything is missing or wrong:
    nothing outside into is ever written, only regular files the header named, within the bounds."""
    header, data, length = _framed(lines, HEADER_KEY, END_KEY, "no listing in the reader's output", "copy")
    files = _files(header.get("files"))
    copied = header.get("copied")
    if not isinstance(copied, list) or not all(isinstance(p, str) for p in copied) \
            or not set(copied) <= {path for path, _ in files}:
        raise ReaderOutputError("the reader's list of copied files is malformed")
    if length != len(data) or len(data) > 2 * COPY_BYTES:  # gzip adds little even to random bytes
        raise ReaderOutputError(f"the reader's copy is {len(data)} bytes, it said {length}")
    written = _extract(data, frozenset(copied), into)
    return Listing(files=files, copied=frozenset(written))


def _files(value: Any) -> list[tuple[str, int]]:
    if not isinstance(value, list) or len(value) > MAX_FILES:
        raise ReaderOutputError("the reader's listing is malformed")
    out = []
    for item in value:
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str) and PATH.fullmatch(item[0])
                and isinstance(item[1], int) and not isinstance(item[1], bool) and item[1] >= 0):
            raise ReaderOutputError(f"the reader listed {item!r}, not a path inside the folder and a size")
        out.append((item[0], item[1]))
    return out


def _extract(data: bytes, allowed: frozenset[str], into: Path) -> set[str]:
    """Regular files the header named, read member by member (never tarfile's extract: no links, no
    modes, no paths of the archive's choosing), within COPY_BYTES in all."""
    written: set[str] = set()
    total = 0
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar, Folder.open(into, create=True) as folder:
            for member in tar:
                if not member.isfile() or member.name not in allowed or member.name in written:
                    raise ReaderOutputError(f"the reader's copy holds {member.name!r}, which it did not list")
                total += member.size
                if total > COPY_BYTES:
                    raise ReaderOutputError(f"the reader's copy holds more than {COPY_BYTES} bytes")
                source = tar.extractfile(member)
                assert source is not None  # a regular file
                folder.make_dirs(member.name.rpartition("/")[0])  # by descriptor: no link on the way is followed
                folder.remove(member.name)  # a link there goes as a name; the copy is a new file
                with source, folder.create(member.name) as fh:
                    fh.write(source.read(member.size))
                written.add(member.name)
    except (tarfile.TarError, EOFError, OSError, Refused) as exc:
        raise ReaderOutputError(f"the reader's copy is not a whole archive: {exc}") from None
    if written != allowed:
        raise ReaderOutputError(f"the reader's copy lacks {sorted(allowed - written)[:3]}")
    return written


def kept_files(listing: Listing, preview_kind: Any) -> list[dict[str, Any]]:
    """TaskRun.outputs for what the reader listed: a file left on the claim says so (``on_claim``); its
    preview and download are fetched from there when asked (outputs_fetch.request_fetch)."""
    return [{"path": path, "size": size, "preview": preview_kind(path),
             **({} if path in listing.copied else {"on_claim": True})} for path, size in listing.files]



# ---- one file fetched on demand, in chunks (outputs_fetch.fetch_from_claim) ---------------------------------
CHUNK_BYTES = 4 * 1024 * 1024  # per reader: base64'd (x4/3) with its lines it stays under the 10 MiB log
CHUNK_KEY = "myapp-chunk"
CHUNK_END_KEY = "myapp-chunk-end"

# Run as `python -I -S -B -c CHUNK_SCRIPT <file> <offset> <length>`: prints the file's size, the chunk's
# sha256, the chunk in base64 lines, and an end line with its length. A symlink is refused (exit 3).
CHUNK_SCRIPT = r"""
import base64, hashlib, json, os, sys
path, offset, length = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if os.path.islink(path) or not os.path.isfile(path):
    print("not a regular file: " + path, file=sys.stderr)
    sys.exit(3)
with open(path, "rb") as fh:
    size = os.fstat(fh.fileno()).st_size
    fh.seek(offset)
    body = fh.read(length)
print(json.dumps({"myapp-chunk": 1, "size": size, "offset": offset,
                  "sha256": hashlib.sha256(body).hexdigest()}), flush=True)
text = base64.b64encode(body).decode()
for start in range(0, len(text), 4096):
    print(text[start:start + 4096])
print(json.dumps({"myapp-chunk-end": len(body)}), flush=True)
"""


@dataclass(frozen=True)
class Chunk:
    size: int  # the whole file's, as the reader saw it
    data: bytes


def chunk_command(file: str, offset: int, length: int) -> list[str]:
    if offset < 0 or not 0 < length <= CHUNK_BYTES:
        raise ValueError(f"a chunk is 1 to {CHUNK_BYTES} bytes from offset 0 on, not {length} at {offset}")
    return ["python", "-I", "-S", "-B", "-c", CHUNK_SCRIPT, file, str(int(offset)), str(int(length))]


def parse_chunk(lines: list[str], offset: int, length: int) -> Chunk:
    """A chunk reader's log lines -> the chunk, checked: its header, its length (what was asked, or up to
    the file's end), its sha256. ReaderOutputError when anything is missing or wrong."""
    header, data, said = _framed(lines, CHUNK_KEY, CHUNK_END_KEY, "no chunk header in the reader's output", "chunk")
    size, sha = header.get("size"), header.get("sha256")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0 or header.get("offset") != offset \
            or not isinstance(sha, str):
        raise ReaderOutputError("the reader's chunk header is malformed")
    expected = max(0, min(length, size - offset))
    if said != len(data) or len(data) != expected:
        raise ReaderOutputError(f"the reader's chunk is {len(data)} bytes, {expected} were expected")
    if hashlib.sha256(data).hexdigest() != sha:
        raise ReaderOutputError("the reader's chunk does not match its checksum")
    return Chunk(size=size, data=data)


# ---- a task's checkpoint folder on the project's checkpoints claim (myapp/outputs/checkpoints.py) ------------
CHECKPOINTS_KEY = "myapp-checkpoints"
CHECKPOINTS_END_KEY = "myapp-checkpoints-end"
MAX_MANIFESTS = 16  # the newest ones read: the helper keeps two, a torn save or two may lie beside them
MAX_MANIFEST_BYTES = 65536  # myapp.checkpoint.MAX_MANIFEST (this package does not import the job's helper)

# Run as `python -I -S -B -c CHECKPOINTS_SCRIPT <folder> <most> <bytes>`: prints the sizes of the folder's
# regular files named ckpt-*, then its newest manifests' text (JSON, in base64 lines) and an end line. The
# platform decides which checkpoint is whole (myapp.checkpoint.parse_manifest); links are never read.
CHECKPOINTS_SCRIPT = r"""
import base64, json, os, re, sys
root, most, limit = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sizes, texts = {}, {}
if os.path.isdir(root) and not os.path.islink(root):
    for entry in os.scandir(root):
        if entry.name.startswith("ckpt-") and entry.is_file(follow_symlinks=False):
            sizes[entry.name] = entry.stat(follow_symlinks=False).st_size
steps = sorted((int(m.group(1)), n) for n in sizes if (m := re.fullmatch(r"ckpt-([0-9]{1,12})\.json", n)))
for _, name in steps[-most:]:
    with open(os.path.join(root, name), "rb") as fh:
        texts[name] = fh.read(limit + 1).decode("utf-8", "replace")
raw = json.dumps(texts).encode()
body = base64.b64encode(raw).decode()
print(json.dumps({"myapp-checkpoints": 1, "sizes": sizes}), flush=True)
for start in range(0, len(body), 4096):
    print(body[start:start + 4096])
print(json.dumps({"myapp-checkpoints-end": len(raw)}), flush=True)
"""

# Run as `python -I -S -B -c DELETE_SCRIPT <claim> <run> [<run> ...]`: removes each run's folder (every task's
# checkpoints) from the claim, never following a link (a link there goes as a name), and prints an end line.
DELETE_SCRIPT = r"""
import json, os, shutil, sys
root = sys.argv[1]
for run in sys.argv[2:]:
    path = os.path.join(root, str(int(run)))
    if os.path.islink(path) or os.path.isfile(path):
        os.unlink(path)
    elif os.path.isdir(path):
        shutil.rmtree(path)
print(json.dumps({"myapp-checkpoints-deleted": len(sys.argv) - 2}), flush=True)
"""
DELETED_KEY = "myapp-checkpoints-deleted"


def checkpoints_command(folder: str) -> list[str]:
    return ["python", "-I", "-S", "-B", "-c", CHECKPOINTS_SCRIPT, folder, str(MAX_MANIFESTS), str(MAX_MANIFEST_BYTES)]


def delete_command(claim: str, run_ids: list[int]) -> list[str]:
    return ["python", "-I", "-S", "-B", "-c", DELETE_SCRIPT, claim, *(str(int(r)) for r in run_ids)]


def parse_checkpoints(lines: list[str]) -> tuple[dict[str, str], dict[str, int]]:
    """A checkpoint reader's log lines -> (manifest name -> its text, file name -> size), checked for shape;
    ReaderOutputError when anything is missing or wrong."""
    header, data, length = _framed(lines, CHECKPOINTS_KEY, CHECKPOINTS_END_KEY,
                                   "no checkpoint listing in the reader's output", "manifests")
    sizes = header.get("sizes")
    if not isinstance(sizes, dict) or not all(isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool)
                                              for k, v in sizes.items()):
        raise ReaderOutputError("the reader's checkpoint sizes are malformed")
    try:
        texts = json.loads(data)
    except ValueError:
        texts = None
    if not isinstance(texts, dict) or len(texts) > MAX_MANIFESTS or length != len(data) \
            or not all(isinstance(k, str) and isinstance(v, str) for k, v in texts.items()):
        raise ReaderOutputError("the reader's checkpoint manifests are malformed")
    return texts, sizes


def parse_deleted(lines: list[str], run_ids: list[int]) -> None:
    """ReaderOutputError unless the delete's end line says it went through every run."""
    done = next((value for line in lines if (value := _json_line(line, DELETED_KEY)) is not None), None)
    if done is None or done.get(DELETED_KEY) != len(run_ids):
        raise ReaderOutputError("the checkpoints delete did not say it finished")
