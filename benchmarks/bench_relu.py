"""The ``relu`` section: lightning_cas's rank of a ReLU MLP at given weights beside the field's float tool.

The field's tool for the functional dimension of ReLU networks is JoachimBP/Functional-dimension
(Bona-Pellissier, Malgouyres, Bachoc, arXiv:2402.08269): the rank of the Jacobian of the outputs on a batch
of inputs. ``field_rank`` reimplements its rule (not its code) from ``Functions/Functions.py``, class
``functional_dimension``, methods ``get_differential`` and ``compute_rank``:

* the Jacobian is filled one batch of ``min(1000, N, P_identif)`` inputs at a time, P_identif = P minus the
  hidden widths, while ``i <= N - batch``: the last N mod batch inputs are never filled (their rows stay 0);
* the Jacobian comes from the Keras model in float32 and is stored in a float64 array; its singular values
  are float64, and the threshold is numpy's ``max(s) * max(m, n) * eps`` with eps of float64 (of ``svd.dtype``).

Here the Jacobian is computed by hand (backpropagation through the ReLUs, derivative 0 at a kink) in float32,
as the tool's model does, and in float64. Weights and inputs are float32 numbers, so both sides rank one
function on one batch: lightning_cas reads them exactly. ``python -m benchmarks.bench_relu`` writes
bench/relu.{csv,md}; ``python -m benchmarks.bench --only relu`` does the same as a section of
bench/results.json.
"""

from __future__ import annotations

import csv
import io
import json
import sys
import time
from pathlib import Path

import numpy as np

NETS = {"4-16-16-1": (4, 16, 16, 1), "3-8-8-1": (3, 8, 8, 1)}
SIZES = (500, 5000)
SCALES = (1.0, 3.0)
WEIGHT_SEED, INPUT_SEED = 0, 1


def cases() -> list[dict]:
    """Every net at N = 500 and 5000 Gaussian inputs, at scale 1 and 3: one row each."""
    return [{"net": n, "n": size, "scale": s} for n in NETS for size in SIZES for s in SCALES]


def network(widths):
    """Linear(bias)-ReLU-...-Linear(bias) as a lightning_cas Network (one token per input)."""
    from lightning_cas import Activation, Linear, Network

    blocks: list = []
    for width in widths[1:-1]:
        blocks += [Linear(width, bias=True), Activation("relu")]
    return Network(widths[0], widths[-1], (*blocks, Linear(widths[-1], bias=True)))


def parameters(widths) -> int:
    return sum(a * b + b for a, b in zip(widths[:-1], widths[1:]))


def weights(widths, seed: int = WEIGHT_SEED) -> np.ndarray:
    """Gaussian weights rounded to float32 (exact in float64), flat in lightning_cas's order: per layer the
    matrix (out x in, row-major), then its bias."""
    return np.random.default_rng(seed).standard_normal(parameters(widths)).astype(np.float32).astype(np.float64)


def inputs(widths, n: int, scale: float, seed: int = INPUT_SEED) -> np.ndarray:
    """n Gaussian inputs (n, d_0) times ``scale``, rounded to float32; the same draw at every scale."""
    X = np.random.default_rng(seed).standard_normal((n, widths[0]))
    return (scale * X).astype(np.float32).astype(np.float64)


def layers(w: np.ndarray, widths, dtype) -> list[tuple[np.ndarray, np.ndarray]]:
    out, k = [], 0
    for a, b in zip(widths[:-1], widths[1:]):
        A = w[k : k + a * b].reshape(b, a).astype(dtype)
        k += a * b
        out.append((A, w[k : k + b].astype(dtype)))
        k += b
    return out


def relu_jacobian(w: np.ndarray, widths, X: np.ndarray, dtype=np.float64) -> np.ndarray:
    """d f_W(X_n) / dW, rows (n, output), columns in the flat weight order, computed in ``dtype``."""
    Ls = layers(w, widths, dtype)
    acts, zs = [X.astype(dtype)], []
    for i, (A, b) in enumerate(Ls):
        z = acts[-1] @ A.T + b
        zs.append(z)
        acts.append(np.maximum(z, 0) if i < len(Ls) - 1 else z)
    n, d_out = len(X), widths[-1]
    delta = np.broadcast_to(np.eye(d_out, dtype=dtype), (n, d_out, d_out))  # d out / d z_L
    cols = []
    for i in range(len(Ls) - 1, -1, -1):
        A, _ = Ls[i]
        dA = delta[:, :, :, None] * acts[i][:, None, None, :]  # (n, out, rows, cols)
        cols = [dA.reshape(n * d_out, -1), delta.reshape(n * d_out, -1)] + cols
        if i:
            delta = (delta @ A) * (zs[i - 1] > 0)[:, None, :].astype(dtype)
    return np.concatenate(cols, axis=1)


def field_rank(w: np.ndarray, widths, X: np.ndarray, dtype=np.float32) -> dict:
    """JoachimBP's rank (Functions/Functions.py, functional_dimension.get_differential and compute_rank):
    full batches of min(1000, N, P_identif) only, a float64 Gamma holding a ``dtype`` Jacobian, float64 svd,
    tolerance max(s) * max(m, n) * float64 eps with m = N * d_out (the unfilled rows count in m)."""
    start = time.perf_counter()
    n, d_out = len(X), widths[-1]
    identifiable = parameters(widths) - sum(widths[1:-1])
    batch = min(1000, n, identifiable)
    used = (n // batch) * batch  # ``while i <= Nsample - batch_size``: the last n mod batch are left out
    gamma = np.zeros((n * d_out, parameters(widths)))
    gamma[: used * d_out] = relu_jacobian(w, widths, X[:used], dtype)
    s = np.linalg.svd(gamma, compute_uv=False)
    tol = s.max() * max(gamma.shape) * np.finfo(s.dtype).eps
    return {
        "rank": int(np.sum(s >= tol)),
        "batch": batch,
        "used": used,
        "seconds": round(time.perf_counter() - start, 3),
    }


def _lc(result, seconds: float) -> dict:
    cert = result.certificate
    lower, upper = (cert.lower, cert.upper) if cert is not None else (result.dimension, result.dimension)
    return {
        "rank": result.dimension,
        "lower": lower,
        "upper": upper,
        "certified": lower == upper,
        "certainty": str(result.certainty),
        "seconds": round(seconds, 3),
    }


def _batch_rank(widths, w: np.ndarray, X: np.ndarray) -> dict:
    from lightning_cas import dimension

    start = time.perf_counter()
    r = dimension(network(widths), at=[float(v) for v in w], inputs=X[:, :, None])
    return _lc(r, time.perf_counter() - start)


def functional_at_w(name: str) -> dict:
    """lightning_cas's functional dimension at W (inputs drawn in rounds; certified or a bracket)."""
    from lightning_cas import dimension

    widths = NETS[name]
    start = time.perf_counter()
    r = dimension(network(widths), at=[float(v) for v in weights(widths)])
    return _lc(r, time.perf_counter() - start)


def relu_row(case: dict, at_w: dict | None = None) -> dict:
    """One case: lightning_cas's exact batch rank and the field's float32 and float64 ranks on the same batch."""
    widths = NETS[case["net"]]
    w, X = weights(widths), inputs(widths, case["n"], case["scale"])
    row = {**case, "parameters": parameters(widths), "batch": _batch_rank(widths, w, X)}
    row["at_w"] = at_w if at_w is not None else functional_at_w(case["net"])
    row["float32"] = field_rank(w, widths, X, np.float32)
    row["float64"] = field_rank(w, widths, X, np.float64)
    used = row["float32"]["used"]  # the exact rank on the inputs the field's batch rule keeps: its float target
    row["batch_used"] = row["batch"] if used == len(X) else _batch_rank(widths, w, X[:used])
    full = relu_jacobian(w, widths, X, np.float64)  # no batch rule: every input, numpy's own matrix_rank
    row["float64_all"] = int(np.linalg.matrix_rank(full))
    return row


def run_relu_bench(progress=print, out_dir: Path | None = Path("bench")) -> list[dict]:
    """Every case in turn (the functional dimension at W once per net); writes relu.csv and relu.md."""
    rows, at_w = [], {}
    for case in cases():
        if case["net"] not in at_w:
            at_w[case["net"]] = functional_at_w(case["net"])
        row = {"status": "ok", **relu_row(case, at_w[case["net"]])}
        rows.append(row)
        progress(
            f"[relu] {case['net']} N={case['n']} x{case['scale']:g}: batch {_rank(row['batch'])} "
            f"({row['batch']['seconds']} s), at W {_rank(row['at_w'])}; field float32 {row['float32']['rank']}, "
            f"float64 {row['float64']['rank']} on {row['float32']['used']} inputs "
            f"(exact there {_rank(row['batch_used'])})"
        )
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "relu.csv").write_text(csv_text(rows))
        (out_dir / "relu.md").write_text(
            "# lightning_cas against JoachimBP/Functional-dimension\n\n" + relu_markdown(rows)
        )
    return rows


def relu_findings(rows: list[dict]) -> list[str]:
    """Every field rank that is not the certified exact rank on the inputs it ranked."""
    out = []
    for r in rows:
        exact = r.get("batch_used")
        if r.get("status") != "ok" or not exact["certified"]:
            continue
        for kind in ("float32", "float64"):
            if r[kind]["rank"] != exact["rank"]:
                out.append(
                    f"relu {r['net']} N={r['n']} x{r['scale']:g}: the field's {kind} rank is {r[kind]['rank']}, "
                    f"the exact rank on the same {r[kind]['used']} inputs {exact['rank']}"
                )
    return out


# ---- presentation --------------------------------------------------------------------------
def _rank(r: dict) -> str:
    return str(r["rank"]) if r["certified"] else f"[{r['lower']}, {r['upper']}]"


CSV_FIELDS = (
    "net",
    "parameters",
    "n",
    "scale",
    "batch_lower",
    "batch_upper",
    "batch_seconds",
    "at_w_lower",
    "at_w_upper",
    "at_w_seconds",
    "exact_on_used_lower",
    "exact_on_used_upper",
    "field_batch",
    "field_used",
    "field_float32",
    "field_float32_seconds",
    "field_float64",
    "field_float64_seconds",
    "float64_all_inputs",
)


def csv_text(rows: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, CSV_FIELDS, lineterminator="\n")
    w.writeheader()
    for r in rows:
        b, a, f32, f64 = r["batch"], r["at_w"], r["float32"], r["float64"]
        w.writerow(
            {
                "net": r["net"],
                "parameters": r["parameters"],
                "n": r["n"],
                "scale": r["scale"],
                "batch_lower": b["lower"],
                "batch_upper": b["upper"],
                "batch_seconds": b["seconds"],
                "at_w_lower": a["lower"],
                "at_w_upper": a["upper"],
                "at_w_seconds": a["seconds"],
                "exact_on_used_lower": r["batch_used"]["lower"],
                "exact_on_used_upper": r["batch_used"]["upper"],
                "field_batch": f32["batch"],
                "field_used": f32["used"],
                "field_float32": f32["rank"],
                "field_float32_seconds": f32["seconds"],
                "field_float64": f64["rank"],
                "field_float64_seconds": f64["seconds"],
                "float64_all_inputs": r["float64_all"],
            }
        )
    return buf.getvalue()


def relu_markdown(rows: list[dict]) -> str:
    """One row per (net, N, scale): lightning_cas's two ranks and the field tool's two, with seconds."""
    head = [
        "net (P)",
        "N",
        "scale",
        "lightning_cas batch rank",
        "s",
        "lightning_cas at W",
        "s",
        "field batch: inputs used",
        "lightning_cas on those",
        "field float32",
        "field float64",
        "s (f32 + f64)",
        "float64, all N",
    ]
    lines = [
        "## The rank at given weights: lightning_cas against the field's float tool (`relu`)",
        "",
        "Gaussian weights and inputs (rounded to float32, so both sides rank the same numbers). "
        "*lightning_cas batch rank*: `dimension(net, at=w, inputs=X)`, exact on these inputs (a bracket "
        "[lower, upper] when its bounds do not meet). *lightning_cas at W*: `dimension(net, at=w)`, the "
        "functional dimension at W over all inputs (drawn in rounds). *field*: JoachimBP/Functional-dimension's "
        "rule (full batches of min(1000, N, P − hidden widths) inputs only; Jacobian in float32, resp. float64; "
        "float64 svd and numpy's tolerance with float64 eps); *lightning_cas on those*: the exact rank on the "
        "inputs the field's batch rule keeps, what its float ranks should equal. *float64, all N*: numpy's "
        "matrix_rank of the float64 Jacobian on every input.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for r in rows:
        if r.get("status") != "ok":
            lines.append(f"| {r.get('net')} | {r.get('n')} | {r.get('scale')} | **{r.get('status')}** |")
            continue
        f32, f64 = r["float32"], r["float64"]
        cells = [
            f"{r['net']} ({r['parameters']})",
            str(r["n"]),
            f"{r['scale']:g}",
            _rank(r["batch"]),
            f"{r['batch']['seconds']:.1f}",
            _rank(r["at_w"]),
            f"{r['at_w']['seconds']:.1f}",
            f"{f32['used']} of {r['n']} (batch {f32['batch']})",
            _rank(r["batch_used"]),
            str(f32["rank"]),
            str(f64["rank"]),
            f"{f32['seconds'] + f64['seconds']:.2f}",
            str(r["float64_all"]),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    rows = run_relu_bench(progress=lambda m: print(m, flush=True))
    print(relu_markdown(rows))
    print(json.dumps({"rows": len(rows)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
