"""Layers point one way, checked statically: no import cycle among the modules under myapp/, each part
imports only the parts its line of MAY_IMPORT names (docs/architecture.md opens with the same table in
words), and the REST API never reaches a backend itself (it reads logs and metrics through
myapp.pipelines.observation).

Every import counts wherever it is written (module level, inside functions, under
TYPE_CHECKING): a lazy import only hides a cycle until someone moves it to the top.
An edge goes to the module imported; `from pkg import name` goes to `pkg.name` when that is a
module, else to `pkg` (its __init__). Parent packages run on import too, but counting them
would make every package whose __init__ re-exports its submodules a cycle.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "myapp"


def module_files() -> dict[str, Path]:
    out = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def import_graph() -> dict[str, dict[str, str]]:
    """module -> {imported module under myapp: "file:line" of the first such import}."""
    modules = module_files()
    graph: dict[str, dict[str, str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: dict[str, str] = {}
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                targets = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source
                           for alias in node.names]
            else:
                continue
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            for target in targets:
                while target and target not in modules and "." in target:
                    target = target.rpartition(".")[0]  # `import myapp.x.y as z` of a name in a module
                if target in modules and target != name:
                    edges.setdefault(target, where)
        graph[name] = edges
    return graph


# What each part of myapp/ may import: a package (myapp/<name>/) or a module of the top level
# (myapp/<name>.py) -> the other parts its modules import. An import of a part not on its line fails
# test_each_part_imports_only_what_its_line_allows; a part on a line that no module imports any more
# fails too, so the table (and the map in docs/architecture.md) says what is, not what once was.
MAY_IMPORT: dict[str, set[str]] = {
    # the top level: entry points and what every part uses
    "myapp": set(),  # the package's __init__: nothing
    "config": set(),  # settings from the environment
    "errors": set(),  # domain errors, no HTTP
    "client": set(),  # the typed REST client users import: nothing of the server
    "checkpoint": set(),  # the checkpoint helper jobs import: standard library only
    "extensions": {"shared"},  # db, appbuilder, cache, csrf; the generations every process checks
    "app": {"api", "auth", "celery_app", "config", "extensions", "inputs", "projects", "web"},
    "celery_app": {"config", "extensions", "shared", "tasks"},
    "tasks": {"admission", "backends", "experiments", "extensions", "images", "models", "notebooks", "outputs",
              "pipelines", "serving", "shared"},
    "cli": {"api", "app", "backends", "config", "errors", "experiments", "host", "models", "pipelines", "rendering",
            "scheduler", "setup_data"},
    "setup_data": {"admission", "auth", "backends", "experiments", "extensions", "fs", "images", "models",
                   "pipelines"},
    "worker": {"app"},
    "wsgi": {"app"},
    # the packages
    "models": set(),  # SQL models only
    "fs": {"errors"},  # the one way into folders jobs write
    "scheduler": {"errors"},  # pure: the decision, traces, the simulator (no database, no Flask)
    "rendering": {"notebooks", "outputs"},  # pure: templates -> manifests, the catalog, the label contract
    "inputs": {"rendering"},  # input fields (quantities), limits on parsed data
    "shared": {"config", "extensions", "models"},  # broker, generations, shared limits, reconcile requests
    "auth": {"errors", "extensions", "inputs", "models", "rendering", "shared"},
    "outputs": {"errors", "extensions", "fs", "models"},
    "projects": {"backends", "errors", "extensions", "fs", "models", "notebooks"},
    "backends": {"checkpoint", "extensions", "fs", "images", "models", "outputs", "pipelines", "rendering"},
    "admission": {"backends", "extensions", "models", "notebooks", "outputs", "rendering", "scheduler"},
    "pipelines": {"admission", "auth", "backends", "client", "errors", "extensions", "inputs", "models", "outputs",
                  "rendering"},
    "notebooks": {"auth", "backends", "errors", "extensions", "models", "outputs", "pipelines", "rendering"},
    "images": {"auth", "backends", "errors", "extensions", "fs", "models", "notebooks", "pipelines", "rendering"},
    # (pipelines: the images a project may use and their pull secrets, pipelines/images.py)
    "serving": {"backends", "errors", "extensions", "fs", "models", "outputs", "pipelines", "rendering"},
    # hyperparameter search: the study (Optuna), the driver, its requests and YAML; the CLI's in-process mode
    # drives trials' runs with the run controller on the backends, as `myapp pipeline run --wait` does
    "experiments": {"backends", "client", "errors", "extensions", "inputs", "models", "outputs", "pipelines",
                    "shared"},
    "api": {"admission", "app", "auth", "errors", "experiments", "extensions", "images", "inputs", "models",
            "notebooks", "outputs", "pipelines", "projects", "rendering", "scheduler", "serving", "shared"},
    "web": {"api", "auth", "errors", "extensions", "models", "notebooks"},
    "host": {"backends", "rendering"},  # the platform user and its namespace (uids: the sandbox's; the source tree)
}


def part(module: str) -> str:
    """myapp.outputs.store -> outputs; myapp.config -> config; myapp -> myapp."""
    return module.split(".")[1] if "." in module else module


def layer_violations(graph: dict[str, dict[str, str]], table: dict[str, set[str]]) -> list[str]:
    """Each import of a part its importer's line does not name, and each line's part no module imports."""
    out, used = [], set()
    for module, edges in sorted(graph.items()):
        source = part(module)
        if source not in table:
            out.append(f"{source} has no line in the table ({module})")
            continue
        for target, where in sorted(edges.items()):
            if part(target) == source:
                continue
            used.add((source, part(target)))
            if part(target) not in table[source]:
                out.append(f"{source} may not import {part(target)}: {module} -> {target} ({where})")
    out += [f"{source} may import {target}, but none of its modules does: take it off its line"
            for source, targets in sorted(table.items()) for target in sorted(targets)
            if (source, target) not in used and source in {part(m) for m in graph}]
    return out


def strongly_connected(graph: dict[str, dict[str, str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative; only components of two or more modules (self-imports are skipped)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def cycle_edges(graph: dict[str, dict[str, str]]) -> dict[frozenset[tuple[str, str]], list[str]]:
    """Per cycle (strongly connected component): its edges, and each edge described with its import."""
    out = {}
    for component in strongly_connected(graph):
        members = set(component)
        edges = sorted((a, b) for a in component for b in graph[a] if b in members)
        out[frozenset(edges)] = [f"{a} -> {b} ({graph[a][b]})" for a, b in edges]
    return out


def test_the_graph_sees_every_kind_of_import():
    """The checks below are only as good as the graph: lazy, relative, `from pkg import module`."""
    graph = import_graph()
    assert "myapp.pipelines.observation" in graph["myapp.api.streams"]  # module level, relative
    assert "myapp.pipelines.observation" in graph["myapp.api.task_runs"]  # inside a method
    assert "myapp.backends.kubernetes.logs" in graph["myapp.backends.kubernetes.backend"]  # from . import logs
    assert "myapp.rendering.contract" in graph["myapp.rendering.pod"]  # a sibling
    assert "myapp.images.environments" in graph["myapp.backends.local.plan"]  # two levels up
    assert "myapp.backends" in graph["myapp.pipelines.observation"]  # a package's __init__


def test_strongly_connected_finds_a_planted_cycle():
    graph = {"a": {"b": "a.py:1"}, "b": {"c": "b.py:1"}, "c": {"a": "c.py:9", "d": "c.py:2"}, "d": {}}
    assert strongly_connected(graph) == [["a", "b", "c"]]
    assert cycle_edges(graph) == {frozenset({("a", "b"), ("b", "c"), ("c", "a")}): [
        "a -> b (a.py:1)", "b -> c (b.py:1)", "c -> a (c.py:9)"]}


def test_no_import_cycles_under_myapp():
    cycles = cycle_edges(import_graph())
    assert not cycles, "import cycles:\n" + "\n\n".join("\n".join(lines) for lines in cycles.values())


def test_the_api_never_imports_a_backend():
    graph = import_graph()
    reached = [f"{module} -> {target} ({where})" for module, edges in sorted(graph.items())
               if module.startswith("myapp.api.") or module == "myapp.api"
               for target, where in sorted(edges.items())
               if target == "myapp.backends" or target.startswith("myapp.backends.")]
    assert not reached, "myapp/api reads logs and metrics through myapp.pipelines.observation:\n" + "\n".join(reached)


def test_the_label_contract_imports_nothing_of_myapp():
    """Rendering and every backend import myapp.rendering.contract; it must not pull either in."""
    assert import_graph()["myapp.rendering.contract"] == {}


def test_each_part_imports_only_what_its_line_allows():
    problems = layer_violations(import_graph(), MAY_IMPORT)
    assert not problems, "imports outside the table (tests/test_layers.py MAY_IMPORT):\n" + "\n".join(problems)


def test_the_layer_check_fails_on_an_edge_outside_the_table():
    graph = {"myapp.scheduler.policy": {"myapp.errors": "myapp/scheduler/policy.py:3",
                                        "myapp.models": "myapp/scheduler/policy.py:4"},
             "myapp.errors": {}, "myapp.models": {}, "myapp.tasks": {}}
    table = {"scheduler": {"errors", "config"}, "errors": set(), "models": set()}
    assert layer_violations(graph, table) == [
        "scheduler may not import models: myapp.scheduler.policy -> myapp.models (myapp/scheduler/policy.py:4)",
        "tasks has no line in the table (myapp.tasks)",
        "scheduler may import config, but none of its modules does: take it off its line"]


def test_every_part_has_a_line_and_names_only_parts():
    parts = {part(module) for module in module_files()}
    assert set(MAY_IMPORT) == parts
    assert set().union(*MAY_IMPORT.values()) <= parts


PURE = ("myapp.scheduler", "myapp.rendering", "myapp.outputs.declarations")


def test_the_pure_parts_import_no_database_and_no_flask():
    """myapp.scheduler decides, myapp.rendering renders and the outputs' declarations are read everywhere:
    plain data in, plain data out (the SQL side of scheduling is myapp.admission)."""
    found = []
    graph = import_graph()
    for name, path in module_files().items():
        if not any(name == p or name.startswith(p + ".") for p in PURE):
            continue
        found += [f"{name} imports {target} ({where})" for target, where in graph[name].items()
                  if part(target) in ("extensions", "models")]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            found += [f"{path.relative_to(ROOT)}:{node.lineno} imports {n}" for n in names
                      if n.split(".")[0] in ("flask", "flask_appbuilder", "sqlalchemy", "celery")
                      or n in ("myapp.extensions", "myapp.models") or n.startswith("myapp.models.")]
    assert not found, "\n".join(found)


def test_the_map_in_the_architecture_doc_is_this_table():
    """docs/architecture.md opens with the table in words: one row per part, its last column the parts it may use."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = text[text.index("| part | what it owns | may use |"):].split("\n\n")[0].splitlines()[2:]
    described: dict[str, set[str]] = {}
    for row in rows:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        names = [name.strip(" `").removesuffix(".py").removesuffix("/") for name in cells[0].split(",")]
        uses = set() if cells[-1] == "nothing" else {name.strip() for name in cells[-1].split(",")}
        for name in names:
            described["myapp" if name == "__init__" else name] = uses
    assert described == MAY_IMPORT
