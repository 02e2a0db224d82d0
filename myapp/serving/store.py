"""The model store: where an uploaded model file is kept, in the project's data folder
(``MYAPP_HOME/jobs/data/<namespace>/models/<model>/<unique>/<file>``), which local model servers read
like the files pipeline tasks write there. The version's ``uri`` is that absolute path."""
from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from pathlib import Path
from typing import IO

from werkzeug.utils import secure_filename

from ..backends.registry import local_workdir
from ..errors import FieldError, Kind

CHUNK = 1024 * 1024
DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


def model_dir(namespace: str) -> Path:
    return local_workdir() / "data" / namespace / "models"


def save(stream: IO[bytes], namespace: str, model: str, filename: str, limit: int) -> tuple[Path, int]:
    """Copy an uploaded file into the store; its path and size. A folder of its own per upload, so two
    uploads of the same name never overwrite each other (or a file a server is reading).

    The data folder belongs to the project's jobs (their uid owns it): every step down is opened
    without following links (a job could plant one to make the platform write elsewhere), and what is
    made is readable by the model server (0755/0644, whatever the platform's umask)."""
    name = secure_filename(filename) or "model"
    data = model_dir(namespace).parent
    data.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # jobs/data: the platform's own
    with contextlib.suppress(FileExistsError):
        os.mkdir(data, 0o700)  # the backend hands it to the project's uid when a job starts
    opened = [os.open(data, DIRECTORY)]
    try:
        for part, fresh in (("models", False), (model, False), (secrets.token_hex(8), True)):
            try:
                os.mkdir(part, 0o755, dir_fd=opened[-1])
                made = True
            except FileExistsError:
                if fresh:
                    raise
                made = False
            try:
                opened.append(os.open(part, DIRECTORY, dir_fd=opened[-1]))
            except OSError as exc:  # a link or a file a job put there
                raise FieldError("name", f"the project's model store cannot hold it: models/{model} is not a "
                                         f"folder ({exc.strerror})", kind=Kind.CONFLICT) from None
            if made:
                os.fchmod(opened[-1], 0o755)
        path = model_dir(namespace) / model / part / name
        size = 0
        with os.fdopen(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644,
                               dir_fd=opened[-1]), "wb") as out:
            os.fchmod(out.fileno(), 0o644)
            try:
                while chunk := stream.read(CHUNK):
                    size += len(chunk)
                    if size > limit:  # the body limit bounds it already; this bounds what is written
                        raise FieldError("file", f"is larger than {limit} bytes")
                    out.write(chunk)
                if size == 0:
                    raise FieldError("file", "is empty")
            except BaseException:
                discard(path)
                raise
        return path, size
    finally:
        for fd in opened:
            os.close(fd)


def discard(path: Path) -> None:
    """Remove an upload whose version was not stored."""
    shutil.rmtree(path.parent, ignore_errors=True)
