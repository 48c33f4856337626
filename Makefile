# lightning_cas: `make demo` and `make test` each set everything up first (Macaulay2 included).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
SPEC ?= examples/sweep.toml

# this clone's Python kernel: a name of its own (the directory's name and a checksum of its path), so that
# setting up a second clone never re-points the notebooks of the first
KERNEL_NAME ?= $(shell d='$(CURDIR)'; printf 'lightning-cas-%s-%s' "$$(printf %s "$${d##*/}" | tr -c 'A-Za-z0-9._-' '-' | \
  cut -c1-30)" "$$(printf %s "$$d" | cksum | cut -d' ' -f1)")

.PHONY: setup m2 kernel kernel-name phc demo test lint bench critical clean

setup: m2 kernel $(STAMP)

# Macaulay2 from Debian, skipped when M2 is already on PATH.
m2:
	@if command -v M2 >/dev/null 2>&1; then echo "Macaulay2 present: $$(M2 --version)"; \
	else echo "installing Macaulay2 (apt-get)"; \
	  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends macaulay2; fi

# Debian's Macaulay2 Jupyter kernel (for `notebook --execute`), skipped when the m2 kernelspec exists.
KERNELSPEC := $(firstword $(wildcard /usr/share/jupyter/kernels/m2/kernel.json /usr/local/share/jupyter/kernels/m2/kernel.json))
kernel: m2
	@if [ -n "$(KERNELSPEC)" ]; then echo "Macaulay2 Jupyter kernel present: $(KERNELSPEC)"; \
	else echo "installing the Macaulay2 Jupyter kernel (apt-get)"; { apt-get update && DEBIAN_FRONTEND=noninteractive \
	  apt-get install -y --no-install-recommends macaulay2-jupyter-kernel; } || \
	  echo "warning: macaulay2-jupyter-kernel not installed; notebook --execute will not work"; fi

kernel-name:
	@echo $(KERNEL_NAME)

# PHCpack from Debian: the homotopy stand-in of `make critical`, and one test runs its blackbox solver.
phc:
	@if command -v phc >/dev/null 2>&1; then echo "phcpack present"; \
	else echo "installing phcpack (apt-get)"; { apt-get update && DEBIAN_FRONTEND=noninteractive \
	  apt-get install -y --no-install-recommends phcpack; } || echo "warning: phcpack not installed"; fi

$(STAMP): pyproject.toml
	@$(PYTHON) -m venv $(VENV) 2>/dev/null || { apt-get update && DEBIAN_FRONTEND=noninteractive \
	  apt-get install -y --no-install-recommends python3-venv python3-pip && $(PYTHON) -m venv $(VENV); }
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,dask,plot,notebook,torch,msolve]'
	@echo "registering the Jupyter kernel '$(KERNEL_NAME)' ($(CURDIR)/$(PY)) for $$USER in" \
	  "~/.local/share/jupyter/kernels/$(KERNEL_NAME); other clones' kernels are left as they are"
	$(PY) -m ipykernel install --user --name $(KERNEL_NAME) --display-name "Python (lightning_cas, $(notdir $(CURDIR)))"
	@touch $(STAMP)

demo: setup
	$(VENV)/bin/lightning-cas verify --widths 3,3,3 --attention 2,2 --tokens 2
	$(VENV)/bin/lightning-cas dim --widths 3,3,3 --attention 2,2 --tokens 2 --method jacobian
	$(VENV)/bin/lightning-cas dim --widths 2,2 --attention 2 --tokens 2 --method implicit
	$(VENV)/bin/lightning-cas predict --widths 3,2,3 --attention 2,2 --tokens 2
	$(VENV)/bin/lightning-cas verify --widths 10,10,10 --attention 2,2 --tokens 3
	$(VENV)/bin/lightning-cas fiber --widths 2,1 --attention 1 --tokens 2
	$(VENV)/bin/lightning-cas claims --widths 2,1 --attention 1 --tokens 2
	$(VENV)/bin/lightning-cas boundary --widths 2,1 --attention 2 --tokens 2
	$(VENV)/bin/lightning-cas verify --widths 3,3 --attention 3 --heads 2 --tokens 2
	$(VENV)/bin/lightning-cas verify --arch examples/transformer.toml
	$(VENV)/bin/lightning-cas dim --widths 2,1 --attention 1 --at examples/critical_point.json
	$(VENV)/bin/lightning-cas llc --widths 2,1 --attention 1 --at examples/critical_point.json

# two workers (the CI machine's two cores), each with its own temp dir and Macaulay2 session; a test
# file stays on one worker, so its module fixtures (implicit ideals, boundary runs) are computed once
WORKERS ?= 2
test: setup phc lint
	$(PY) -m pytest -q -p no:cacheprovider -n $(WORKERS) --dist loadfile --durations=10

# ruff, the layer order of pyproject.toml (a module imports only from its layer or below), and the types of
# the two pure layers
lint: setup
	$(VENV)/bin/ruff check lightning_cas tests benchmarks
	$(VENV)/bin/ruff format --check lightning_cas tests benchmarks
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy lightning_cas/core lightning_cas/results

bench: setup
	$(PY) -m pip install --quiet -e '.[bench]'
	$(PY) -m benchmarks.bench --out bench/results.json

# the anchor table: ED degrees of decision boundaries of the robustness-verification paper's architectures,
# ours beside the paper's, with times (bench/critical_anchor.md and .csv); CRITICAL_ARGS e.g. --timeout 600.
# Then the paper's homotopy approach on the same systems, with PHCpack's blackbox solver as its stand-in
# (bench/phc_stand_in.md; phcpack from Debian, skipped with a note where it cannot be installed). Last, the
# paper's benchmark design run: trained networks, planted and clean instances, certified verdicts
# (bench/robustness_verdicts.md)
CRITICAL_ARGS ?=
critical: setup phc
	$(PY) -m benchmarks.critical_anchor --out bench/critical_anchor.md $(CRITICAL_ARGS)
	$(PY) -m benchmarks.phc_stand_in --out bench/phc_stand_in.md
	$(PY) -m benchmarks.robustness_verdicts --out bench/robustness_verdicts.md

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache

# batch targets (sweep, paper, per-result files) live in their own fragment
-include make/batch.mk
