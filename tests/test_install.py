"""The Kubernetes install manifests: strict schema validation and no wildcard or cluster-admin RBAC."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_install_manifests_validate():
    result = subprocess.run([sys.executable, str(ROOT / "install" / "validate.py")], capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
