"""The model store: where an uploaded model file is kept, in the project's data folder
(``MYAPP_HOME/jobs/data/<namespace>/models/<model>/<unique>/<file>``), which local model servers read
like the files pipeline tasks write there. The version's ``uri`` is that absolute path."""
from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path
from typing import IO

from werkzeug.utils import secure_filename

from ..backends.registry import local_workdir
from ..errors import FieldError, Kind
from ..fs.beneath import Folder, Refused

CHUNK = 1024 * 1024


def model_dir(namespace: str) -> Path:
    return local_workdir() / "data" / namespace / "models"


def save(stream: IO[bytes], namespace: str, model: str, filename: str, limit: int,
         why: str = "") -> tuple[Path, int]:
    """Copy an uploaded file into the store; its path and size. A folder of its own per upload, so two
    uploads of the same name never overwrite each other (or a file a server is reading). Over ``limit``
    bytes: 413-kind, naming ``file`` (``why``: what the limit is).

    The data folder belongs to the project's jobs (their uid owns it): every step down is made and opened
    by descriptor without following links (myapp.fs.beneath: a job could plant one to make the platform
    write elsewhere), and what is made is readable by the model server (0755/0644, whatever the umask)."""
    name = secure_filename(filename) or "model"
    if not model or "/" in model or model in (".", ".."):
        raise FieldError("name", "is not a plain name")
    data = model_dir(namespace).parent
    data.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # jobs/data: the platform's own
    with contextlib.suppress(FileExistsError):
        os.mkdir(data, 0o700)  # the backend hands it to the project's uid when a job starts
    unique = secrets.token_hex(8)
    with Folder.open(data) as folder:
        try:
            folder.make_dirs(f"models/{model}/{unique}", 0o755)
        except Refused as exc:  # a link or a file a job put there
            raise FieldError("name", f"the project's model store cannot hold it: models/{model} is not a "
                                     f"folder ({exc.message})", kind=Kind.CONFLICT) from None
        path = model_dir(namespace) / model / unique / name
        size = 0
        with folder.create(f"models/{model}/{unique}/{name}", 0o644) as out:
            os.fchmod(out.fileno(), 0o644)
            try:
                while chunk := stream.read(CHUNK):
                    size += len(chunk)
                    if size > limit:  # the body limit bounds it already; this bounds what is written
                        raise FieldError("file", f"is larger than {limit} bytes{why}", kind=Kind.TOO_LARGE)
                    out.write(chunk)
                if size == 0:
                    raise FieldError("file", "is empty")
            except BaseException:
                folder.remove_tree(f"models/{model}/{unique}")
                raise
        return path, size


def discard(path: Path) -> None:
    """Remove an upload whose version was not stored (its folder, by descriptor beneath the data folder)."""
    data = local_workdir() / "data"
    relative = path.parent.relative_to(data).as_posix()
    namespace, _, rest = relative.partition("/")
    with contextlib.suppress(FileNotFoundError), Folder.open(data / namespace) as folder:
        folder.remove_tree(rest)
