"""Golden files: the exact manifests of every template in two scenarios.

Regenerate after an intended change with:
    UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/rendering/test_golden.py
and review the diff of tests/rendering/golden/.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from myapp.rendering import render
from tests.rendering.support import catalog, scenarios

GOLDEN_DIR = Path(__file__).parent / "golden"
SCENARIOS = list(scenarios())


def dump(manifests: list[dict]) -> str:
    return yaml.safe_dump_all(manifests, sort_keys=False, explicit_start=True, allow_unicode=True, width=100)


@pytest.mark.parametrize("name,scenario,args,ctx,resources", SCENARIOS,
                         ids=[f"{s[0]}--{s[1]}" for s in SCENARIOS])
def test_golden(name, scenario, args, ctx, resources):
    text = dump(render(catalog()[name], args, ctx, resources))
    path = GOLDEN_DIR / f"{name}--{scenario}.yaml"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(text)
    assert path.exists(), f"missing golden file {path}; run with UPDATE_GOLDEN=1"
    assert text == path.read_text(), f"{path.name} changed; review and regenerate with UPDATE_GOLDEN=1"


def test_every_template_has_golden_files():
    expected = {f"{s[0]}--{s[1]}.yaml" for s in SCENARIOS}
    assert {p.name for p in GOLDEN_DIR.glob("*.yaml")} == expected
    assert {s[0] for s in SCENARIOS} == set(catalog())


def test_render_is_deterministic():
    for name, _scenario, args, ctx, resources in SCENARIOS:
        first = render(catalog()[name], args, ctx, resources)
        assert render(catalog()[name], dict(args), ctx, resources) == first
        assert dump(first) == dump(render(catalog()[name], args, ctx, resources))
