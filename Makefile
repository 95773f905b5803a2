# Two set-up commands: `make run` and `make test`. Both create the virtual environment if missing.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.szrag-installed
QUESTION ?= How does szrag decide that its index is stale?

.PHONY: install run test lint typecheck pytest bench clean

$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -c constraints.txt -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

run: install
	$(BIN)/szrag index
	$(BIN)/szrag ask "$(QUESTION)"

lint: install
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck: install
	$(BIN)/mypy

pytest: install
	$(BIN)/pytest

test: lint typecheck pytest

bench: install
	$(BIN)/python benchmarks/bench_index.py

clean:
	rm -rf $(VENV) .rag .pytest_cache .mypy_cache .ruff_cache
