# The two Quick-start commands live here: `make start` and `make test`.
VENV   ?= .venv
PY     := $(VENV)/bin/python
PYTEST := $(PY) -m pytest -q -p no:cacheprovider --durations=15
UI_SRC := $(shell find frontend/src frontend/index.html frontend/vite.config.ts frontend/tsconfig.json -type f 2>/dev/null)

# --no-compile: pip would compile every module of every package (37 s of a 67 s install here, pip's cache
# warm), most of them never imported; Python compiles what is imported, once, on first use.
$(VENV)/.installed: setup.py
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --no-compile -e ".[test,ml,notebook,serving]"
	touch $@

install: $(VENV)/.installed

frontend/node_modules/.installed: frontend/package.json frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# The browser UI: type-checked and built by Vite into frontend/dist, which Flask serves under /ui/.
# Vite says only what is wrong (`npm run build` in frontend/ lists every file it wrote).
frontend/dist/index.html: frontend/node_modules/.installed $(UI_SRC)
	cd frontend && npm run --silent build -- --logLevel warn

ui: frontend/dist/index.html

# The UI's API types, generated from the server's OpenAPI spec (tests/api/test_openapi_types.py checks drift).
api-types: install frontend/node_modules/.installed
	$(PY) -m myapp.api.openapi_dump --types

# Linters: ruff and mypy on the Python (settings in pyproject.toml), ESLint on the UI; any finding fails.
lint: lint-python lint-ui

lint-python: install
	$(VENV)/bin/ruff check myapp tests benchmarks
	$(VENV)/bin/mypy

lint-ui: frontend/node_modules/.installed
	cd frontend && npm run --silent lint

# Embedded default: SQLite + filesystem Celery transport in ./instance, local backend.
# Local jobs run sealed off in bubblewrap (docs/backends-local.md#isolation); root installs it when missing.
bwrap:
	@command -v bwrap >/dev/null || [ "$$(id -u)" != 0 ] || { apt-get update -qq && apt-get install -y -qq bubblewrap; }

start: install ui bwrap
	$(VENV)/bin/myapp init
	$(VENV)/bin/myapp run

# The whole suite: linters; the UI's own unit tests (Vitest); SQLite + embedded transport, the whole suite
# with the browser tests (Playwright driving /usr/bin/chromium); PostgreSQL (127.0.0.1:5432) + Redis
# (127.0.0.1:6379), the tests marked `backends` (what can differ between the two: dialect paths, locks,
# triggers, migrations, the broker, shared limits, the platform's own processes); then every benchmark's
# quick mode (three at a time: a quick mode proves the benchmark runs and computes its figures, which are not
# precise). Each step prints its wall time, and all of them again at the end with the total.
# The Python install (mostly waiting on the network) and then ruff and mypy run beside the UI's steps, which
# need only Node (its packages, build, ESLint, Vitest); the Python side's output is shown when both sides
# are done, and the summary says which steps ran side by side.
# Bytecode is cached (this machine's environment sets PYTHONDONTWRITEBYTECODE): every platform process a test
# starts, and each pytest worker's rewritten test modules (half of collecting the suite), compile once per checkout.
unexport PYTHONDONTWRITEBYTECODE

# Three test processes on two cores: much of a test's time is spent waiting on the processes it starts (the
# platform, jobs, chromium), which a third worker fills (on a quiet 2-core machine the SQLite pass took
# 529 s instead of ~660 s with two, the PostgreSQL pass 204 s instead of ~250 s).
TEST_WORKERS ?= 3

STEPS := .test-steps
STEP  := ./tests/timed_step.sh $(STEPS)

test:
	@rm -f $(STEPS) $(STEPS).python; date +%s > $(STEPS).start
	@{ $(STEP) "install (beside UI)" $(MAKE) --no-print-directory install && \
	   $(STEP) "lint Python (beside UI)" $(MAKE) --no-print-directory lint-python; } > $(STEPS).python 2>&1 & \
	 python=$$!; \
	 $(STEP) "UI packages" $(MAKE) --no-print-directory frontend/node_modules/.installed && \
	 $(STEP) "UI build" $(MAKE) --no-print-directory ui && \
	 $(STEP) "lint UI" $(MAKE) --no-print-directory lint-ui && \
	 $(STEP) sandbox $(MAKE) --no-print-directory bwrap && \
	 $(STEP) Vitest sh -c 'cd frontend && npx vitest run'; ui=$$?; \
	 wait $$python; python=$$?; cat $(STEPS).python; rm -f $(STEPS).python; \
	 [ $$ui -eq 0 ] && [ $$python -eq 0 ]
	@$(STEP) "pytest SQLite + embedded" $(PYTEST) -n $(TEST_WORKERS) --dist worksteal -m "not benchmark and not second_pass" tests
	@MYAPP_TEST_DATABASE=postgresql $(STEP) "pytest PostgreSQL + Redis" $(PYTEST) -n $(TEST_WORKERS) --dist worksteal -m "backends and not benchmark" tests
	@$(STEP) benchmarks $(PYTEST) -n $(TEST_WORKERS) -m benchmark tests/test_benchmarks_quick.py
	@printf '== %-33s %7d s\n' total: $$(( $$(date +%s) - $$(cat $(STEPS).start) )) >> $(STEPS); rm -f $(STEPS).start
	@cat $(STEPS)

.PHONY: install ui api-types lint lint-python lint-ui start test bwrap
