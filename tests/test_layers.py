"""Layers point one way, checked statically: no import cycle among the modules under myapp/, and
the REST API never reaches a backend itself (it reads logs and metrics through myapp.observation).

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
    assert "myapp.observation" in graph["myapp.api.streams"]  # module level, relative
    assert "myapp.observation" in graph["myapp.api.task_runs"]  # inside a method
    assert "myapp.backends.kubernetes.logs" in graph["myapp.backends.kubernetes.backend"]  # from . import logs
    assert "myapp.contract" in graph["myapp.rendering.pod"]  # two levels up
    assert "myapp.backends" in graph["myapp.observation"]  # a package's __init__


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
    assert not reached, "myapp/api reads logs and metrics through myapp.observation:\n" + "\n".join(reached)


def test_the_label_contract_imports_nothing_of_myapp():
    """Rendering and every backend import myapp.contract; it must not pull either in."""
    assert import_graph()["myapp.contract"] == {}
