# Every target installs what it needs first, so a fresh clone needs no other step.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

# The checks `make lint` runs, and so CI (each a target below; `typecheck` is mypy, strict
# on toolkit/).
LINT_CHECKS := lint-ruff lint-workflows typecheck

# Test workers (pytest-xdist): four, even on two cores, as many tests mostly wait (on
# subprocesses, on the sandbox's rate-limit windows, on server deadlines). `make test
# WORKERS=0` runs the suite in one process.
WORKERS ?= 4

.PHONY: install test site serve demo publish watch bench lint lint-ruff lint-workflows typecheck clean

install: $(STAMP)

# Re-install only when the project's metadata changed (idempotent).
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev,sdk]'
	touch $(STAMP)

test: install
	$(BIN)/python -m pytest -n $(WORKERS)

lint: $(LINT_CHECKS)

lint-ruff: install
	$(BIN)/ruff check .

# The GitHub workflows and the action: pinned actions, least permissions, no template injection.
lint-workflows: install
	$(BIN)/zizmor --offline --quiet --min-severity medium .github/workflows action.yml

typecheck: install
	$(BIN)/mypy

site: install
	$(BIN)/toolkit build

# The port of `make serve` and `make watch` (`make serve PORT=8001` when 8000 is taken).
PORT ?= 8000

# The site as built just now, at http://127.0.0.1:$(PORT)/ (Ctrl-C stops it).
serve: site
	$(BIN)/toolkit serve --port $(PORT)

demo: install
	$(BIN)/toolkit demo

publish: install
	$(BIN)/toolkit publish

watch: install
	$(BIN)/toolkit watch --port $(PORT)

bench: install
	$(BIN)/python -m bench

clean:
	rm -rf site .toolkit/build .toolkit/preview .toolkit/demo
