# Two commands on a fresh Linux machine with Python 3.11:
#   make test      set up .venv if needed, run the test suite
#   make figures   set up .venv if needed, run the pipeline at the default scale, write report.html
# Also: make help (every target and variable, one line each), make smoke (whole DAG at
# scale=smoke, then report.html),
# make determinism (two clean smoke builds give the same bytes; CI runs it), make lint,
# make apidocs (the API reference of accounting, from the docstrings; CI builds it),
# make bench, make clean, make lock,
# make cluster-up / cluster-down / test-cluster (a one-node SLURM on this machine, as root).
#
# Every install takes its versions from requirements.lock (exact versions of the whole
# environment); `make lock` regenerates it from a fresh venv with the newest releases that
# pyproject.toml allows. Upgrading = `make lock`, then a full `make test`, then commit the lock.

## PYTHON: the Python 3.11 that creates .venv (default python3)
PYTHON ?= python3
## VENV: the virtual environment folder (default .venv)
VENV   ?= .venv
# torch is installed first and pinned exactly: a loose requirement pulls a multi-GB CUDA build.
# Where no local CPU wheel is configured for pip, use e.g.
#   make test TORCH="torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"
## TORCH: the torch requirement installed first (default torch==2.13.0; add --index-url for CPU wheels)
TORCH  ?= torch==2.13.0
## SCALE: the pipeline scale of make figures: smoke, default or paper (default default)
SCALE  ?= default
## CORES: cores Snakemake may use in make figures and make smoke (default all)
CORES  ?= all

BIN       := $(VENV)/bin
STAMP     := $(VENV)/.installed
LOCK      := requirements.lock
LOCK_VENV := .lock-venv
# Rerunning a command resumes after a crash: a lock left by a killed run is removed (only when
# no Snakemake runs in this folder) and profiles/local reruns incomplete jobs. Logs: logs/.
UNLOCK    := $(BIN)/python -m pipeline.run.snakemake_lock
SNAKEMAKE := $(BIN)/snakemake --profile profiles/local

.PHONY: help setup test figures docs apidocs smoke determinism lint format bench clean lock cluster-up cluster-down test-cluster

setup: $(STAMP)  ## create .venv from requirements.lock (torch first)

$(STAMP): pyproject.toml $(LOCK)
	$(BIN)/python -m pip --version >/dev/null 2>&1 || $(PYTHON) -m venv --clear $(VENV)
	$(BIN)/python -m pip install -c $(LOCK) $(TORCH)
	$(BIN)/python -m pip install -c $(LOCK) -e '.[experiments,dev]'
	touch $(STAMP)

# Tests run in parallel, one worker per core (pytest-xdist), a test file at a time (session
# and module fixtures such as the shared smoke build are made once), files in collection order:
# those with slow tests first (tests/conftest.py), so that no long test is left to run alone at
# the end. (Not --dist loadgroup: with pytest 9.2 xdist_group marks do not group, pytest-xdist
# issue 1386.) TEST_WORKERS=0 runs them in this process (e.g. to use a debugger).
## TEST_WORKERS: pytest-xdist workers of make test: auto (one per core) or a number; 0 = one process
TEST_WORKERS ?= auto

test: $(STAMP)  ## run the test suite (in parallel; TEST_WORKERS=0 for one process)
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=20

figures: $(STAMP)  ## run the pipeline at SCALE (default) on CORES, write report.html
	$(UNLOCK)
	$(SNAKEMAKE) --cores $(CORES) --config scale=$(SCALE)
	$(SNAKEMAKE) --config scale=$(SCALE) --report report.html
	$(BIN)/python -m pipeline.post.build_cost $(SCALE)
	-$(BIN)/python -m pipeline.post.log_audit $(SCALE)  # names long jobs without progress, noisy logs

# The docs' generated blocks (README.md and docs/: pipeline/post/doc_blocks.py DOCS) from the
# results of SCALE (the SLURM plan from a dry run at SCALE):
# python -m pipeline.post.doc_blocks --check says which disagree, writing nothing.
docs: $(STAMP)  ## rewrite the docs' generated blocks from the results of SCALE (after make figures)
	$(BIN)/python -m pipeline.post.doc_blocks --scale $(SCALE)

# The API reference of the accounting library, generated from its docstrings by Sphinx
# (docs/api/; open docs/_build/api/index.html). Warnings are errors, so the build fails on a
# docstring that is not valid reST, a public object without a docstring, or a name of an
# __all__ missing from the reference (docs/api/conf.py). About 10 s.
apidocs: $(STAMP)  ## build the API reference of accounting into docs/_build/api (warnings fail)
	$(BIN)/sphinx-build -E -a -q -W --keep-going -b html docs/api docs/_build/api

# A one-node SLURM on this machine (root; installs Debian's slurm-wlm, slurmdbd, MariaDB):
# .ci/slurm-up. test-cluster runs the tests marked `slurm` against it (skipped in `make test`).
cluster-up:  ## start a one-node SLURM on this machine (root)
	.ci/slurm-up

cluster-down:  ## stop the one-node SLURM
	.ci/slurm-down

test-cluster: $(STAMP) cluster-up  ## run the tests marked slurm against the one-node SLURM
	FILTERLAB_SLURM=1 $(BIN)/python -m pytest -m slurm -rA tests/pipeline/test_cluster.py

smoke: $(STAMP)  ## the whole DAG at scale=smoke on CORES, write report.html
	$(UNLOCK)
	$(SNAKEMAKE) --cores $(CORES) --config scale=smoke
	$(SNAKEMAKE) --config scale=smoke --report report.html
	$(BIN)/python -m pipeline.post.build_cost smoke
	-$(BIN)/python -m pipeline.post.log_audit smoke

# Two clean smoke builds in temporary folders (PYTHONHASHSEED 1 and 2, --cores 1 and 2) must
# give byte-identical data, results and figures; sidecars may differ only in the facts of the run.
determinism: $(STAMP)  ## two clean smoke builds must give the same bytes
	$(BIN)/python -m pipeline.post.determinism

# Exact versions of everything `pip install -e '.[experiments,dev]'` pulls in today, resolved
# in a throw-away venv (filterlab itself excluded; local version labels such as +cpu dropped,
# so the lock installs from PyPI too).
lock:  ## regenerate requirements.lock from a fresh venv
	rm -rf $(LOCK_VENV)
	$(PYTHON) -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/python -m pip install $(TORCH)
	$(LOCK_VENV)/bin/python -m pip install -e '.[experiments,dev]'
	{ echo "# Exact versions of the filterlab environment (Python 3.11), written by make lock."; \
	  echo "# Installed with: pip install -c requirements.lock ... (see Makefile)."; \
	  $(LOCK_VENV)/bin/python -m pip freeze --exclude-editable \
	    | sed -E 's/^([A-Za-z0-9._-]+==[^+]+)\+[A-Za-z0-9.]+$$/\1/'; } > $(LOCK).tmp
	mv $(LOCK).tmp $(LOCK)
	rm -rf $(LOCK_VENV)

# mypy checks the files of pyproject.toml's [tool.mypy] (accounting and experiments, no module
# exempt); its cache (.mypy_cache) brings a rerun from about 40 s to a few seconds.
lint: $(STAMP)  ## ruff check, ruff format --check, mypy (accounting, experiments, pipeline)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: $(STAMP)  ## ruff format and ruff check --fix
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# Each as a module from the repository root (python -m benchmarks.<topic>), where the
# experiments package (never installed) is importable.
bench: $(STAMP)  ## run every benchmarks/<topic>.py (python -m benchmarks.<topic>)
	@set -e; found=0; for script in benchmarks/[!_]*.py; do \
		[ -e "$$script" ] || continue; found=1; topic=$$(basename "$$script" .py); \
		echo "== python -m benchmarks.$$topic"; $(BIN)/python -m "benchmarks.$$topic"; \
	done; [ $$found = 1 ] || echo "no benchmarks/*.py yet"

# Removes generated results, figures, logs and processed data (keeps data/raw and the READMEs).
clean:  ## remove generated results, figures, logs and processed data
	find results figures data/processed -mindepth 1 ! -name README.md -delete
	rm -rf .snakemake report.html logs

# One line per target (the `## ` comment beside it), then one per variable (the `## NAME: `
# comment above it).
help:  ## list the targets and the variables, one line each
	@echo "Targets (make <target>):"
	@awk -F ':.*## ' '/^[a-z-]+:.*## / {printf "  %-14s %s\n", $$1, $$2}' $(MAKEFILE_LIST)
	@echo "Variables (make <target> NAME=value):"
	@awk '/^## [A-Z_]+: / {name = substr($$2, 1, length($$2) - 1); sub(/^## [A-Z_]+: /, ""); \
		printf "  %-14s %s\n", name, $$0}' $(MAKEFILE_LIST)
