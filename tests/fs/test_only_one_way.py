"""The modules that handle folders a job or notebook can write touch files only through myapp.fs.beneath.

Read statically (ast, not grep): a call of the builtin ``open``, ``os`` path functions, ``shutil``, ``zipfile``
or ``tarfile``, or a ``pathlib`` method that reads, lists, writes or deletes, in one of the named modules
fails the test unless it is allowed below, each with the reason its folder is the platform's alone. A
module that takes up ``myapp.fs`` must be named too, so it stays held to this.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Modules that reach attempt, outputs, data, volume or work folders (or log archives) of jobs.
NAMED = [
    "myapp/outputs/declarations.py", "myapp/outputs/store.py", "myapp/outputs/fetch.py", "myapp/outputs/reader.py",
    "myapp/backends/local/backend.py", "myapp/backends/local/plan.py", "myapp/backends/local/container_env.py",
    "myapp/backends/local/commands.py", "myapp/backends/local/sandbox.py",
    "myapp/backends/local/supervisor.py", "myapp/backends/local/pump.py", "myapp/backends/local/replicas.py",
    "myapp/backends/local/replica_metrics.py", "myapp/backends/local/logfiles.py", "myapp/backends/archive.py",
    "myapp/backends/local/job_folders.py",
    "myapp/backends/logrecords.py", "myapp/pipelines/observation.py", "myapp/images/builder.py", "myapp/images/logs.py",
    "myapp/images/environments.py", "myapp/images/defaults.py",
    "myapp/serving/store.py", "myapp/serving/local_uri.py", "myapp/setup_data.py",
    "myapp/notebooks/lifecycle.py", "myapp/projects/caps.py", "myapp/images/drive.py", "myapp/outputs/live.py",
]
CONTROL = ("the attempt's .myapp control folder: made by the platform before any process of the job exists, "
           "masked by a read-only tmpfs in the job's sandbox (a mount point there: the job cannot rename it)")
LOGS = ("logs and their archives: the supervisor's .myapp/logs (masked in the sandbox) and MYAPP_HOME's "
        "archive folder, which only the platform writes")
# (module, function or "*", call) -> why that folder is the platform's alone
ALLOWED = {
    ("myapp/backends/local/backend.py", "LocalBackend.submit", ".mkdir"): CONTROL,
    ("myapp/backends/local/backend.py", "LocalBackend.metrics", "open"): CONTROL,
    ("myapp/backends/local/backend.py", "LocalBackend.cancel", ".touch"): CONTROL,
    ("myapp/backends/local/backend.py", "LocalBackend._spawn", "open"): CONTROL,
    ("myapp/backends/local/supervisor.py", "Supervisor.__init__", ".read_text"): CONTROL,
    ("myapp/backends/local/supervisor.py", "Supervisor.__init__", ".mkdir"): CONTROL,
    ("myapp/backends/local/replica_metrics.py", "ReplicaMetrics.sample_metrics", "open"): CONTROL,
    ("myapp/backends/local/sandbox.py", "etc_files", ".mkdir"): CONTROL,
    ("myapp/backends/local/sandbox.py", "_write", "os.chmod"): CONTROL,
    ("myapp/backends/local/sandbox.py", "_write", "os.replace"): CONTROL,
    ("myapp/backends/local/sandbox.py", "_read", ".read_text"): "the host's /etc files",
    ("myapp/backends/local/sandbox.py", "in_platform_namespace", ".read_text"): (
        "the process's own /proc/self/status and uid_map"),
    ("myapp/backends/local/sandbox.py", "wrap", ".glob"): "the host's /dev/nvidia* device nodes",
    ("myapp/backends/local/sandbox.py", "project_uid", "open"): "uids.json in the platform's workdir",
    ("myapp/backends/local/sandbox.py", "project_uid", ".read_text"): "uids.json in the platform's workdir",
    ("myapp/backends/local/sandbox.py", "project_uid", ".write_text"): "uids.json in the platform's workdir",
    ("myapp/backends/local/sandbox.py", "project_uid", ".replace"): "uids.json in the platform's workdir",
    ("myapp/backends/local/backend.py", "LocalBackend.put_secret", "os.replace"): "secrets/: never in a sandbox",
    ("myapp/backends/local/backend.py", "LocalBackend.put_secret", ".iterdir"): "secrets/: never in a sandbox",
    ("myapp/backends/local/backend.py", "LocalBackend.put_secret", ".unlink"): "secrets/: never in a sandbox",
    ("myapp/backends/local/container_env.py", "ContainerEnv._value", ".read_text"): (
        "secrets/, configmaps/: never in a sandbox"),
    ("myapp/backends/local/container_env.py", "ContainerEnv._all_values", ".iterdir"): "secrets/: never in a sandbox",
    ("myapp/backends/local/backend.py", "LocalBackend._job_lock", "open"): "workdir/<namespace>: the platform's",
    ("myapp/backends/local/job_folders.py", "_private_dir", ".mkdir"): "the platform's own folders (0700)",
    ("myapp/backends/local/job_folders.py", "_private_dir", "os.chmod"): "the platform's own folders (0700)",
    ("myapp/backends/local/commands.py", "EntryMap.__init__", ".read_text"): "the job-template catalog (source tree)",
    ("myapp/images/builder.py", "build_environment", ".mkdir"): (
        "MYAPP_HOME/environments itself and the uid table's folder: the platform's"),
    **{("myapp/images/environments.py", function, call): "images/<namespace>/*.json and locks: the platform's registry"
       for function, call in (("_write_index", ".mkdir"), ("_write_index", "os.replace"), ("unregister", ".unlink"),
                              ("locked", "open"), ("registered_hashes", ".glob"),
                              ("registered_hashes", ".read_text"), ("forget", ".read_text"),
                              ("forget", ".unlink"), ("resolve", ".read_text"))},
    **{("myapp/images/environments.py", "Environment.site_dirs", call): (
        "a complete environment and its marker: the platform's, read-only to jobs")
       for call in (".glob", ".read_text")},
    **{("myapp/images/defaults.py", "ensure_local_environment", call): (
        "MYAPP_HOME/environments and the default environment the platform makes there from its own files")
       for call in (".mkdir", ".glob")},
    ("myapp/serving/store.py", "save", ".mkdir"): "MYAPP_HOME/jobs/data, the platform's",
    ("myapp/serving/store.py", "save", "os.mkdir"): (
        "the project's data folder itself, in jobs/data (the platform's): a job cannot replace it"),
    ("myapp/outputs/store.py", "open_file", ".open"): "the S3-compatible store's object, no file of this machine",
    ("myapp/outputs/reader.py", "_extract", "tarfile.open"): "an archive in memory (the reader's log)",
    **{(module, "*", "*"): LOGS for module in ("myapp/backends/local/logfiles.py", "myapp/backends/archive.py",
                                               "myapp/backends/logrecords.py", "myapp/pipelines/observation.py",
                                               "myapp/images/logs.py")},
}
OS_CALLS = frozenset({"open", "listdir", "scandir", "walk", "fwalk", "remove", "unlink", "rmdir", "removedirs", "chmod",
                      "chown", "lchown", "symlink", "link", "mkdir", "makedirs", "rename", "renames", "replace",
                      "truncate", "utime", "mkfifo"})
PATH_CALLS = frozenset({"open", "read_text", "read_bytes", "write_text", "write_bytes", "iterdir", "rmdir", "unlink",
                        "glob", "rglob", "touch", "mkdir", "chmod", "lchmod", "symlink_to", "hardlink_to",
                        "readlink", "rename"})
MODULES = frozenset({"shutil", "zipfile", "tarfile"})


def direct_touches(source: str) -> list[tuple[str, str, int]]:
    """(enclosing function, call, line) of every direct file call in the module's source."""
    found: list[tuple[str, str, int]] = []

    def visit(node: ast.AST, scope: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                visit(child, [*scope, child.name])
                continue
            if isinstance(child, ast.Call):
                call = _call(child)
                if call is not None:
                    found.append((".".join(scope) or "<module>", call, child.lineno))
            visit(child, scope)

    visit(ast.parse(source), [])
    return found


def _call(node: ast.Call) -> str | None:
    func = node.func
    if isinstance(func, ast.Name):
        return "open" if func.id == "open" else None
    if not isinstance(func, ast.Attribute):
        return None
    owner = func.value.id if isinstance(func.value, ast.Name) else None
    if owner == "os":
        return f"os.{func.attr}" if func.attr in OS_CALLS else None
    if owner in MODULES:
        return None if (owner, func.attr) == ("shutil", "which") else f"{owner}.{func.attr}"  # which: a PATH lookup
    if owner == "Folder":  # Folder.open: the trusted folder itself, opened O_NOFOLLOW
        return None
    if func.attr in PATH_CALLS:
        return f".{func.attr}"
    if func.attr == "replace" and len(node.args) == 1 and not node.keywords:  # Path.replace, not str.replace
        return ".replace"
    return None


def test_named_modules_touch_job_folders_only_through_beneath():
    offending = []
    for module in NAMED:
        for function, call, line in direct_touches((ROOT / module).read_text(encoding="utf-8")):
            if (module, function, call) not in ALLOWED and (module, "*", "*") not in ALLOWED:
                offending.append(f"{module}:{line} {function}: {call}")
    assert not offending, ("files touched directly in a module that handles job-writable folders: go through "
                           "myapp.fs.beneath, or allow it here with why the folder is the platform's alone:\n"
                           + "\n".join(offending))


def test_every_allowance_is_still_needed():
    """An allowance whose call is gone goes too (else it would quietly allow the next such call)."""
    seen = {(module, function, call) for module in NAMED
            for function, call, _ in direct_touches((ROOT / module).read_text(encoding="utf-8"))}
    stale = [key for key in ALLOWED if key[1] != "*" and key not in seen]
    assert not stale, f"allowances with no such call any more: {stale}"


def test_a_module_using_beneath_is_named():
    users = []
    for path in sorted((ROOT / "myapp").rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith("myapp/fs/"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(_imports_fs(node) for node in ast.walk(tree)):
            users.append(relative)
    unnamed = set(users) - set(NAMED)
    assert users and not unnamed, f"modules using myapp.fs that are not named: {unnamed}"


def _imports_fs(node: ast.AST) -> bool:
    if isinstance(node, ast.ImportFrom) and node.module:
        parts = node.module.split(".")
        return parts[:2] == ["myapp", "fs"] if node.level == 0 else parts[0] == "fs"
    return isinstance(node, ast.Import) and any(a.name.split(".")[:2] == ["myapp", "fs"] for a in node.names)


def test_the_check_sees_each_kind_of_direct_touch():
    """The reader itself: each way of touching a file is caught, and what goes through beneath is not."""
    source = '''
import os, shutil, zipfile
from pathlib import Path

def bad(path):
    open(path)
    os.listdir(path)
    os.scandir(path)
    os.walk(path)
    shutil.rmtree(path)
    zipfile.ZipFile(path)
    Path(path).read_bytes()
    path.iterdir()
    path.unlink()
    path.rmdir()
    path.replace(other)

def good(path):
    with Folder.open(path) as folder:
        folder.open_file("a/b")
        folder.remove_tree("a")
    "text".replace("a", "b")
    shutil.which("bwrap")
'''
    calls = [(function, call) for function, call, _ in direct_touches(source)]
    assert calls == [("bad", c) for c in ("open", "os.listdir", "os.scandir", "os.walk", "shutil.rmtree",
                                          "zipfile.ZipFile", ".read_bytes", ".iterdir", ".unlink", ".rmdir",
                                          ".replace")]
