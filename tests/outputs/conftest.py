"""The local backend tests' fixtures (LocalBackends on the test's own workdir, jobs stopped after)."""
from tests.backends.local.conftest import backend, backends  # noqa: F401
