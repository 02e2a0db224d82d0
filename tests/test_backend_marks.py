"""The second pass of `make test` (PostgreSQL + Redis) runs only the tests marked `backends`: this keeps
that set honest.

Every module under myapp/ and migrations/ whose code can behave differently on PostgreSQL + Redis than on
SQLite + the embedded broker (a `dialect` branch, a row lock, a trigger, raw SQL text, Redis, the broker
transports, generations, shared limits) must be in BACKEND_CODE with the tests that exercise it, and those
tests must carry the `backends` mark. A new such module, or a mark taken off, fails here.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MIGRATION_TESTS = ("tests/models/test_ids.py", "tests/models/test_rules.py", "tests/images/test_migration.py",
                   "tests/notebooks/test_migration.py", "tests/serving/test_migration.py",
                   "tests/scheduler/test_migration_0022.py", "tests/pipelines/test_webhook_secrets.py",
                   "tests/pipelines/test_task_image_migration.py")

# module (or folder, for every module in it) -> the test modules that run its backend-specific paths
BACKEND_CODE: dict[str, tuple[str, ...]] = {
    "myapp/api/raw_select.py": ("tests/api/test_raw_select.py",),
    "myapp/api/id_list.py": ("tests/api/test_lists.py",),
    "myapp/models/list_count.py": ("tests/api/test_list_counts.py",),
    "myapp/models/base.py": ("tests/models/test_ids.py", "tests/api/test_bad_input.py"),
    "myapp/app.py": ("tests/api/test_pool_ping.py", "tests/api/test_bad_input.py"),
    "myapp/api/scope.py": ("tests/auth/test_callers.py",),
    "myapp/auth/callers.py": ("tests/auth/test_callers.py",),
    "myapp/shared/generations.py": ("tests/shared/test_generations.py", "tests/auth/test_callers.py"),
    "myapp/shared/limits.py": ("tests/shared/test_limits.py",),
    "myapp/api/streams.py": ("tests/shared/test_limits.py",),
    "myapp/auth/logins.py": ("tests/shared/test_limits.py", "tests/api/test_users.py"),
    "myapp/auth/login_limits.py": ("tests/auth/test_login_limits.py", "tests/shared/test_limits.py"),
    "myapp/shared/broker.py": ("tests/test_celery.py", "tests/pipelines/test_action_lane.py"),
    "myapp/celery_app.py": ("tests/test_celery.py", "tests/pipelines/test_action_lane.py",
                            "tests/pipelines/test_faults.py"),
    "myapp/config.py": ("tests/test_celery.py",),
    "myapp/shared/reconcile_requests.py": ("tests/pipelines/test_reconcile_queue.py",),
    "myapp/pipelines/controller.py": ("tests/pipelines/test_controller_round_trips.py",
                                      "tests/pipelines/test_faults.py"),
    "myapp/pipelines/scheduling.py": ("tests/pipelines/test_scheduling.py",),
    "myapp/admission/gate.py": ("tests/admission/test_admission_concurrency.py",
                                 "tests/admission/test_admission_local.py"),
    "myapp/notebooks/lifecycle.py": ("tests/notebooks/test_lifecycle.py",),
    "myapp/api/projects.py": ("tests/api/test_project_delete_race.py",),
    "myapp/pipelines/backend_calls.py": ("tests/api/test_project_delete_race.py",
                                         "tests/pipelines/test_controller_round_trips.py"),
    "migrations": MIGRATION_TESTS,
}

# The platform's own processes end to end, on PostgreSQL + Redis, and the fuzz run (it found a 500 only
# PostgreSQL gives): not tied to one module, marked all the same.
WHOLE_PLATFORM = ("tests/test_example_pipeline.py", "tests/test_remote_cli.py", "tests/test_fuzz_api.py",
                  "tests/auth/test_run_tokens.py", "tests/auth/test_run_token_reach.py",
                  "tests/security/test_job_isolation.py",
                  "tests/notebooks/test_restart.py")

BACKEND_MODULES = frozenset({"redis", "kombu", "shared_limits", "broker"})  # importing one uses a backend's own path
BACKEND_NAMES = frozenset({"generations", "slot_store", "SlotStore"})  # the shared stores, Redis or a file


def backend_specific(tree: ast.AST) -> list[str]:
    """What in a module's code can differ between the database and broker backends (empty: nothing)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and (node.attr.startswith("dialect") or (
                node.attr == "name" and isinstance(node.value, ast.Name) and node.value.id == "dialect")):
            found.append(f"line {node.lineno}: a dialect branch")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and (
                node.func.attr == "with_for_update"
                or (node.func.attr == "text" and isinstance(node.func.value, ast.Name)
                    and node.func.value.id in ("sa", "sqlalchemy"))):
            found.append(f"line {node.lineno}: {node.func.attr}()")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "CREATE TRIGGER" in node.value:
            found.append(f"line {node.lineno}: a trigger")
        elif _imports_backend(node):
            found.append(f"line {node.lineno}: imports a backend")
    return found


def _imports_backend(node: ast.AST) -> bool:
    if isinstance(node, ast.Import):
        return any(a.name.split(".")[-1] in BACKEND_MODULES for a in node.names)
    if isinstance(node, ast.ImportFrom):
        module = node.module or ""
        parts = module.split(".")
        return (module.startswith("sqlalchemy.dialects") or parts[0] in BACKEND_MODULES or parts[-1] in BACKEND_MODULES
                or module.endswith("shared.limits")  # myapp/shared/limits.py
                or (parts[-1] == "shared" and any(a.name == "limits" for a in node.names))
                or any(a.name in BACKEND_MODULES | BACKEND_NAMES for a in node.names))
    return False


def marks(path: Path) -> set[str]:
    """The marks a test module's `pytestmark` gives all its tests."""
    out: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            for sub in ast.walk(node.value):
                if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Attribute) and sub.value.attr == "mark":
                    out.add(sub.attr)
    return out


def owner(relative: str) -> str | None:
    return next((key for key in BACKEND_CODE if relative == key or relative.startswith(key + "/")), None)


def test_every_backend_specific_module_names_its_tests() -> None:
    unlisted = {}
    for path in sorted([*ROOT.glob("myapp/**/*.py"), *ROOT.glob("migrations/**/*.py")]):
        relative = path.relative_to(ROOT).as_posix()
        found = backend_specific(ast.parse(path.read_text()))
        if found and owner(relative) is None:
            unlisted[relative] = found
    assert not unlisted, ("modules with code that differs between SQLite + embedded and PostgreSQL + Redis, "
                          f"not in BACKEND_CODE with the tests that run it on both: {unlisted}")


def test_listed_modules_exist_and_differ() -> None:
    for key in BACKEND_CODE:
        target = ROOT / key
        files = sorted(target.glob("**/*.py")) if target.is_dir() else [target]
        assert files and any(backend_specific(ast.parse(f.read_text())) for f in files), (
            f"{key} is listed as backend-specific but has no such code (or is gone): take it off the list")


@pytest.mark.parametrize("test_module", sorted({t for ts in BACKEND_CODE.values() for t in ts} | set(WHOLE_PLATFORM)))
def test_their_tests_run_in_the_second_pass(test_module: str) -> None:
    path = ROOT / test_module
    assert path.is_file(), f"{test_module} is named in BACKEND_CODE but does not exist"
    assert "backends" in marks(path), (
        f"{test_module} runs backend-specific code but is not marked: add `pytest.mark.backends` to its pytestmark, "
        "or the PostgreSQL + Redis pass of `make test` skips it")


def test_the_checker_sees_what_it_must() -> None:
    """The detector itself: each kind of backend-specific code is found, plain code is not."""
    cases = {
        "if db.engine.dialect.name == 'sqlite': pass": True,
        "q = sa.select(T).with_for_update(skip_locked=True)": True,
        "s.execute(sa.text('SELECT 1'))": True,
        "DDL = 'CREATE TRIGGER t AFTER INSERT ON x'": True,
        "import redis": True,
        "from .extensions import db, generations": True,
        "from ..shared_limits import slot_store": True,
        "from ..shared import limits as shared_limits": True,
        "from ..shared.limits import SlotStore": True,
        "ids = value if dialect.name == 'postgresql' else dump(value)": True,
        "from sqlalchemy.dialects.postgresql import JSONB": True,
        "x = sa.select(T).where(T.id == 1)": False,
        "body = await answer.text()": False,
        "from .extensions import db": False,
    }
    for source, expected in cases.items():
        assert bool(backend_specific(ast.parse(source))) is expected, source
