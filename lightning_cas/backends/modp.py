"""Dimension exactly over GF(p): Jacobian rank of W -> (phi_W(X_1), ..., phi_W(X_N)) at a random point.

The Jacobian is built numerically (forward mode, ``model.jacobian``) on centred float64 residues
(``rank_modp.ModField``) in blocks of token matrices, and each block goes straight into the
streaming exact echelon form of ``rank_modp`` (float64 BLAS, delayed reduction), so peak memory
is about a quarter of one P x P matrix. Token matrices are drawn until a whole block adds no rank
(or the rank is P): the sample count is decided by the data, not guessed.

Why that is a dimension, and the failure bound. The rank at W with enough samples is the rank of
d phi_W; it is the generic rank unless an r x r minor of the coefficient Jacobian (entries of
degree D - 1 in the weights) vanishes at W: probability <= r (D - 1) / p (Schwartz-Zippel). A
block adds no rank while the samples so far miss some tangent direction f only if f (degree 3^L
in the tokens) vanishes at the block's first token matrix, or, for a sketched block, if a random
combination of its rows falls into the span so far: <= (3^L + 1) / p per block. Every block but
the last adds rank, so there are at most r + 1 blocks, and one run under-estimates with
probability at most (r (D - 1) + (r + 1) (3^L + 1)) / p: a function of the rank alone, so the
largest rank gives, before the run, the largest bound a run can state (``failure_numerator``,
what a given prime is checked against). Two repetitions with
different primes and seeds guard against that; a disagreement is reported, never averaged away.
A prime for which the generic rank itself drops (it divides every maximal minor) is not covered
by the bound; it would show up as a disagreement between the two primes.
"""

from __future__ import annotations

import math
import os
import time

import numpy as np

from lightning_cas.core import deadline
from lightning_cas.backends import rank_modp
from lightning_cas.core.architecture import Architecture
from lightning_cas.core.checks import derived_seed
from lightning_cas.core.primes import DEFAULT_PRIME, check_prime, second_primes
from lightning_cas.core.model import jacobian
from lightning_cas.errors import InputError, TooLargeError, UnsupportedError
from lightning_cas.core.results import DimensionResult

MODULUS_LIMIT = rank_modp.MODULUS_LIMIT
TANGENT_ELEMENTS = 1 << 22  # entries of one forward-mode tangent array per block (32 MiB)
BLOCK_ROWS = 384  # Jacobian rows per block
MIN_SAMPLES_ROWS = 8  # the first draw has at least P + 8 rows
SKETCH_MARGIN = 8  # sketch rows beyond the previous block's gain


def check_modp_prime(p) -> int:
    """check_prime, and below 2^26, where the float64 rank routine is exact."""
    check_prime(p)
    if p >= MODULUS_LIMIT:
        raise InputError(f"the modp method needs a prime below 2^26 = {MODULUS_LIMIT} (its exact float64 "
                         f"arithmetic), got {p}; for a larger prime use --method jacobian.")
    return p


def rows_per_sample(arch: Architecture) -> int:
    return arch.widths[-1] * arch.tokens


def default_samples(arch: Architecture) -> int:
    """Token matrices drawn up front: at least P + 8 rows (more are drawn while the rank grows)."""
    return max(1, math.ceil((arch.parameters + MIN_SAMPLES_ROWS) / rows_per_sample(arch)))


def block_samples(arch: Architecture) -> int:
    """Token matrices per Jacobian block: about BLOCK_ROWS rows, and one tangent array of at most
    TANGENT_ELEMENTS entries (measured: larger blocks waste rows after the rank stops growing,
    smaller ones make the elimination's matrix products thin)."""
    widest = max(max(arch.widths), max(arch.attention), arch.tokens)
    by_memory = TANGENT_ELEMENTS // (widest * arch.tokens * arch.parameters)
    return max(1, min(by_memory, BLOCK_ROWS // rows_per_sample(arch)))


def working_bytes(arch: Architecture) -> int:
    """Peak memory of one run: the echelon form (at most P^2 / 4 entries, three copies while it is
    updated), one block's tangents and products (about 16 block-sized arrays), 8 bytes each."""
    P = arch.parameters
    widest = max(max(arch.widths), max(arch.attention), arch.tokens)
    block = block_samples(arch) * widest * arch.tokens * P
    return 8 * (3 * P * P // 4 + 16 * block) + 64 * 2 ** 20


def available_bytes() -> int:
    """Memory this process may still use: MemAvailable (Linux), else physical memory."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 2 ** 62


def sample_rank(arch: Architecture, w: np.ndarray, prime: int, rng: np.random.Generator,
                samples: int | None = None) -> dict:
    """Rank of the Jacobian at the weights ``w`` (integers, any representatives mod prime).

    ``samples`` token matrices are drawn from ``rng`` up front (default: ``default_samples``) and
    streamed in blocks; further blocks are drawn until one adds no rank or the rank is P.
    Once a block adds fewer rows than it has, the next block is first sketched: c random
    combinations of its rows (c = the last gain + SKETCH_MARGIN) go in, and the block itself only
    if all c raised the rank. Late blocks add a few rows each, so this skips most of the
    elimination work; a sketch misses rank only with probability <= c / p.
    Returns rank, rows, samples and sketched (the sum of the c's, for the failure bound).
    """
    field = rank_modp.ModField(check_modp_prime(prime))
    wc = rank_modp.centred(w, prime)
    first = field.random(rng, (samples or default_samples(arch), arch.widths[0], arch.tokens))
    ech = rank_modp.RowEchelon(arch.parameters, prime)
    with rank_modp.blas_threads():
        drawn, sketched = _stream(arch, wc, field, rng, first, ech)
    return {"rank": ech.rank, "rows": drawn * rows_per_sample(arch), "samples": drawn, "sketched": sketched}


def _stream(arch, wc, field, rng, first, ech) -> tuple[int, int]:
    """The loop of sample_rank: (token matrices drawn, sketch rows)."""
    P, nb, shape = arch.parameters, block_samples(arch), first.shape[1:]
    drawn = sketched = 0
    last = None  # rank added by the previous block
    while ech.rank < P:
        X = first[drawn:drawn + nb] if drawn < len(first) else field.random(rng, (nb,) + shape)
        drawn += len(X)
        B = jacobian(arch, wc, X, field)
        c = B.shape[0] if last is None else last + SKETCH_MARGIN
        if c < B.shape[0]:
            sketched += c
            gained = ech.add(field.matmul(field.random(rng, (c, B.shape[0])), B))
            if gained == c:
                gained += ech.add(B)
        else:
            gained = ech.add(B)
        if not gained:
            break  # a whole block added nothing: the samples before it already see every direction
        last = gained
    return drawn, sketched


def jacobian_rank(arch: Architecture, w: np.ndarray, prime: int, rng: np.random.Generator,
                  samples: int | None = None) -> tuple[int, int]:
    """(rank, rows) of the Jacobian at the weights ``w`` (residues mod prime), tokens from ``rng``."""
    run = sample_rank(arch, w, prime, rng, samples)
    return run["rank"], run["rows"]


def rank_at_random_point(arch: Architecture, prime: int, seed: int, samples: int | None = None) -> tuple[int, int]:
    """(rank, rows) of the Jacobian at weights and tokens drawn from GF(prime) with ``seed``."""
    rng = np.random.default_rng(seed)
    w = rng.integers(0, prime, size=arch.parameters, dtype=np.int64)
    return jacobian_rank(arch, w, prime, rng, samples)


def failure_numerator(arch: Architecture, rank: int | None = None) -> int:
    """The numerator of the failure bound (module docstring) of a run that finds ``rank``; without a
    rank, the largest one (min(parameters, ambient dimension)): the most any run can state."""
    if rank is None:
        rank = min(arch.parameters, arch.ambient_dimension)
    return rank * (arch.weight_degree - 1) + (rank + 1) * (arch.degree + 1)


def failure_bound(arch: Architecture, rank: int, prime: int) -> float:
    """Schwartz-Zippel bound on one run under-estimating (module docstring), at most 1."""
    return min(1.0, failure_numerator(arch, rank) / prime)


def dimension_modp(arch: Architecture, seed: int = 0, prime: int | None = None, repetitions: int = 2,
                   samples: int | None = None) -> DimensionResult:
    """Dimension by exact rank mod p, repeated with a second prime and seed."""
    if arch.normalization != "none":
        raise UnsupportedError("the modp method computes lightning (polynomial) networks only; "
                               "softmax is not polynomial, use --method numeric.")
    start = time.perf_counter()
    p = check_modp_prime(prime if prime is not None else DEFAULT_PRIME)
    primes = second_primes(p, repetitions)
    need, free = working_bytes(arch), available_bytes()
    if need > free:
        raise TooLargeError(f"the modp method would need about {need / 2**30:.1f} GiB for this architecture "
                            f"({arch.parameters} weights) and {free / 2**30:.1f} GiB are available; "
                            "try smaller widths.")
    runs = []
    for k, q in enumerate(primes):
        deadline.check()
        run_seed = derived_seed(seed, k)
        rank, rows = deadline.stoppable(rank_at_random_point, arch, q, run_seed, samples)
        runs.append({"prime": q, "seed": run_seed, "rank": rank, "rows": rows})
    ranks = {r["rank"] for r in runs}
    dim = max(ranks)  # a random point never raises the rank: the largest is the best lower bound
    rows = max(r["rows"] for r in runs)
    notes = []
    if len(ranks) > 1:
        notes.append(f"repetitions disagree: ranks {[r['rank'] for r in runs]}; reporting the largest, "
                     "which is still only a lower bound")
    return DimensionResult(
        architecture=arch, dimension=dim, parameters=arch.parameters, ambient_dimension=arch.ambient_dimension,
        method="modp", certainty="probabilistic", seed=seed, elapsed_s=time.perf_counter() - start,
        primes=tuple(primes), samples=rows // rows_per_sample(arch), runs=tuple(runs), consistent=len(ranks) == 1,
        failure_bound=failure_bound(arch, dim, min(primes)), notes=tuple(notes))
