"""The UI's tree shows its parts (docs/ui.md): one folder per page under frontend/src/pages, the page
itself `<Name>Page.tsx` in it and the only page module App.tsx routes to; one API module folder."""
from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "frontend" / "src"


def test_one_folder_per_page() -> None:
    loose = [p.name for p in (SRC / "pages").iterdir() if p.is_file()]
    assert not loose, f"a page's files go in its folder under pages/: {loose}"
    routed = re.findall(r'["\']\./pages/([^"\']+)["\']', (SRC / "App.tsx").read_text(encoding="utf-8"))
    assert routed
    wrong = [r for r in routed if not re.fullmatch(r"[a-z]+/[A-Z][A-Za-z]*Page", r)]
    assert not wrong, f"App.tsx routes to pages/<folder>/<Name>Page only: {wrong}"


def test_one_api_module() -> None:
    assert (SRC / "api").is_dir()
    assert not [p.name for p in SRC.glob("api.*")], "the API client lives in src/api/"
