# The two Quick-start commands live here: `make start` and `make test`.
VENV   ?= .venv
PY     := $(VENV)/bin/python
PYTEST := $(PY) -m pytest -q -p no:cacheprovider
UI_SRC := $(shell find frontend/src frontend/index.html frontend/vite.config.ts frontend/tsconfig.json -type f 2>/dev/null)

$(VENV)/.installed: setup.py
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test,ml]"
	touch $@

install: $(VENV)/.installed

frontend/node_modules/.installed: frontend/package.json frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# The browser UI: type-checked and built by Vite into frontend/dist, which Flask serves under /ui/.
frontend/dist/index.html: frontend/node_modules/.installed $(UI_SRC)
	cd frontend && npm run --silent build

ui: frontend/dist/index.html

# Embedded default: SQLite + filesystem Celery transport in ./instance, local backend.
start: install ui
	$(VENV)/bin/myapp init
	$(VENV)/bin/myapp run

# The whole suite: the UI's own unit tests (Vitest); then SQLite + embedded transport, including the
# browser tests (Playwright driving /usr/bin/chromium); then PostgreSQL (127.0.0.1:5432) + Redis (127.0.0.1:6379).
test: install ui
	cd frontend && npx vitest run
	$(PYTEST) -n 2 tests
	MYAPP_TEST_DATABASE=postgresql $(PYTEST) -n 2 tests --ignore=tests/rendering --ignore=tests/e2e

.PHONY: install ui start test
