"""Code, migrations, docs, benchmarks and tests speak of what the platform does, not of the work items
that made it: no numbered tracker items ("issue 12", "issue #12's") and no "the issue's target".
A link into an upstream project's tracker (https://github.com/owner/repo/issues/N) is a reference, kept.
"""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLACES = ("myapp", "migrations", "docs", "benchmarks", "templates", "job-templates", "install", "tests",
          "frontend/src", "README.md", "Makefile", "Dockerfile")
SUFFIXES = {".py", ".md", ".ts", ".tsx", ".css", ".html", ".j2", ".yaml", ".yml", ".toml", ".json", ".sh",
            ".txt", ".cfg", ".ini", ""}
SKIP = {"node_modules", "__pycache__", "dist"}
URL = re.compile(r"\bhttps?://\S+")
WORK_ITEM = re.compile(r"\bissues?\s*#?\d+|\b(?:the|this|that)\s+issue\b(?!s)", re.IGNORECASE)


def files() -> list[Path]:
    out = []
    for place in PLACES:
        root = ROOT / place
        candidates = [root] if root.is_file() else sorted(root.rglob("*"))
        out += [p for p in candidates
                if p.is_file() and p.suffix in SUFFIXES and not SKIP.intersection(p.relative_to(ROOT).parts)]
    return out


def references(text: str) -> list[str]:
    return [m.group(0) for line in text.splitlines() for m in WORK_ITEM.finditer(URL.sub("", line))]


def test_the_pattern() -> None:
    assert references("Model serving (issue 15): what") == ["issue 15"]
    assert references("see Issue #7's note") == ["Issue #7"]
    assert references("the verdict against the issue's targets") == ["the issue"]
    assert references("when this issue lands") == ["this issue"]
    assert references("upstream bug https://github.com/pallets/flask/issues/5160, worked around") == []
    assert references("the controller issues a token; gate.issue(code)") == []


def test_no_work_items_named() -> None:
    me = Path(__file__).resolve()
    found = []
    for path in files():
        if path.resolve() == me:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            for ref in references(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {ref!r}")
    assert not found, "name what the platform does, not the work item:\n" + "\n".join(found)
