"""myapp.images.environments: content hashes, requirement checks, the per-project image index (pure, files only)."""
from __future__ import annotations

import pytest

from myapp.errors import FieldError
from myapp.images import environments


def test_the_same_content_in_any_order_or_spelling_has_one_hash():
    a = environments.content_hash("python:3.11-slim", ["Six==1.17.0", "typing_extensions"])
    b = environments.content_hash("python:3.11-slim", ["typing-extensions", "six==1.17.0", "six==1.17.0"])
    assert a == b and len(a) == 32
    assert environments.content_hash("python:3.12-slim", ["six==1.17.0", "typing-extensions"]) != a
    assert environments.content_hash("python:3.11-slim", ["six==1.16.0", "typing-extensions"]) != a
    assert environments.content_hash("python:3.11-slim", ["six==1.17.0", "typing-extensions"], "3.99") != a


def test_requirements_are_checked_and_named_by_position_or_line():
    assert environments.check_requirements(["NumPy>=2.0", "six", "six"], "packages") == ["numpy>=2.0", "six"]
    for bad in ("--index-url=http://evil", "-e .", "six; rm -rf /", "git+https://x/y.git", "../wheel.whl", ""):
        with pytest.raises(FieldError) as caught:
            environments.check_requirements(["six", bad], "packages")
        assert caught.value.field == "packages[1]"
    assert environments.parse_requirements("# tools\nsix==1.17.0  # pinned\n\nrequests>=2\n") == ["six==1.17.0",
                                                                                                "requests>=2"]
    with pytest.raises(FieldError) as caught:
        environments.parse_requirements("six\n-r other.txt\n")
    assert caught.value.field == "requirements" and caught.value.reason.startswith("line 2: '-r other.txt'")


def test_freeze_keeps_pinned_packages_only():
    text = "six==1.17.0\n-e git+https://x/y.git#egg=y\nmine @ file:///home/me/mine\n# comment\nattrs==24.2.0\n"
    assert environments.freeze_requirements(text) == ["six==1.17.0", "attrs==24.2.0"]


def test_an_image_resolves_only_in_its_project_and_only_once_complete(tmp_path):
    env_hash = environments.content_hash(None, ["six"])
    environments.register(tmp_path, "team-a", "registry.local/a/env:1", env_hash)
    assert environments.resolve("registry.local/a/env:1", "team-a", tmp_path) is None  # not built (no marker)
    (tmp_path / env_hash).mkdir()
    (tmp_path / env_hash / environments.MARKER).write_text("{}")
    found = environments.resolve("registry.local/a/env:1", "team-a", tmp_path)
    assert found is not None and found.path == tmp_path / env_hash and found.python == found.path / "bin" / "python"
    assert environments.resolve("registry.local/a/env:1", "team-b", tmp_path) is None
    assert environments.resolve("registry.local/a/env:2", "team-a", tmp_path) is None
    environments.unregister(tmp_path, "team-a", "registry.local/a/env:1")
    assert environments.resolve("registry.local/a/env:1", "team-a", tmp_path) is None
    with pytest.raises(ValueError):
        environments.register(tmp_path, "../etc", "x:1", env_hash)


def test_forget_removes_the_entry_and_the_environment_once_nothing_names_it(tmp_path):
    env_hash = environments.content_hash(None, ["six"])
    (tmp_path / env_hash).mkdir()
    (tmp_path / env_hash / environments.MARKER).write_text("{}")
    environments.register(tmp_path, "team-a", "r/a:1", env_hash)
    environments.register(tmp_path, "team-b", "r/b:1", env_hash)  # another project, the same content
    assert environments.forget(tmp_path, "team-a", "r/a:1") is None
    assert environments.resolve("r/a:1", "team-a", tmp_path) is None
    assert environments.resolve("r/b:1", "team-b", tmp_path) is not None
    assert environments.forget(tmp_path, "team-b", "r/b:1") == env_hash
    assert not (tmp_path / env_hash).exists() and environments.registered_hashes(tmp_path) == set()
    assert environments.forget(tmp_path, "team-b", "r/b:1") is None  # again: nothing left to do


def test_a_shared_image_resolves_in_every_project_and_a_projects_own_name_wins(tmp_path):
    shared, own = environments.content_hash("platform", ["six"]), environments.content_hash(None, ["attrs"])
    for env_hash in (shared, own):
        (tmp_path / env_hash).mkdir()
        (tmp_path / env_hash / environments.MARKER).write_text("{}")
    environments.register_shared(tmp_path, "myapp/python-ml:3.11", shared)
    found = {environments.resolve("myapp/python-ml:3.11", ns, tmp_path).hash for ns in ("team-a", "team-b")}
    assert found == {shared}
    environments.register(tmp_path, "team-a", "myapp/python-ml:3.11", own)
    assert environments.resolve("myapp/python-ml:3.11", "team-a", tmp_path).hash == own
    assert environments.resolve("myapp/python-ml:3.11", "team-b", tmp_path).hash == shared
    assert environments.registered_hashes(tmp_path) == {shared, own}
    assert environments.forget(tmp_path, "team-a", "myapp/python-ml:3.11") == own  # the shared one stays
    assert (tmp_path / shared).is_dir()
    assert environments.resolve("myapp/python-ml:3.11", "team-a", tmp_path).hash == shared


def test_the_default_environment_is_the_platforms_packages_made_once(tmp_path):
    """Made from the platform's own venv (a chain, nothing copied), found again while those packages stay."""
    import subprocess

    from myapp.images import defaults

    env, made = defaults.ensure_local_environment(tmp_path)
    again, made_again = defaults.ensure_local_environment(tmp_path)
    assert made and not made_again and again == env
    assert env.hash == environments.content_hash(defaults.BASE, defaults.platform_packages(defaults.platform_sites()))
    assert [str(p) for p in env.site_dirs()[1:]] == defaults.platform_sites()
    seen = subprocess.run([str(env.python), "-c", "import sys, yaml; print(sys.prefix)"],
                          capture_output=True, text=True, env={}, timeout=60)
    assert seen.returncode == 0 and seen.stdout.strip() == str(env.path), seen.stderr
