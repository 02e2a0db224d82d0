"""The test suite. Its folders follow myapp/ (tests/api for myapp/api, tests/pipelines for myapp/pipelines, ...);
tests/security and tests/e2e are cross-cutting. Every folder is a package, so modules are imported by their full
name (`tests.api.test_input`): basenames may repeat across folders and nothing here shadows a top-level name.

Fixtures live in the conftest.py files (each folder's sees its own and its parents'); helpers that are not
fixtures live in support modules (tests/support.py, tests/<folder>/support.py, tests/world.py,
tests/fake_backend.py, tests/k8s_double/), which test modules import. No test module imports another.
"""
