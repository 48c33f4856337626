"""Floating-point Jacobian rank: the paper's protocol as a baseline, and the softmax dimension.

Lightning (``normalization="none"``): float64 Jacobian of W -> (phi_W(X_n))_n over N Gaussian
inputs, rank by SVD with numpy's tolerance, exactly as the paper did; kept as the float baseline
the exact backends are benchmarked against. The result also reports the largest gap, because a
fixed tolerance fails at depth 3 (genuine singular values fall to ~1e-8).

Softmax: no exact method exists (not polynomial), so the rank must be decided carefully: the
largest gap (in decades) of the singular values, at several independent random points and
inputs; a run is *clear* when that gap is at least ``CLEAR_GAP_DECADES`` and the tolerance rank
equals the gap rank. When any run is not clear, or clear runs disagree, the Jacobian is
recomputed at ``dps`` and ``2 dps`` digits (flint arb) from the same point: singular values that
are genuinely non-zero do not move with the precision, zeros fall with it. That decides.
"""

from __future__ import annotations

import math
import time

import numpy as np

from lightning_cas.backends.modp import available_bytes
from lightning_cas.core.arithmetic import Float64
from lightning_cas.core.checks import derived_seed
from lightning_cas.core.forward import jacobian
from lightning_cas.core.network import Network
from lightning_cas.core.softmax import WEIGHT_SCALES, jacobian_arb, random_point, singular_values_high_precision
from lightning_cas.core.softmax import jacobian as softmax_jacobian
from lightning_cas.errors import InputError, TooLargeError
from lightning_cas.results.dimension import DimensionResult
from lightning_cas.system import deadline, progress

PAPER_SAMPLES = 250
CLEAR_GAP_DECADES = 4.0
DEFAULT_DPS = 50
STABLE_DECADES = 0.01  # |log10 s(dps) - log10 s(2 dps)| below this: the value is real, not noise


ARB_ENTRY_BYTES = 160  # one arb ball in an object array (measured at 50-100 digits, with its pointer)


def float_bytes(arch: Network, samples: int) -> int:
    """Peak memory of one float64 run: the Jacobian (rows x P), the SVD's copy and work space, and the
    forward pass's tangents (an attention block's dS holds t tangents per token), 8 bytes each."""
    net = arch
    rows, P = samples * net.rows_per_sample, net.parameters
    tangents = samples * max(net.widest, net.tokens * net.tokens) * net.tokens * P
    return 8 * (3 * rows * P + 2 * min(rows, P) ** 2 + 4 * tangents) + 64 * 2**20


def arb_bytes(arch: Network, samples: int) -> int:
    """Peak memory of one high-precision run: the same arrays as ``float_bytes`` as arb balls, and the
    Gram matrix (P x P)."""
    net = arch
    rows, P = samples * net.rows_per_sample, net.parameters
    tangents = samples * max(net.widest, net.tokens * net.tokens) * net.tokens * P
    return ARB_ENTRY_BYTES * (2 * rows * P + 2 * P * P + 4 * tangents) + 64 * 2**20


def check_numeric_memory(need: int, arch: Network, what: str) -> None:
    """Refuse, before any allocation, a run that would not fit in the memory this process may use."""
    free = available_bytes()
    if need > free:
        raise TooLargeError(
            f"{what} would need about {need / 2**30:.1f} GiB for this architecture "
            f"({arch.parameters} weights) and {free / 2**30:.1f} GiB are available; "
            "try smaller widths or fewer samples."
        )


def singular_values(arch: Network, seed: int, samples: int = PAPER_SAMPLES) -> np.ndarray:
    """Lightning float64 singular values at unit-Gaussian weights and inputs (the paper's point)."""
    net = arch
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(net.parameters)
    X = rng.standard_normal((samples, net.input, net.tokens))
    return np.linalg.svd(jacobian(net, Float64(), w, X), compute_uv=False)


def analyze_spectrum(s: np.ndarray, rows: int, cols: int) -> dict:
    """Tolerance rank (numpy's default), largest-gap rank and the gap's size in decades."""
    s = np.asarray(s, dtype=float)
    tol = float(s.max() * max(rows, cols) * np.finfo(float).eps) if len(s) else 0.0
    rank = int((s > tol).sum())
    # Below s_max * eps float64 holds only noise; clip there so exact zeros (1e-300) do not
    # make a spurious 280-decade "gap" inside the noise.
    floor = float(s.max()) * np.finfo(float).eps / 100 if len(s) and s.max() > 0 else 1e-300
    logs = np.log10(np.maximum(s, floor))
    gaps = logs[:-1] - logs[1:]
    if len(gaps):
        gap_rank, gap = int(np.argmax(gaps)) + 1, float(gaps.max())
    else:
        gap_rank, gap = len(s), 0.0
    # A full-rank spectrum has no gap inside it: measure "gap" to the float floor instead.
    floor_gap = float(logs[-1] - math.log10(max(tol, 1e-300))) if len(s) else 0.0
    if rank == len(s) and floor_gap > gap:
        gap_rank, gap = len(s), floor_gap
    return {
        "rank": rank,
        "gap_rank": gap_rank,
        "gap_decades": round(gap, 3),
        "tolerance": tol,
        "smallest_kept": float(s[gap_rank - 1]) if gap_rank else 0.0,
        "largest_dropped": float(s[gap_rank]) if gap_rank < len(s) else 0.0,
        "clear": bool(gap >= CLEAR_GAP_DECADES and rank == gap_rank),
    }


def dimension_numeric(arch: Network, seed: int = 0, samples: int = PAPER_SAMPLES, **options) -> DimensionResult:
    """Float Jacobian rank: the paper's baseline for lightning, the robust protocol for softmax."""
    net = arch
    if net.normalization == "softmax":
        return dimension_softmax(arch, seed=seed, samples=samples, **options)
    check_numeric_memory(float_bytes(net, samples), net, "the numeric method")
    start = time.perf_counter()
    progress.report("float64 Jacobian spectrum")
    s = deadline.stoppable(singular_values, net, seed, samples)
    info = analyze_spectrum(s, samples * net.rows_per_sample, net.parameters)
    rank, gap_rank = info["rank"], info["gap_rank"]
    notes = [
        f"tolerance {info['tolerance']:.3g}",
        f"largest gap after singular value {gap_rank}: {info['gap_decades']:.2f} decades",
    ]
    if gap_rank != rank:
        notes.append(f"tolerance rank {rank} and largest-gap rank {gap_rank} differ: the float rank is unreliable")
    run = {"seed": seed, "precision": "float64", "samples": samples, "rows": samples * net.rows_per_sample, **info}
    return DimensionResult(
        architecture=arch,
        dimension=rank,
        parameters=net.parameters,
        ambient_dimension=arch.ambient_dimension,
        method="numeric",
        certainty="numeric",
        seed=seed,
        elapsed_s=time.perf_counter() - start,
        samples=samples,
        runs=(run,),
        notes=tuple(notes),
    )


def high_precision_samples(arch: Network) -> int:
    """A smaller input set for the arb recomputation that still has ~1.25 P + 8 rows (rank <= P)."""
    net = arch
    return max(1, math.ceil((net.parameters + net.parameters // 4 + 8) / net.rows_per_sample))


def high_precision_run(arch: Network, seed: int, samples: int, dps: int = DEFAULT_DPS, scale: str = "fan_in") -> dict:
    """Rank at one point decided by recomputing the Jacobian at dps and 2 dps digits.

    The rank is the largest-gap rank of the 2 dps spectrum. It is *clear* when that gap is at
    least ``CLEAR_GAP_DECADES`` and every value below it is precision noise: it moved when the
    precision doubled (genuine zeros sit near the floor s_max 10^(-dps) and fall with the
    precision), or is already at the 2 dps floor (exact zeros). ``stable_rank`` counts the leading values that
    did not move; it can be smaller than the rank when genuine values lie within a few decades of the dps floor.
    """
    w, X = random_point(arch, seed, samples, scale)
    s1 = singular_values_high_precision(jacobian_arb(arch, w, X, dps), dps)
    s2 = singular_values_high_precision(jacobian_arb(arch, w, X, 2 * dps), 2 * dps)
    moved = np.abs(np.log10(s1) - np.log10(s2)) > STABLE_DECADES
    stable_rank = int(np.argmax(moved)) if moved.any() else len(s1)
    # Noise: moved with the precision, or at the 2 dps floor already (exact zeros stay at 0).
    noise = moved | (s2 <= s2.max() * 10.0 ** (3 - 2 * dps))
    rows = samples * arch.rows_per_sample
    logs = np.log10(s2)
    gaps = logs[:-1] - logs[1:]
    gap_rank = int(np.argmax(gaps)) + 1 if len(gaps) else len(s2)
    gap = float(gaps.max()) if len(gaps) else 0.0
    return {
        "seed": seed,
        "precision": f"arb {dps}/{2 * dps} digits",
        "samples": samples,
        "rows": rows,
        "scale": scale,
        "rank": gap_rank,
        "gap_rank": gap_rank,
        "stable_rank": stable_rank,
        "gap_decades": round(gap, 3),
        "noise_floor": float(s1.max() * 10.0 ** (-dps)),
        "smallest_kept": float(s2[gap_rank - 1]) if gap_rank else 0.0,
        "largest_dropped": float(s2[gap_rank]) if gap_rank < len(s2) else 0.0,
        "clear": bool(gap >= CLEAR_GAP_DECADES and noise[gap_rank:].all()),
    }


def _float_spectrum(jacobian_fn, arch, w, X) -> np.ndarray:
    """Singular values of the float Jacobian (one long C call: run where the time limit can stop it)."""
    return np.linalg.svd(jacobian_fn(arch, w, X), compute_uv=False)


def dimension_softmax(
    arch: Network,
    seed: int = 0,
    samples: int = PAPER_SAMPLES,
    repetitions: int = 3,
    dps: int = DEFAULT_DPS,
    confirm: str = "auto",
    scale: str = "fan_in",
    hp_samples: int | None = None,
) -> DimensionResult:
    """Softmax dimension: float64 gap ranks at ``repetitions`` independent points, confirmed in
    high precision when any is unclear (``confirm="auto"``), always, or never.

    The high-precision answer, when computed, is the dimension; otherwise the common float rank.
    Disagreements are kept in ``runs`` and flagged by ``consistent=False``, never averaged away.
    """
    net = arch
    if net.normalization != "softmax":
        raise InputError("dimension_softmax needs an architecture with normalization softmax.")
    if confirm not in ("auto", "always", "never"):
        raise InputError(f"confirm must be auto, always or never, got {confirm!r}.")
    if not (isinstance(samples, int) and samples >= 1) or not (isinstance(repetitions, int) and repetitions >= 1):
        raise InputError("samples and repetitions must be positive integers.")
    if isinstance(dps, bool) or not isinstance(dps, int) or not 20 <= dps <= 2000:
        raise InputError(f"dps (decimal digits) must be an integer between 20 and 2000, got {dps!r}.")
    if scale not in WEIGHT_SCALES:
        raise InputError(f"scale must be one of {', '.join(WEIGHT_SCALES)}, got {scale!r}.")
    check_numeric_memory(float_bytes(net, samples), net, "the numeric method")
    if confirm != "never":
        check_numeric_memory(
            arb_bytes(net, hp_samples or high_precision_samples(net)),
            net,
            "the high-precision check of the numeric method",
        )
    start = time.perf_counter()
    rows = samples * net.rows_per_sample
    runs = []
    for k in range(repetitions):
        run_seed = derived_seed(seed, k)
        progress.report("float64 Jacobian spectra", done=k, total=repetitions, unit="runs")
        w, X = random_point(arch, run_seed, samples, scale)
        s = deadline.stoppable(_float_spectrum, softmax_jacobian, arch, w, X)
        runs.append(
            {
                "seed": run_seed,
                "precision": "float64",
                "samples": samples,
                "rows": rows,
                "scale": scale,
                **analyze_spectrum(s, rows, net.parameters),
            }
        )
    float_ranks = {r["gap_rank"] for r in runs}
    all_clear = all(r["clear"] for r in runs) and len(float_ranks) == 1
    notes = [
        f"float64 gap ranks {[r['gap_rank'] for r in runs]}, gaps "
        f"{[r['gap_decades'] for r in runs]} decades, tolerance ranks {[r['rank'] for r in runs]}"
    ]
    if rows < net.parameters:
        notes.append(f"only {rows} rows for {net.parameters} parameters: the rank is capped by the rows")
    consistent = True
    if confirm == "always" or (confirm == "auto" and not all_clear):
        unclear = [r for r in runs if not r["clear"]]
        hp_seed = (unclear[0] if unclear else runs[0])["seed"]
        progress.report(f"high-precision spectra ({dps} and {2 * dps} digits)")
        hp = deadline.stoppable(
            high_precision_run, arch, hp_seed, hp_samples or high_precision_samples(arch), dps, scale
        )
        runs.append(hp)
        dim = hp["rank"]
        consistent = hp["clear"]
        notes.append(
            f"decided in high precision ({hp['precision']}, {hp['samples']} inputs): rank {hp['rank']} "
            f"at the largest gap ({hp['gap_decades']} decades); {hp['stable_rank']} leading values "
            "unchanged when the precision doubled"
        )
        if not hp["clear"]:
            notes.append(
                "the high-precision spectrum is not clean either (gap below "
                f"{CLEAR_GAP_DECADES} decades or a value below it did not move with the precision): "
                "treat the dimension as uncertain"
            )
        if all_clear and dim not in float_ranks:
            notes.append(f"high precision ({dim}) contradicts the clear float64 rank {float_ranks.pop()}")
            consistent = False
    else:
        dim = max(float_ranks)
        if not all_clear:
            consistent = False
            notes.append(
                "float64 runs are unclear or disagree and no high-precision check was run "
                "(confirm='never'): reporting the largest gap rank"
            )
    return DimensionResult(
        architecture=arch,
        dimension=int(dim),
        parameters=net.parameters,
        ambient_dimension=arch.ambient_dimension,
        method="numeric",
        certainty="numeric",
        seed=seed,
        elapsed_s=time.perf_counter() - start,
        samples=samples,
        runs=tuple(runs),
        consistent=consistent,
        notes=tuple(notes),
    )
