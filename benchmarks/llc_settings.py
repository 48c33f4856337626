"""The settings of the learning-coefficient benchmark: the data, the chains and devinterp's configurations, read by
the runner (benchmarks.bench_llc) and by the report that states them (benchmarks.llc_report)."""

from __future__ import annotations

N_SAMPLES = 2000  # data points per case
NOISE = 0.1  # σ of the Gaussian noise on y
BATCH = 100
CHAINS = 2
DRAWS, BURNIN = 1000, 200  # per chain, in the sweep: 1200 SGLD steps a chain

# devinterp's documented defaults (SGLD lr 0.01, no localization, nβ = batch/log batch, 100 draws, no
# burn-in, the loss at w* from num_chains batches; 2 chains, not 10, on this shared machine), then the sweep
# at nβ = n/log n with 1000 draws after 200 burn-in steps and the loss at w* over all n points (init_loss)
CONFIGS: dict = {"defaults": {}}
for _lr in (1e-5, 1e-4, 1e-3):
    for _gamma in (1.0, 100.0):
        CONFIGS[f"lr={_lr:g} γ={_gamma:g}"] = {"lr": _lr, "localization": _gamma, "nbeta": "n/log n"}
