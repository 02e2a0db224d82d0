"""Rendering tests need no app, database or network: only the repo on sys.path."""
from __future__ import annotations

import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:  # when run as `pytest` rather than `python -m pytest`
    sys.path.insert(0, str(REPO_ROOT))
