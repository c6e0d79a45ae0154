# The course's commands. `make course` runs every notebook; `make test` runs every check, tier by tier.
# Both first create the project environment .venv, or refresh it when pyproject.toml, the extras asked for or
# the Python change (scripts/venv.sh). GPU=1 with any of them also installs the gpu extra.

# PYTHON=python3.12: the Python to make .venv with (requires-python in pyproject.toml says which are accepted).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# What .venv holds - its Python and extras - is recorded in the stamp and compared with what is asked for.
STAMP := $(VENV)/.course-installed
# EXTRAS=...: the extras to install. Two packages: the student's, course-utils (pyproject.toml: lab, gpu, profile),
# and the instructor's tools, course-tools (tools/pyproject.toml: class, site, dev; "tools" for the tools alone).
# By default each command installs what its user needs: make lab and make venv the lab extra (JupyterLab: a
# student's), make course lab and the tools (the runner: an instructor's), make site the site extra, the test
# commands dev (the tests' tools, the class tooling, the site and the profiler). Extras installed before stay.
EXTRAS ?=
EXTRAS_FOR := dev
lab venv: EXTRAS_FOR := lab
course: EXTRAS_FOR := lab,tools
site: EXTRAS_FOR := site
# GPU=1: also the gpu extra - tensorflow[and-cuda], CUDA and cuDNN as pip wheels (Linux, WSL2); it then stays.
GPU ?= 0
ifeq ($(filter 0 1,$(GPU)),)
$(error GPU=$(GPU) is not a switch: write GPU=1 to install the gpu extra)
endif
empty :=
comma := ,
# Expanded where it is used, so a command's own EXTRAS_FOR counts.
INSTALL_EXTRAS = $(subst $(empty) $(empty),$(comma),$(sort $(subst $(comma), ,$(or $(EXTRAS),$(EXTRAS_FOR))) \
  $(if $(filter 1,$(GPU)),gpu)))
OUT ?= build/course
CI_OUT ?= build/ci/course
# make site: the course run it shows (the Chinese run is beside it, with -zh added), and where the site goes.
SITE_FROM ?= $(OUT)
SITE ?= build/site
# TIER_TIMES=FILE: each tier also appends "tier<TAB>seconds<TAB>exit status" to FILE (.ci/run sums them up).
TIER_TIMES ?=

PYTEST := COURSE_OFFLINE=1 $(BIN)/python -m pytest -rs
# TensorFlow's CPU kernels differ by CPU: oneDNN is on by default on Linux only where the CPU has AVX-512 VNNI/BF16,
# AVX-VNNI or AMX, and most students' CPUs have none. Each tier that runs notebooks sets it, whatever CI's CPU is:
# off (as on those CPUs) for nbval's two Run Alls of the English notebooks and the browser; on for the hosted tier's
# run of the Chinese notebooks (as on Colab's Xeons) and the Slurm job (docs/maintainers.md, "Two kinds of CPU").
ONEDNN_OFF := TF_ENABLE_ONEDNN_OPTS=0
ONEDNN_ON := TF_ENABLE_ONEDNN_OPTS=1
TIERS := lint unit nbval browser hosted tools hub slurm

# `make test` runs the tiers in three lanes side by side: lint, nbval, unit | hosted, slurm, tools, browser | hub.
# The first two keep the two CPU cores of a CI machine busy; the hub tier, which waits for JupyterHub at times, runs
# beside them, so that no core sits idle while the last tier ends. The browser tier shows what the nbval tier (the English notebooks) and the hosted tier (the
# Chinese ones) executed, so it comes after both. The second lane starts at once (the hosted tier makes its own
# environment) while the first makes .venv.
# Each lane's output is printed in one piece when it ends; every tier runs even when another fails.
LANE1 := lint nbval unit
LANE2 := hosted slurm tools browser

.PHONY: course site test lab venv clean help lane1 lane2 links hub slurm $(TIERS) FORCE

# $(call timed,COMMAND): run COMMAND, print the tier's elapsed seconds, keep COMMAND's exit status.
# pytest's 5 (no tests collected) fails the tier like any other non-zero status.
define timed
@printf '%s\n' '== $@: $(subst ','\'',$(1))'; \
start=$$(date +%s); $(1); status=$$?; seconds=$$(( $$(date +%s) - start )); \
if [ $$status -eq 0 ]; then verdict=passed; \
elif [ $$status -eq 5 ]; then verdict="FAILED (exit 5: pytest collected no tests)"; \
else verdict="FAILED (exit $$status)"; fi; \
echo "== $@: $$seconds s, $$verdict"; \
if [ -n "$(TIER_TIMES)" ]; then printf '%s\t%s\t%s\n' '$@' "$$seconds" "$$status" >> "$(TIER_TIMES)"; fi; \
exit $$status
endef

help:
	@echo "make course    - run every notebook headless (papermill) into $(OUT), the Chinese ones into $(OUT)-zh,"
	@echo "                 and summarise the results"
	@echo "make site      - the course as a website in $(SITE), from the executed notebooks of make course"
	@echo "                 (never runs a notebook); view it: python -m http.server -d $(SITE)"
	@echo "make test      - every tier below, each timed, in three lanes side by side: $(LANE1) | $(LANE2) | hub"
	@echo "make lint      - ruff check ., then scripts/course_lint.py (the rules the pages, notebooks and translations follow)"
	@echo "make unit      - unit tests: pytest tests -m 'not notebook and not browser and not hub' (no course notebook runs),"
	@echo "                 the tools' tests (tests/tools) left to make tools"
	@echo "make nbval     - pytest --nbval in smoke mode (cell by cell) on notebooks/, each notebook twice in one kernel;"
	@echo "                 the first run kept in $(CI_OUT) (executed notebooks and records) for make browser"
	@echo "make browser   - the notebooks in JupyterLab in headless Chromium (widgets live; others as nbval ran them);"
	@echo "                 and the website built from the nbval and hosted tiers' runs (tests/test_site.py)"
	@echo "make tools     - the instructor's tools (course_tools: runner, bench, class): tests/tools but the real hub"
	@echo "make hub       - JupyterHub with hub/jupyterhub_config.py, two real OS accounts, notebook 02 for each (root)"
	@echo "make hosted    - course run --smoke of the Chinese notebooks into $(CI_OUT)-zh with Colab's and Kaggle's"
	@echo "                 TensorFlow and Keras, in $(HOSTED_VENV) (constraints/hosted.txt), after checking that"
	@echo "                 installing the package keeps them; then checks on what each notebook recorded"
	@echo "make slurm     - cluster/slurm/course-array.sbatch on a one-node Slurm here (root; installs slurm-wlm and"
	@echo "                 munge when missing), its merged report compared with an unsharded run's (build/ci/slurm)"
	@echo "make links     - write the Colab, Kaggle and Binder badges (every notebook, the README's table) and the"
	@echo "                 hosted setup cell into every notebook, from Repository and version in pyproject.toml"
	@echo "make lab       - open the notebooks in JupyterLab"
	@echo "make venv      - only create/refresh the environment $(VENV)"
	@echo "make clean     - delete build/ (results, reports, screenshots) and the test and lint caches; keeps $(VENV)"
	@echo "make help      - this list"
	@echo "GPU=1          - with any of them (make lab GPU=1, make venv GPU=1): also install the gpu extra"
	@echo "                 (CUDA and cuDNN as pip wheels, Linux and WSL2); it stays installed"
	@echo "PYTHON=...     - make $(VENV) with this Python, e.g. make venv PYTHON=python3.12 (accepted: $(PYTHONS))"
	@echo "EXTRAS=...     - the extras to install into $(VENV) (default: lab for make lab, venv and course; site for"
	@echo "                 make site; dev for the tests), e.g. make venv EXTRAS=class"
	@echo "OUT=DIR        - where make course writes (default $(OUT); the Chinese run: $(OUT)-zh)"
	@echo "EDITIONS=en    - make course runs the English notebooks only (default: $(EDITIONS); make site needs both)"
	@echo "SMOKE=1        - make course runs the short versions (so does COURSE_SMOKE=1 make course)"
	@echo "SITE_FROM=DIR  - the course run make site shows (default $(OUT), and DIR-zh for the Chinese pages)"

PYTHONS = $(shell sh scripts/venv.sh --accepted)

# Runs every time; does nothing when the stamp says .venv holds what is asked for (see scripts/venv.sh).
$(STAMP): pyproject.toml tools/pyproject.toml constraints/course.txt FORCE
	@PYTHON='$(PYTHON)' PYTHON_GIVEN='$(filter-out undefined default file,$(origin PYTHON))' VENV='$(VENV)' \
	  EXTRAS='$(INSTALL_EXTRAS)' sh scripts/venv.sh

FORCE:

venv: $(STAMP)

# The Chinese notebooks (notebooks/zh/) first, into $(OUT)-zh; then the English ones, whose summary ends the output.
# EDITIONS=en (or zh) runs one edition only; make site needs both.
EDITIONS ?= zh en
SMOKE ?=  # 1: make course runs the short versions (COURSE_SMOKE=1 does the same)
course: $(STAMP)
ifneq ($(filter zh,$(EDITIONS)),)
	$(BIN)/course run notebooks/zh/*.ipynb --out $(OUT)-zh $(if $(SMOKE),--smoke)
endif
ifneq ($(filter en,$(EDITIONS)),)
	$(BIN)/course run --out $(OUT) $(if $(SMOKE),--smoke)
endif

# The website (tools/course_tools/site/build.py): Sphinx and MyST-NB from the site extra; builds offline, executes nothing.
site: $(STAMP)
	$(BIN)/python -m course_tools.site.build --from $(SITE_FROM) --out $(SITE)

# lint: ruff; ruff's preview rule PLW1514 (each text file opened, read or written names its encoding: Windows'
# default is not UTF-8), on the code that runs on students' machines; the course's own rules.
lint: $(STAMP)
	$(call timed,$(BIN)/ruff check . && $(BIN)/ruff check --preview --select PLW1514 course_utils tools scripts \
	  && $(BIN)/python scripts/course_lint.py)

unit: $(STAMP)
	$(call timed,$(PYTEST) tests -m "not notebook and not browser and not hub" --ignore=tests/tools \
	  --durations=10)

# nbval runs each English notebook cell by cell, as a student does, and then again in the same kernel, as a student
# does after changing a parameter (tests/tiers/nbval_again.py; each run's checkpoint must pass). The first run is kept
# in $(CI_OUT) as a course run keeps one (executed/, results/): the browser tier shows it. The Chinese notebooks run
# the same code (scripts/course_lint.py's rule translation compares it) and the hosted tier runs them whole.
nbval: $(STAMP)
	$(call timed,rm -rf $(CI_OUT) build/ci/nbval && $(ONEDNN_OFF) COURSE_RESULTS_DIR=$(CURDIR)/build/ci/nbval/results \
	  COURSE_LOG_DIR=$(CURDIR)/build/ci/nbval/tb-logs COURSE_NBVAL_KEEP=$(abspath $(CI_OUT)) \
	  COURSE_OFFLINE=1 COURSE_SMOKE=1 $(BIN)/python -m pytest --nbval -p tests.tiers.nbval_again notebooks/ \
	  --ignore=notebooks/zh)

# A second environment with the hosted runtimes' versions (scripts/hosted.sh); the course's .venv is not used.
# It runs the Chinese notebooks with `course run` into $(CI_OUT)-zh, oneDNN on (Colab's CPUs have AVX-512), and
# checks each record (tests/tiers/test_course_run.py).
HOSTED_VENV ?= .venv-hosted
hosted:
	$(call timed,$(ONEDNN_ON) VENV=$(HOSTED_VENV) OUT=build/ci/hosted CI_OUT=$(CI_OUT) PYTHON=$(PYTHON) sh scripts/hosted.sh)

# Root, Debian/Ubuntu: a one-node Slurm on this machine runs the shipped sbatch script (scripts/slurm_check.sh;
# about 40 s once slurm-wlm and munge are installed, which .ci/run does).
slurm: $(STAMP)
	$(call timed,$(ONEDNN_ON) OUT=build/ci/slurm bash scripts/slurm_check.sh)

links: $(STAMP)
	$(BIN)/python -m course_tools.links

# Only the files that hold browser tests: collecting all of tests/ for them took 9 s (tests/test_make.py checks that
# every file with the marker is named here).
BROWSER_TESTS := tests/test_browser.py tests/test_doctor_page.py tests/test_reports_browser.py tests/test_site.py
browser: $(STAMP)
	$(call timed,$(ONEDNN_OFF) COURSE_CI_OUT=$(CI_OUT) $(PYTEST) $(BROWSER_TESTS) -m browser)

# The instructor's tools (tools/, the course-tools package): their unit tests and the real hub (make slurm is the
# cluster's tier). Needs root (CI runs as root) and configurable-http-proxy (.ci/run installs it into build/npm).
tools: $(STAMP)
	$(call timed,$(PYTEST) tests/tools -m "not hub")

hub: $(STAMP)
	$(call timed,$(PYTEST) tests/tools/hub -m hub)

test:
	@echo "== make test: three lanes side by side: $(LANE1) | $(LANE2) | hub; output appears as each lane ends"
	$(call timed,$(MAKE) --no-print-directory -k -j3 --output-sync=target lane1 lane2 hub)

lane1: $(STAMP)
	@$(MAKE) --no-print-directory -k -j1 $(LANE1)

lane2:
	@$(MAKE) --no-print-directory -k -j1 $(LANE2)

lab: $(STAMP)
	$(BIN)/jupyter lab notebooks/

clean:
	rm -rf build .pytest_cache .ruff_cache
