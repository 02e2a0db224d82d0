# The two Quick-start commands live here: `make start` and `make test`.
VENV   ?= .venv
PY     := $(VENV)/bin/python
PYTEST := $(PY) -m pytest -q -p no:cacheprovider

$(VENV)/.installed: setup.py
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test,ml]"
	touch $@

install: $(VENV)/.installed

# Embedded default: SQLite + filesystem Celery transport in ./instance, local backend.
start: install
	$(VENV)/bin/myapp init
	$(VENV)/bin/myapp run

# The whole suite: SQLite + embedded transport, then PostgreSQL (127.0.0.1:5432) + Redis (127.0.0.1:6379).
test: install
	$(PYTEST) -n 2 tests
	MYAPP_TEST_DATABASE=postgresql $(PYTEST) -n 2 tests --ignore=tests/rendering

.PHONY: install start test
