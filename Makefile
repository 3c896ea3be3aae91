# Two commands on a fresh Linux machine with Python 3.11:
#   make test      set up .venv if needed, run the test suite
#   make figures   set up .venv if needed, run the pipeline at the default scale, write report.html
# Also: make smoke (whole DAG at scale=smoke), make lint, make bench, make clean.

PYTHON ?= python3
VENV   ?= .venv
# torch is installed first and pinned exactly: a loose requirement pulls a multi-GB CUDA build.
# Where no local CPU wheel is configured for pip, use e.g.
#   make test TORCH="torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"
TORCH  ?= torch==2.13.0
SCALE  ?= default
CORES  ?= all

BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup test figures smoke report lint format bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(BIN)/python -m pip --version >/dev/null 2>&1 || $(PYTHON) -m venv --clear $(VENV)
	$(BIN)/python -m pip install $(TORCH)
	$(BIN)/python -m pip install -e '.[experiments,dev]'
	touch $(STAMP)

test: $(STAMP)
	$(BIN)/python -m pytest

figures: $(STAMP)
	$(BIN)/snakemake --cores $(CORES) --config scale=$(SCALE)
	$(BIN)/snakemake --config scale=$(SCALE) --report report.html

smoke: $(STAMP)
	$(BIN)/snakemake --cores $(CORES) --config scale=smoke

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: $(STAMP)
	@set -e; found=0; for script in benchmarks/[!_]*.py; do \
		[ -e "$$script" ] || continue; found=1; \
		echo "== $$script"; $(BIN)/python "$$script"; \
	done; [ $$found = 1 ] || echo "no benchmarks/*.py yet"

# Removes generated results, figures and processed data (keeps data/raw and the READMEs).
clean:
	find results figures data/processed -mindepth 1 ! -name README.md -delete
	rm -rf .snakemake report.html
