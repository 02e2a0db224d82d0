"""Entry code that needs only the standard library is executed for real."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from myapp.rendering.catalog import CATALOG_ROOT


def load(template: str):
    path = CATALOG_ROOT / template / "main.py"
    spec = importlib.util.spec_from_file_location(f"entry_{template.replace('-', '_')}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_image_build_prepare_writes_dockerfile(tmp_path):
    prepare = load("image-build")
    out = tmp_path / "Dockerfile"
    prepare.main(["--base-image", "python:3.11-slim", "--packages", '["numpy==2.1.0", "scikit-learn>=1.5,<2"]',
                  "--output", str(out)])
    assert out.read_text() == ("FROM python:3.11-slim\n"
                               "RUN pip install --no-cache-dir numpy==2.1.0 'scikit-learn>=1.5,<2'\n")
    prepare.main(["--dockerfile", "FROM scratch\n", "--output", str(out)])
    assert out.read_text() == "FROM scratch\n"
    with pytest.raises(ValueError):
        prepare.dockerfile_for("python:3.11", ["numpy; rm -rf /"])


def test_python_template_runs_script_and_command(tmp_path):
    main = CATALOG_ROOT / "python" / "main.py"
    marker = tmp_path / "ran"
    script = f"open({str(marker)!r}, 'w').write('ok')"
    subprocess.run([sys.executable, str(main), "--script", script], check=True)
    assert marker.read_text() == "ok"
    done = subprocess.run([sys.executable, str(main), "--command", "exit 3"], check=False)
    assert done.returncode == 3


def test_model_register_dry_run(capsys, monkeypatch):
    register = load("model-register")
    monkeypatch.setenv("MYAPP_PROJECT", "vision")
    assert register.main(["--model-name", "digits", "--model-version", "1", "--model-path", "s3://m/x",
                          "--metrics", '{"accuracy": 0.97}', "--dry-run", "true"]) == 0
    assert '"accuracy": 0.97' in capsys.readouterr().out


def test_entry_code_compiles():
    for path in Path(CATALOG_ROOT).glob("*/main.py"):
        compile(path.read_text(), str(path), "exec")
