# Batch runs (issue 7), included from the Makefile, which defines VENV, PY, SPEC and `setup`.
#   make sweep SPEC=examples/sweep.toml [OUT=dir] [JOBS=2] [EXECUTOR=local|dask]
#   make -j 4 batch SPEC=...   one make target per result file: parallel, and resumes where it stopped
#   make paper                 the paper's dimension results: paper/dimensions.csv and paper/dimensions.png
LCAS ?= $(PY) -m lightning_cas
OUT ?= results/$(basename $(notdir $(SPEC)))
JOBS ?= 2
EXECUTOR ?= local
PAPER_SPEC ?= examples/paper.toml
PAPER_DIR ?= paper

.PHONY: sweep batch paper report

sweep: setup
	$(LCAS) sweep $(SPEC) --out $(OUT) --jobs $(JOBS) --executor $(EXECUTOR)

report: setup
	$(LCAS) report $(OUT)

# The generated makefile has a rule per $(OUT)/<label>.json calling `sweep --only <label>`, and
# results.csv depending on all of them; it is regenerated whenever the spec changes.
$(OUT)/jobs.mk: $(SPEC) | setup
	@mkdir -p $(OUT)
	$(LCAS) sweep $(SPEC) --out $(OUT) --make-rules --command '$(LCAS)' > $@.tmp && mv $@.tmp $@

batch: $(OUT)/jobs.mk
	$(MAKE) -f $(OUT)/jobs.mk all

# Failed jobs are retried on every run (softmax jobs need the numeric backend's softmax support).
paper: setup
	@mkdir -p $(PAPER_DIR)
	$(LCAS) sweep $(PAPER_SPEC) --out $(PAPER_DIR)/results --jobs $(JOBS) --retry-failed --quiet
	$(LCAS) report $(PAPER_DIR)/results --csv $(PAPER_DIR)/dimensions.csv --plot $(PAPER_DIR)/dimensions.png \
	  --title "Henry-Marchetti-Kohn dimensions: computed vs predicted"
