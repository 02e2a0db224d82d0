"""Where a model version's local ``uri`` may point: a file of its own project, nowhere else.

A path (or ``file://<path>``) names either a task's output (``/myapp/outputs/<run>/<task>/<attempt>/<file>``,
what an output reference resolves to: the run must be the project's) or a regular file in the project's data
folder (``MYAPP_HOME/jobs/data/<namespace>/``, which holds the model store, ``models/``). Anything else,
another project's folder or the platform's own files (its secret key) included, is a ``FieldError`` naming
``uri``. The data folder is the project's jobs': the file is reached beneath it by descriptor without
following a link at any component (``myapp.fs``), so a link a job planted there cannot make it name a file
elsewhere. Remote uris are ``storage.py``'s.
"""
from __future__ import annotations

import posixpath
from pathlib import PurePosixPath

import sqlalchemy as sa

from ..backends.registry import local_workdir
from ..errors import FieldError
from ..extensions import db
from ..fs.beneath import Folder, Refused
from ..models import PipelineRun
from ..outputs import declarations as outputs
from . import storage

FILE_SCHEME = "file://"


def local_path(uri: str) -> str | None:
    """The path a local uri names; None for a remote one."""
    if storage.is_remote(uri):
        return None
    return uri[len(FILE_SCHEME):] if uri.lower().startswith(FILE_SCHEME) else uri


def check(uri: str, project_id: int, namespace: str) -> None:
    """A local uri of the project's own (a task output of its runs, or a file in its data folder)."""
    path = local_path(uri)
    if path is None:
        return
    try:
        found = outputs.attempt_of(path)
    except outputs.OutputError as exc:
        raise FieldError(exc.field, exc.reason) from None
    if found is not None:
        run_project = db.session.scalar(sa.select(PipelineRun.project_id).where(PipelineRun.id == found[0]))
        if run_project != project_id:  # its server gets that attempt's folder from the project's outputs
            raise FieldError("uri", f"run {found[0]} is not a run of this project")
        _no_links_in_outputs(path[len(outputs.MOUNT) + 1:], namespace)
        return
    data = local_workdir() / "data" / namespace
    where = f"a task's output ({outputs.MOUNT}/<run>/<task>/<attempt>/<file>) or a file in the project's data " \
            f"folder ({data}/...)"
    if not path.startswith("/") or posixpath.normpath(path) != path.rstrip("/") or path.endswith("/"):
        raise FieldError("uri", f"a local model is one file named by its absolute path, without '.', '..' or "
                                f"'//': {where}")
    try:
        relative = PurePosixPath(path).relative_to(PurePosixPath(data)).as_posix()
    except ValueError:
        raise FieldError("uri", f"is not this project's: a local model is {where}") from None
    if relative == ".":
        raise FieldError("uri", "names the data folder itself, not a model file")
    try:
        with Folder.open(data) as folder, folder.open_file(relative):
            pass
    except FileNotFoundError:
        raise FieldError("uri", f"names no file in the project's data folder: {relative}") from None
    except Refused:
        raise FieldError("uri", f"{relative} in the project's data folder is not a regular file reached "
                                "without links") from None
    except OSError as exc:
        raise FieldError("uri", f"cannot be read in the project's data folder: {exc.strerror}") from None


def _no_links_in_outputs(relative: str, namespace: str) -> None:
    """A task output kept on this machine must be a regular file reached without links (the attempt's folder
    is its job's to write). One that is not here (on a cluster's claim or in an S3 store) is checked by
    whoever serves it."""
    try:
        with Folder.open(local_workdir() / "outputs" / namespace) as folder, folder.open_file(relative):
            pass
    except FileNotFoundError:
        return
    except Refused:
        raise FieldError("uri", f"the task output {relative} is not a regular file reached without links") from None
    except OSError as exc:
        raise FieldError("uri", f"the task output {relative} cannot be read: {exc.strerror}") from None
