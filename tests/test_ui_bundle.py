"""The chart library never loads with the first page: Vite's manifest of the built UI (`make ui`) says which
chunks index.html loads before anything lazy, and none of them may hold Apache ECharts, which comes only
with `components/charts/EChart.tsx`, imported lazily by the `Chart` component (docs/ui.md, Charts)."""
from __future__ import annotations

import json
from pathlib import Path

DIST = Path(__file__).resolve().parents[1] / "frontend" / "dist"
CHART_MODULE = "src/components/charts/EChart.tsx"
# A string literal of ECharts' core (echarts/lib/core/echarts.js) that minifying keeps.
ECHARTS_MARK = b"_echarts_instance_"


def manifest() -> dict[str, dict]:
    path = DIST / ".vite" / "manifest.json"
    assert path.is_file(), "build the UI first: make ui"
    return json.loads(path.read_text(encoding="utf-8"))


def static_closure(chunks: dict[str, dict], key: str) -> set[str]:
    """The chunk `key` and every chunk it imports statically, transitively (what loads with it)."""
    seen: set[str] = set()
    todo = [key]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(chunks[name].get("imports", []))
    return seen


def test_first_page_loads_no_chart_library() -> None:
    chunks = manifest()
    first = static_closure(chunks, "index.html")
    assert CHART_MODULE not in first, "the first page imports the chart component's ECharts module statically"
    holding = [chunks[k]["file"] for k in first if ECHARTS_MARK in (DIST / chunks[k]["file"]).read_bytes()]
    assert not holding, f"ECharts is in what the first page loads: {holding}"


def test_the_chart_library_is_a_lazy_chunk() -> None:
    """The other side of the check above: ECharts is built, in a chunk loaded on demand, and the mark finds it."""
    chunks = manifest()
    assert chunks[CHART_MODULE].get("isDynamicEntry"), "EChart.tsx must be imported lazily (Chart.tsx)"
    lazy = static_closure(chunks, CHART_MODULE)
    assert any(ECHARTS_MARK in (DIST / chunks[k]["file"]).read_bytes() for k in lazy)
