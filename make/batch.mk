# Batch runs, included from the Makefile, which defines VENV, PY, SPEC and `setup`.
#   make sweep SPEC=examples/sweep.toml [OUT=dir] [JOBS=2] [EXECUTOR=local|dask]
#   make -j 4 batch SPEC=...   one make target per result file: parallel, and resumes where it stopped
#   make paper                 the paper's dimension results: paper/dimensions.csv and paper/dimensions.png
LCAS ?= $(PY) -m lightning_cas
OUT ?= results/$(basename $(notdir $(SPEC)))
JOBS ?= 2
EXECUTOR ?= local
PAPER_SPEC ?= examples/paper.toml
PAPER_DIR ?= paper
# Values reach the shell single-quoted (a space or ; in SPEC/OUT is a file name, not a command).
lcas_q = '$(subst ','\'',$(1))'

.PHONY: sweep batch paper report

sweep: setup
	$(LCAS) sweep $(call lcas_q,$(SPEC)) --out $(call lcas_q,$(OUT)) --jobs $(call lcas_q,$(JOBS)) \
	  --executor $(call lcas_q,$(EXECUTOR))

report: setup
	$(LCAS) report $(call lcas_q,$(OUT))

# The generated makefile has a rule per $(OUT)/<label>.json calling `sweep --only <label>`, and
# results.csv depending on all of them; it is regenerated whenever the spec changes.
$(OUT)/jobs.mk: $(SPEC) | setup
	@mkdir -p $(call lcas_q,$(OUT))
	$(LCAS) sweep $(call lcas_q,$(SPEC)) --out $(call lcas_q,$(OUT)) --make-rules --command $(call lcas_q,$(LCAS)) \
	  > $(call lcas_q,$@.tmp) && mv $(call lcas_q,$@.tmp) $(call lcas_q,$@)

batch: $(OUT)/jobs.mk
	$(MAKE) -f $(call lcas_q,$(OUT)/jobs.mk) all

# Failed jobs are retried on every run (softmax jobs need the numeric backend's softmax support).
paper: setup
	@mkdir -p $(call lcas_q,$(PAPER_DIR))
	$(LCAS) sweep $(call lcas_q,$(PAPER_SPEC)) --out $(call lcas_q,$(PAPER_DIR)/results) --jobs $(call lcas_q,$(JOBS)) \
	  --retry-failed --quiet
	$(LCAS) report $(call lcas_q,$(PAPER_DIR)/results) --csv $(call lcas_q,$(PAPER_DIR)/dimensions.csv) \
	  --plot $(call lcas_q,$(PAPER_DIR)/dimensions.png) \
	  --title "Henry-Marchetti-Kohn dimensions: computed vs predicted"

# The multi-head table: one layer d, d' in 1..4, a <= d, H in 1..4, t in 1..3, deep shapes, M2 checks.
#   make heads   ->  heads/table.csv, heads/defects.csv, heads/heads.png (1-3 minutes, modp)
HEADS_SPEC ?= examples/heads.toml
HEADS_DIR ?= heads
.PHONY: heads
heads: setup
	@mkdir -p $(call lcas_q,$(HEADS_DIR))
	$(LCAS) sweep $(call lcas_q,$(HEADS_SPEC)) --out $(call lcas_q,$(HEADS_DIR)/results) --jobs $(call lcas_q,$(JOBS)) \
	  --retry-failed --quiet
	$(LCAS) heads $(call lcas_q,$(HEADS_DIR)/results) --out $(call lcas_q,$(HEADS_DIR))

# The blocks table: small transformer stacks (causal/residual/projections/mlp, 1-3 layers) and polynomial
# networks, computed and judged against the published formulas and proved bounds (a few minutes).
#   make blocks  ->  blocks/table.csv, blocks/defects.csv, blocks/findings.md, blocks/blocks.png
BLOCKS_DIR ?= blocks
.PHONY: blocks
blocks: setup
	$(LCAS) blocks --out $(call lcas_q,$(BLOCKS_DIR))

# Degrees and generic ED degrees of a grid of small one-layer networks: degrees/degrees.csv and .md
DEGREES_OUT ?= degrees
.PHONY: degrees
degrees: setup
	$(LCAS) degrees --out $(call lcas_q,$(DEGREES_OUT))
