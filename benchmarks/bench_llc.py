"""The ``llc`` section: lightning_cas's proved learning coefficient beside devinterp's SGLD estimate of it.

For each case, ``learning_coefficient`` gives λ(w*) (an exact rational or a proved bracket); then a
``TorchNetwork`` of the same network is placed at w* (so the two sides are of one function), data
y = f_{w*}(X) + σ·noise is drawn from it with Gaussian X, and devinterp's
``estimate_learning_coeff_with_summary`` estimates λ with its documented defaults and with a small sweep
of step size (lr) and localization (γ) at nβ = n/log n. Each case runs in a fresh worker process with one
torch thread (the machine is shared). ``python -m benchmarks.bench_llc`` writes bench/llc.{csv,md,png};
``python -m benchmarks.bench --only llc`` does the same as a section of bench/results.json.

devinterp is pinned below 2: 2.x replaced ``estimate_learning_coeff`` by a language-model pipeline
(Hugging Face datasets of ``input_ids``, xarray, zarr); 1.3 is the estimator the SLT papers calibrate.
"""

from __future__ import annotations

import json
import math
import sys
import time
import warnings
from fractions import Fraction
from pathlib import Path

from benchmarks.bench_blocks import worker_row
from benchmarks.llc_report import estimate_cell, truth_cell, write_outputs
from benchmarks.llc_settings import BATCH, BURNIN, CHAINS, CONFIGS, DRAWS, N_SAMPLES, NOISE

WORKER_TIMEOUT = 900.0


def _att():
    from lightning_cas.core.architecture import Architecture

    return Architecture((2, 1), (1,), tokens=2)  # Q, K, V: 1 x 2 each; weights in that order


def _linear(*widths):
    from lightning_cas.core.network import Linear, Network

    return Network(widths[0], 1, tuple(Linear(w) for w in widths[1:]))


def _mlp():
    from lightning_cas.core.network import MLP, Network

    return Network(2, 1, (MLP(2, degree=2, out=1),))  # f = D (U x)^2, U: 2 x 2, D: 1 x 2


# name -> (network builder, weights w*, what the point is). Nonzero weights are scaled (each factor of a
# product alike) so that f_{w*} has RMS about 1 on Gaussian inputs: one step size then suits every case, and
# λ is unchanged (rescaling a factor is a linear change of coordinates that multiplies K by a constant).
Q, K, V = ["1/4", "1/2"], ["3/4", "-1/4"], ["1/4", "1/2"]
CASES: dict = {
    "linear 2-2-2 at 0": (lambda: _linear(2, 2, 2), [0] * 8, "zero map"),
    "linear 2-2-2 rank 1": (lambda: _linear(2, 2, 2), [1, 0, 0, 0, 1, 0, 0, 0], "true map of rank 1"),
    "linear 3-2-3 at 0": (lambda: _linear(3, 2, 3), [0] * 12, "zero map"),
    "linear 3-2-3 rank 1": (lambda: _linear(3, 2, 3), [1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0], "true map of rank 1"),
    "attention (2,1) at 0": (_att, [0] * 6, "w* = 0"),
    "attention (2,1) V=0": (_att, Q + K + [0, 0], "V = 0, KᵀQ of rank 1"),
    "attention (2,1) Q=0": (_att, [0, 0] + K + V, "Q = 0, K and V nonzero"),
    "attention (2,1) generic": (_att, Q + K + V, "rank at w* = generic rank 4"),
    "attention (2,1) rank 3": (_att, ["1/2", "1/2", "1/2", "-1/2", "1/2", "-1/2"], "rank 3 at w*: a bracket"),
    "poly MLP 2-2-1 generic": (_mlp, ["1/2", "-1/2", "1/2", "1/2", 1, -1], "f = ((x1 - x2)² - (x1 + x2)²)/4"),
    "poly MLP 2-2-1 at 0": (_mlp, [0] * 6, "w* = 0: a bracket"),
}


def build_case(name: str):
    """(network, weight point, TorchNetwork at w*) of one case: the module holds w* exactly (float64)."""
    from lightning_cas.system.points import as_point
    from lightning_cas.torch_bridge import TorchNetwork

    make, weights, _ = CASES[name]
    net = make()
    point = as_point(net, {"weights": weights})
    model = TorchNetwork(net, calibrate=False)
    model.load_point(point)
    return net, point, model


def truth(name: str) -> dict:
    """λ(w*) from lightning_cas: the bracket, the exact value when it closes, and the seconds it took."""
    from lightning_cas.geometry.learning.bracket import learning_coefficient

    make, weights, _ = CASES[name]
    start = time.perf_counter()
    r = learning_coefficient(make(), {"weights": weights})
    return {
        "lower": r.lower,
        "upper": r.upper,
        "exact": r.learning_coefficient,
        "multiplicity": r.multiplicity,
        "rank_at_point": r.rank_at_point,
        "parameters": r.parameters,
        "truth_s": round(time.perf_counter() - start, 3),
    }


def make_data(model, n: int = N_SAMPLES, noise: float = NOISE, seed: int = 0):
    """Gaussian token matrices X (n, tokens, d) and y = f_{w*}(X) + noise·N(0, 1)."""
    import torch

    net = model.network
    gen = torch.Generator().manual_seed(seed)
    X = torch.randn(n, net.tokens, net.input, generator=gen, dtype=torch.float64)
    with torch.no_grad():
        Y = model(X) + noise * torch.randn(n, net.tokens, net.output, generator=gen, dtype=torch.float64)
    return X, Y


def _evaluate(model, data):
    """Squared error summed over output entries, averaged over the batch: the empirical K(w) plus noise
    (the Gaussian negative log-likelihood up to 1/(2σ²) and a constant, which rescale nβ, not λ)."""
    X, Y = data
    loss = ((model(X) - Y) ** 2).sum(dim=(-1, -2)).mean()
    return loss, {}


def estimate(model, X, Y, config: dict, seed: int = 0) -> dict:
    """devinterp's estimate on (X, Y) under one configuration: mean and std over chains, per-chain values."""
    import torch
    from devinterp.optim import SGLD
    from devinterp.slt.sampler import estimate_learning_coeff_with_summary
    from torch.utils.data import DataLoader, TensorDataset

    torch.set_num_threads(1)
    n = len(X)
    loader = DataLoader(
        TensorDataset(X, Y), batch_size=BATCH, shuffle=True, generator=torch.Generator().manual_seed(seed)
    )
    kwargs = {k: v for k, v in config.items() if k != "nbeta"}
    if config.get("nbeta") == "n/log n":
        kwargs["nbeta"] = n / math.log(n)
    steps: dict = {}  # the defaults: 100 draws, no burn-in, init_loss from num_chains batches
    if config:
        with torch.no_grad():
            full = float(_evaluate(model, (X, Y))[0])
        steps = {"num_draws": DRAWS, "num_burnin_steps": BURNIN, "init_loss": full}
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = estimate_learning_coeff_with_summary(
                model,
                loader,
                evaluate=_evaluate,
                sampling_method=SGLD,
                optimizer_kwargs=kwargs,
                num_chains=CHAINS,
                seed=seed,
                verbose=False,
                device="cpu",
                **steps,
            )
    except (RuntimeError, ValueError) as exc:  # a NaN loss (a diverged chain) is raised by the estimator
        return {
            "status": "diverged",
            "error": str(exc).splitlines()[0][:160],
            "seconds": round(time.perf_counter() - start, 3),
        }
    chains = [float(out[f"llc-chain/{i}"]) for i in range(CHAINS)]
    finite = all(math.isfinite(c) for c in chains)
    return {
        "status": "ok" if finite else "diverged",
        "mean": float(out["llc/mean"]),
        "std": float(out["llc/std"]),
        "chains": chains,
        "nbeta": kwargs.get("nbeta", BATCH / math.log(BATCH)),
        "lr": kwargs.get("lr", 0.01),
        "localization": kwargs.get("localization", 0.0),
        "draws": steps.get("num_draws", 100),
        "burnin": steps.get("num_burnin_steps", 0),
        "init_loss": "all n points" if "init_loss" in steps else f"{CHAINS} batches",
        "seconds": round(time.perf_counter() - start, 3),
    }


def relative_error(lower: str, upper: str, mean: float) -> float:
    """0 inside the bracket; else the distance to it over the nearer end (over the upper end when that is 0)."""
    lo, hi = float(Fraction(lower)), float(Fraction(upper))
    if lo <= mean <= hi:
        return 0.0 if lo < hi else (mean - lo) / lo if lo else 0.0
    end = lo if mean < lo else hi
    return (mean - end) / (end if end else hi)


def _worker(name: str) -> dict:
    import torch

    torch.set_num_threads(1)
    row = {"case": name, "point": CASES[name][2], "weights": CASES[name][1], **truth(name)}
    net, point, model = build_case(name)
    X, Y = make_data(model)
    with torch.no_grad():
        row.update(n=len(X), noise=NOISE, loss_at_w_star=float(_evaluate(model, (X, Y))[0]))
    runs = {}
    for label, config in CONFIGS.items():
        run = estimate(model, X, Y, config, seed=0)
        if run["status"] == "ok":
            run["relative_error"] = relative_error(row["lower"], row["upper"], run["mean"])
        runs[label] = run
    row["runs"] = runs
    return row


def run_llc_bench(progress=print, out_dir: Path | None = Path("bench")) -> list[dict]:
    """Every case in its own worker; writes llc.csv, llc.md and llc.png into ``out_dir`` when given."""
    rows = []
    for name in CASES:
        row = worker_row("benchmarks.bench_llc", name, WORKER_TIMEOUT)
        rows.append(row)
        if row.get("status") != "ok":
            progress(f"[llc] {name}: {row.get('status')} {row.get('error', '')}")
            continue
        est = ", ".join(f"{k}: {estimate_cell(v)}" for k, v in row["runs"].items())
        progress(f"[llc] {name}: λ {truth_cell(row)}; devinterp {est}")
    if out_dir is not None:
        write_outputs(rows, out_dir)
    return rows


def llc_findings(rows: list[dict]) -> list[str]:
    """A worker that died is a finding; estimates far from λ are the measurement, reported in the table."""
    return [f"llc {r['case']}: {r.get('status')} {r.get('error', '')}" for r in rows if r.get("status") != "ok"]


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        print(json.dumps(_worker(sys.argv[2])))
    else:
        run_llc_bench(progress=lambda m: print(m, flush=True))
        print("wrote bench/llc.csv, bench/llc.md, bench/llc.png")
