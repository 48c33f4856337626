"""Dimension exactly over GF(p): Jacobian rank of W -> (phi_W(X_1), ..., phi_W(X_N)) at a random point.

The evaluation and its derivatives are computed numerically (forward mode, int64 with safe
reductions, see ``model.Field``), never symbolically; the rank is exact (python-flint nmod_mat).
A random point can only lower the rank, so the answer is a lower bound that equals the generic
rank except with probability at most ``failure_bound`` (Schwartz-Zippel). Two repetitions with
different primes and seeds guard against that; a disagreement is reported, never averaged away.
"""

from __future__ import annotations

import math
import time

import numpy as np
import sympy

from lightning_cas.core.architecture import Architecture
from lightning_cas.errors import InputError, TooLargeError, UnsupportedError
from lightning_cas.core.model import Field, jacobian
from lightning_cas.results import DimensionResult

DEFAULT_PRIME = 2_147_483_647  # 2^31 - 1, the largest prime the int64 arithmetic allows
MAX_PRIME = 2 ** 31


def check_prime(p) -> int:
    """Refuse a modulus python-flint would abort on (composite) or our int64 arithmetic cannot hold."""
    if isinstance(p, bool) or not isinstance(p, int):
        raise InputError(f"the prime must be an integer, got {p!r}.")
    if p < 3 or p >= MAX_PRIME:
        raise InputError(f"the prime must be between 3 and 2^31 - 1, got {p}.")
    if not sympy.isprime(p):
        raise InputError(f"the modulus {p} is not prime; use a prime such as {DEFAULT_PRIME}.")
    return p


def weight_degree(arch: Architecture) -> int:
    """Degree of phi in the weights: 3 for one layer, D_i = 3 D_{i-1} + 3."""
    deg = 0
    for _ in range(arch.depth):
        deg = 3 * deg + 3
    return deg


def default_samples(arch: Architecture) -> int:
    """Enough token matrices that the Jacobian has at least 2P + 8 rows (rank <= P)."""
    per_sample = arch.widths[-1] * arch.tokens
    return max(1, math.ceil((2 * arch.parameters + 8) / per_sample))


MAX_WORKING_BYTES = 4 * 2 ** 30


def working_bytes(arch: Architecture, samples: int) -> int:
    """Rough peak memory of the forward-mode Jacobian: a few int64 tangent arrays (P, N, width, t)."""
    widest = max(max(arch.widths), max(arch.attention))
    return 6 * 8 * arch.parameters * samples * widest * max(arch.tokens, widest)


def jacobian_rank(arch: Architecture, w: np.ndarray, prime: int, rng: np.random.Generator,
                  samples: int) -> tuple[int, int]:
    """(rank, rows) of the Jacobian at the weights ``w`` (residues mod prime) on ``samples`` token
    matrices drawn from ``rng``."""
    import flint

    field = Field(prime)
    X = field.random(rng, (samples, arch.widths[0], arch.tokens))
    J = jacobian(arch, w, X, field)
    M = flint.nmod_mat(J.shape[0], J.shape[1], J.reshape(-1).tolist(), prime)
    return M.rank(), J.shape[0]


def rank_at_random_point(arch: Architecture, prime: int, seed: int, samples: int) -> tuple[int, int]:
    """(rank, rows) of the Jacobian at weights and tokens drawn from GF(prime) with ``seed``."""
    rng = np.random.default_rng(seed)
    w = Field(prime).random(rng, arch.parameters)
    return jacobian_rank(arch, w, prime, rng, samples)


def dimension_modp(arch: Architecture, seed: int = 0, prime: int | None = None, repetitions: int = 2,
                   samples: int | None = None) -> DimensionResult:
    """Dimension by exact rank mod p, repeated with a second prime and seed."""
    if arch.normalization != "none":
        raise UnsupportedError("the modp method computes lightning (polynomial) networks only; "
                               "softmax is not polynomial, use --method numeric.")
    start = time.perf_counter()
    p = check_prime(prime if prime is not None else DEFAULT_PRIME)
    primes = [p]
    while len(primes) < repetitions:
        primes.append(int(sympy.prevprime(primes[-1])))
    n = samples or default_samples(arch)
    need = working_bytes(arch, n)
    if need > MAX_WORKING_BYTES:
        raise TooLargeError(f"the modp method would need about {need / 2**30:.0f} GiB for this architecture "
                            f"({arch.parameters} weights; limit {MAX_WORKING_BYTES / 2**30:.0f} GiB); no method here "
                            "handles it on this machine: try smaller widths.")
    runs = []
    for k, q in enumerate(primes):
        rank, rows = rank_at_random_point(arch, q, seed + k, n)
        runs.append({"prime": q, "seed": seed + k, "rank": rank, "rows": rows})
    ranks = {r["rank"] for r in runs}
    dim = max(ranks)  # a random point never raises the rank: the largest is the best lower bound
    bound = dim * (weight_degree(arch) - 1 + arch.degree) / min(primes)
    notes = []
    if len(ranks) > 1:
        notes.append(f"repetitions disagree: ranks {[r['rank'] for r in runs]}; reporting the largest, "
                     "which is still only a lower bound")
    return DimensionResult(
        architecture=arch, dimension=dim, parameters=arch.parameters, ambient_dimension=arch.ambient_dimension,
        method="modp", certainty="probabilistic", seed=seed, elapsed_s=time.perf_counter() - start,
        primes=tuple(primes), samples=n, runs=tuple(runs), consistent=len(ranks) == 1,
        failure_bound=min(1.0, bound), notes=tuple(notes))
