# Every target installs what it needs first, so a fresh clone needs no other step.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

# The checks `make lint` runs, and so CI (each a target below; `typecheck` is mypy, strict
# on toolkit/, every test body checked too).
LINT_CHECKS := lint-ruff lint-imports lint-workflows typecheck

# Test workers (pytest-xdist): one more than the cores this process may use. Many tests
# spend part of their time waiting on another process (a server's answer, a subprocess,
# the browser), so a third worker on two cores keeps both busy. `make test WORKERS=0`
# runs the suite in one process.
WORKERS ?= $(shell $(PYTHON) -c "import os; n = len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count(); print((n or 1) + 1)")

.PHONY: install install-dev test test-min site serve demo publish watch bench lint lint-ruff lint-imports lint-workflows typecheck clean

# `install` (and so `demo`, `site`, `publish`...) installs the runtime, the sandbox (its
# own distribution, toolkit-sandbox, in sandbox/: `toolkit demo` runs it) and the run
# log's SQL engine (the `sql` extra, for the demo's log queries); `test` and `lint` add
# the dev extras (pytest, linters, the browser and vendor-SDK tools). Both are installed
# editable, toolkit first, so that the sandbox finds its `toolkit` here rather than on an
# index (where another project holds that name). Each is re-installed only when the
# projects' metadata changed (idempotent).
DEV_STAMP := $(VENV)/.installed-dev-stamp

install: $(STAMP)

$(STAMP): pyproject.toml sandbox/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[sql]'
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e ./sandbox
	touch $(STAMP)

install-dev: $(DEV_STAMP)

$(DEV_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev,sdk]'
	touch $(DEV_STAMP)

# Bytecode caching on even where the environment turns it off: every worker and every
# `python -m toolkit` a test starts would compile toolkit again. Coverage of toolkit/ is
# measured on the way: the files not fully covered and the total are printed at the end,
# and a total under `[tool.coverage.report] fail_under` fails the run (`make test COV=`
# leaves coverage out, for a quicker run while working; CI keeps it).
COV ?= --cov --cov-report=term:skip-covered
test: install-dev
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest -n $(WORKERS) $(COV)

# The lower bounds of pyproject.toml, tested: every dependency pinned at its `>=` version
# (.ci/min_constraints.py) in a venv of its own, the development tools as they come, then
# the tests that exercise those dependencies. Run when a lower bound changes.
MIN_VENV  := .venv-min
MIN_TESTS := tests/test_content_rules.py tests/test_fuzz_posts.py tests/test_payload.py \
	tests/test_dependencies.py tests/site tests/test_api_client.py tests/test_client_bounds.py \
	tests/sync tests/mcp tests/export/test_export_formats.py tests/export/test_export_verify.py \
	tests/runlog tests/test_serving.py tests/test_watch.py tests/test_config.py

test-min:
	test -x $(MIN_VENV)/bin/python || $(PYTHON) -m venv $(MIN_VENV)
	$(MIN_VENV)/bin/python .ci/min_constraints.py > $(MIN_VENV)/constraints.txt
	$(MIN_VENV)/bin/python -m pip install --quiet --disable-pip-version-check \
		-c $(MIN_VENV)/constraints.txt -e '.[dev]'
	$(MIN_VENV)/bin/python -m pip install --quiet --disable-pip-version-check \
		-c $(MIN_VENV)/constraints.txt -e ./sandbox
	$(MIN_VENV)/bin/python -m pip freeze --exclude-editable > $(MIN_VENV)/installed.txt
	env -u PYTHONDONTWRITEBYTECODE $(MIN_VENV)/bin/python -m pytest -n $(WORKERS) $(MIN_TESTS)

lint: $(LINT_CHECKS)

# The rules, then the format (`ruff format` writes it).
lint-ruff: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# The layers, as import contracts ([tool.importlinter] in pyproject.toml).
lint-imports: install-dev
	$(BIN)/lint-imports --no-cache

# The GitHub workflows and the action: pinned actions, least permissions, no template injection.
lint-workflows: install-dev
	$(BIN)/zizmor --offline --quiet --min-severity medium .github/workflows action.yml

typecheck: install-dev
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

# Bytecode caching on here too: with it off, every toolkit process the bench times would
# compile each module changed since the last cached copy again.
bench: install
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m bench

clean:
	rm -rf site .toolkit/build .toolkit/preview .toolkit/demo
