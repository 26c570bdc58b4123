# Every target installs what it needs first, so a fresh clone needs no other step.
# The interpreter .venv is made with (once: remove .venv to change it). An optimised
# build runs the suite faster: CI takes the system's own Python 3 when it has one
# (.ci/run; CONTRIBUTING.md, "Where the time goes").
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

# The checks `make lint` runs, and so CI (each a target below; `typecheck` is mypy, strict
# on toolkit/, every test body checked too).
LINT_CHECKS := lint-ruff lint-imports lint-workflows typecheck

# Test workers (pytest-xdist): two more than the cores this process may use. Many tests
# spend part of their time waiting on another process (a server's answer, a subprocess,
# the browser), so four workers on two cores keep both busy (on two cores: 3 workers
# 168-177 s, 4 workers 164-168 s, CONTRIBUTING.md). `make test WORKERS=0` runs the suite
# in one process.
WORKERS ?= $(shell $(PYTHON) -c "import os; n = len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count(); print((n or 1) + 2)")

.PHONY: install install-dev test test-fast test-min site serve demo publish watch bench lint lint-ruff lint-imports lint-workflows typecheck clean

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
# measured on the way (`--coverage`, tests/support/coverage_run.py: traced in the workers
# while tests run, combined into .coverage at the end); then `coverage report` prints the
# files not fully covered and the total, and fails the run when the total is under
# `[tool.coverage.report] fail_under`. `make test COV=` leaves coverage out, for a
# quicker run while working; CI keeps it.
COV ?= --coverage
# Coverage's `sys.monitoring` core costs least, and measures branches (which the floor
# counts) from Python 3.14 on: there it is asked for by name. On 3.12 and 3.13 coverage
# would refuse it with branches on (a warning, then its default core), and 3.11 has no
# `sys.monitoring`; both keep the default core.
COVERAGE_CORE ?= $(shell $(PYTHON) -c "import sys; print('sysmon' if sys.version_info >= (3, 14) else '')")
COVERAGE_ENV := $(if $(COVERAGE_CORE),COVERAGE_CORE=$(COVERAGE_CORE))
test: install-dev
	env -u PYTHONDONTWRITEBYTECODE $(COVERAGE_ENV) $(BIN)/python -m pytest -n $(WORKERS) $(COV)
	$(if $(COV),$(BIN)/python -m coverage report)

# The inner loop: the tests that need no process, network or browser (the `fast` ones of
# tests/support/plugin.py, chosen from the fixtures each test uses and its folder), without
# coverage. A selected test that starts a process or opens a socket all the same fails,
# naming what it did. `make test` (all of them) is what CI runs.
FAST_WORKERS ?= 2
test-fast: install-dev
	env -u PYTHONDONTWRITEBYTECODE TOOLKIT_TEST_FAST=1 $(BIN)/python -m pytest -q -n $(FAST_WORKERS)

# The lower bounds of pyproject.toml, tested: every dependency pinned at its `>=` version
# (.ci/min_constraints.py) in a venv of its own, the development tools as they come, then
# the tests that exercise those dependencies. Run when a lower bound changes.
MIN_VENV  := .venv-min
MIN_TESTS := tests/content/test_rules.py tests/e2e/test_fuzz_posts.py tests/content/test_payload.py \
	tests/test_dependencies.py tests/site tests/clients/test_base.py tests/clients/test_bounds.py \
	tests/sync tests/mcp tests/export/test_export_formats.py tests/export/test_export_verify.py \
	tests/runlog tests/shared/test_serving.py tests/watch/test_watch.py tests/config/test_loading.py

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
