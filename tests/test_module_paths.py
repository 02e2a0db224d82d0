"""Module paths written outside imports name modules that exist: `python:myapp.web.gunicorn_conf` and
`myapp.wsgi:app` in the Dockerfile, docker-compose.yml and install/, gunicorn's `worker_class` and
`logger_class`, `-m myapp.notebooks.proxy`, Celery's `-A myapp.worker:celery`, setup.py's entry point and
package data, mock.patch("myapp.x.y") and every other string in the code, the tests and the benchmarks;
and `myapp/x/y.py` paths in those files and in the docs. Resolved statically (nothing is imported): a
dotted path's longest module prefix must be a file under myapp/, and the name after it must be defined
at the top of that module (or be a module of that package).
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOTTED = re.compile(r"(?<![\w.$/-])(myapp(?:\.[A-Za-z_]\w*)+)(?::([A-Za-z_]\w*))?(?![\w/-])")
PATH = re.compile(r"(?<![\w./-])(myapp/[\w/]+\.py)\b")
DEPLOY = ["Dockerfile", "docker-compose.yml", "Makefile", "setup.py", "pyproject.toml",
          *(str(p.relative_to(ROOT)) for p in sorted((ROOT / "install").rglob("*.y*ml"))),
          *(str(p.relative_to(ROOT)) for p in sorted((ROOT / ".ci").glob("*")) if p.is_file())]
DOCS = ["README.md", *(str(p.relative_to(ROOT)) for p in sorted((ROOT / "docs").glob("*.md"))),
        *(str(p.relative_to(ROOT)) for p in sorted((ROOT / "benchmarks").glob("*.md")))]


def task_names() -> set[str]:
    """Celery's task names (`@shared_task(name="myapp.reconcile_run")`): names on the wire, not modules."""
    out = set()
    for node in ast.walk(ast.parse((ROOT / "myapp" / "tasks.py").read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "shared_task":
            out.update(k.value.value for k in node.keywords if k.arg == "name" and isinstance(k.value, ast.Constant))
    return out


# Names that only look like module paths: Celery's queues (myapp/config.py), the SQLite file of the
# embedded default, the marker of a served request's log line (myapp/serving/request_logs.py), and the
# sample lines a test of an import detector reads.
NOT_MODULES = {"myapp.actions", "myapp.background", "myapp.sqlite", "myapp.request", "myapp.api.fields",
               *task_names()}


def module_file(dotted: str) -> Path | None:
    base = ROOT / Path(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def top_level_names(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for leaf in ast.walk(target):
                    if isinstance(leaf, ast.Name):
                        names.add(leaf.id)
    return names


def resolves(dotted: str, attribute: str | None = None) -> bool:
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        path = module_file(".".join(parts[:i]))
        if path is None:
            continue
        rest = parts[i:] + ([attribute] if attribute else [])
        return not rest or rest[0] in top_level_names(path)
    return False


def strings(path: Path) -> list[tuple[int, str]]:
    """The string constants of a Python file, docstrings left out (they are prose, read by people)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


def unresolved_in(where: str, text: str) -> list[str]:
    return [f"{where}: {m.group(0)}" for m in DOTTED.finditer(text)
            if m.group(1) not in NOT_MODULES and not resolves(m.group(1), m.group(2))]


def missing_paths_in(where: str, text: str) -> list[str]:
    return [f"{where}: {m.group(1)}" for m in PATH.finditer(text) if not (ROOT / m.group(1)).is_file()]


def test_the_resolver_tells_a_module_path_from_a_stale_one():
    assert resolves("myapp.web.gunicorn_conf") and resolves("myapp.wsgi", "app")
    assert resolves("myapp.web.gunicorn_worker.BalancedThreadWorker") and resolves("myapp.outputs.store")
    assert not resolves("myapp.gunicorn_conf") and not resolves("myapp.web.gunicorn_worker.NoSuchWorker")
    assert unresolved_in("x", '["gunicorn", "-c", "python:myapp.gunicorn_conf"]') == ["x: myapp.gunicorn_conf"]
    assert unresolved_in("x", "celery -A myapp.worker:nothing") == ["x: myapp.worker:nothing"]
    assert unresolved_in("x", "labels: myapp.io/run, host nb.myapp.local") == []
    assert missing_paths_in("x", "see myapp/outputs_store.py and myapp/outputs/store.py") == [
        "x: myapp/outputs_store.py"]


def test_deploy_files_name_modules_that_exist():
    found = []
    for name in DEPLOY:
        text = (ROOT / name).read_text(encoding="utf-8")
        found += unresolved_in(name, text) + missing_paths_in(name, text)
    assert not found, "\n".join(found)


def test_strings_in_the_code_name_modules_that_exist():
    """mock.patch targets, gunicorn class paths, `python:`/`-m`/`-A` arguments, Celery include lists."""
    found = []
    for top in ("myapp", "tests", "benchmarks"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if path == Path(__file__).resolve():
                continue
            for lineno, value in strings(path):
                found += unresolved_in(f"{path.relative_to(ROOT)}:{lineno}", value)
    assert not found, "\n".join(found)


def test_paths_in_the_docs_and_code_name_files_that_exist():
    found = []
    for name in DOCS:
        found += missing_paths_in(name, (ROOT / name).read_text(encoding="utf-8"))
    for top in ("myapp", "tests", "benchmarks"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if path == Path(__file__).resolve():
                continue
            found += missing_paths_in(str(path.relative_to(ROOT)), path.read_text(encoding="utf-8"))
    assert not found, "\n".join(found)
