# Every target installs what it needs first, so a fresh clone needs no other step.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: install test site demo publish watch bench lint clean

install: $(STAMP)

# Re-install only when the project's metadata changed (idempotent).
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

test: install
	$(BIN)/python -m pytest

lint: install
	$(BIN)/ruff check .

site: install
	$(BIN)/toolkit build

demo: install
	$(BIN)/toolkit demo

publish: install
	$(BIN)/toolkit publish

watch: install
	$(BIN)/toolkit watch

bench: install
	$(BIN)/python -m bench

clean:
	rm -rf site .toolkit/build .toolkit/preview .toolkit/demo
