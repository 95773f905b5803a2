# Two set-up commands: `make run` and `make test`. Both create the virtual environment if missing.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.szrag-installed
QUESTION ?= How does szrag decide that its index is stale?
PORT ?= 8787
ROOT ?= .

.PHONY: install run ask test lint typecheck pytest bench docs browser postgres clean

$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -c constraints.txt -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

# Index this repository, then serve the page, the API and Slack on http://127.0.0.1:$(PORT)/
run: install
	$(BIN)/szrag index --root "$(ROOT)"
	$(BIN)/szrag serve --root "$(ROOT)" --port $(PORT)

# Answer one question in the terminal (no key needed: retrieval-only answer)
ask: install
	$(BIN)/szrag ask --root "$(ROOT)" "$(QUESTION)"

lint: install
	$(BIN)/ruff check src tests benchmarks eval
	$(BIN)/ruff format --check src tests benchmarks eval

typecheck: install
	$(BIN)/mypy

pytest: install
	$(BIN)/pytest

test: lint typecheck pytest

# The tables of docs/CONFIGURATION.md, made again from src/szrag/base/variables.py
docs: install
	$(BIN)/python -m szrag.base.variables docs/CONFIGURATION.md

bench: install
	$(BIN)/python benchmarks/bench_index.py
	$(BIN)/python benchmarks/bench_parse.py
	$(BIN)/python benchmarks/bench_server.py

# Debian's Chromium and its driver, for the web page's browser test (root)
browser:
	command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver)

# Debian's PostgreSQL server, for the PostgreSQL store's tests (root): they run a cluster of
# their own with its initdb and pg_ctl, and libpq is what psycopg loads
postgres:
	command -v initdb >/dev/null || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql)

clean:
	rm -rf $(VENV) .rag .pytest_cache .mypy_cache .ruff_cache
