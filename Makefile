# The course's commands. `make course` runs every notebook; `make test` runs every check.
# Both first create (or refresh, when pyproject.toml changed) the project environment .venv.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.course-installed
EXTRAS ?= dev
OUT ?= build/course

.PHONY: course test lab venv lint unit nbval clean help

help:
	@echo "make course  - run every notebook headless (papermill) into $(OUT) and summarise the results"
	@echo "make test    - ruff, unit tests, and pytest --nbval over notebooks/ in smoke mode"
	@echo "make lab     - open the notebooks in JupyterLab"
	@echo "make venv    - only create/refresh the environment $(VENV)"

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[$(EXTRAS)]"
	@touch $(STAMP)
	@echo "Environment ready: $(VENV) ($$($(BIN)/python -c 'import tensorflow as tf; print("TensorFlow", tf.__version__)' 2>/dev/null))"

venv: $(STAMP)

course: $(STAMP)
	$(BIN)/course run --out $(OUT)

lint: $(STAMP)
	$(BIN)/ruff check .

unit: $(STAMP)
	COURSE_OFFLINE=1 $(BIN)/python -m pytest tests

nbval: $(STAMP)
	COURSE_OFFLINE=1 COURSE_SMOKE=1 $(BIN)/python -m pytest --nbval notebooks/

test: lint unit nbval

lab: $(STAMP)
	$(BIN)/jupyter lab notebooks/

clean:
	rm -rf build .pytest_cache .ruff_cache
