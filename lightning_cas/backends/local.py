"""The rank of the parametrization's differential at given weights (functional dimension), exactly.

A point's entries are exact rationals (a float is the binary rational it is, ``system.points``), so
for a polynomial network the rank at W is a question about exact numbers:

* ``modp`` (default): the Jacobian at W on random token matrices (or on given ones), reduced mod two
  large primes, ranked exactly by ``rank_modp``. A nonzero minor mod p is nonzero over QQ, so the
  rank mod p is a certified lower bound of the rank over QQ on those inputs; it equals it unless p
  divides every maximal minor (finitely many primes: the two primes would disagree). On random inputs
  the rank over QQ is that of d phi_W unless the inputs are special (Schwartz-Zippel: the failure bound).
* ``exact``: the same over QQ (python-flint fmpq), at small sizes.
* softmax: not polynomial, so floating point can be badly wrong (its small singular values fall below
  float64 resolution); the rank is *certified* with arb balls: rank >= r by an r x r Gram minor of
  selected columns whose enclosure excludes 0, rank <= P - k by k exact kernel vectors (the named
  group's tangents at W, which are exactly in the kernel), precision doubled until the two meet or a cap.

Batch functional dimension: with given inputs the rank is that of W -> (phi_W(X_n))_n on exactly those
X_n, as the ML literature defines it; nothing about the inputs is then probabilistic.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

import numpy as np

from lightning_cas.backends.modp import (check_memory, check_modp_prime, dimension_modp, failure_numerator,
                                         sample_rank)
from lightning_cas.backends.numeric import arb_bytes, check_numeric_memory, float_bytes
from lightning_cas.system import deadline
from lightning_cas.core.architecture import Architecture, as_network
from lightning_cas.core.arithmetic import Balls, Float64, Rationals
from lightning_cas.core.checks import derived_seed
from lightning_cas.core.forward import jacobian
from lightning_cas.core.network import Network
from lightning_cas.system.points import InputData, WeightPoint
from lightning_cas.core.primes import DEFAULT_PRIME, previous_prime
from lightning_cas.core.results import DimensionResult, RankCertificate, Source
from lightning_cas.core.text import spectrum_bands
from lightning_cas.core.symmetry import orbit_rank_modp
from lightning_cas.errors import InputError, TooLargeError

EXACT_RANGE = 10 ** 6  # random integer inputs of the QQ path: the failure bound falls with the range
EXACT_MAX_PARAMETERS = 400  # the QQ path: fmpq entries grow with the depth; modp has no such limit
DEFAULT_DIGITS = 30
MAX_DIGITS = 480
CERTIFY_MARGIN = 8  # extra rows beyond P drawn for a certified rank


def _sources(point: WeightPoint | None, inputs: InputData | None, seed: int, net: Network):
    at = None if point is None else Source(point.source, point.sha256, len(point.values),
                                           None if point.source else "given in Python")
    data = None if inputs is None else Source(inputs.source, inputs.sha256, inputs.count)
    return at, data


def _values(point: WeightPoint | None, net: Network, seed: int) -> np.ndarray:
    """The weights as an object array of Fractions (a point, or random integers from the seed)."""
    if point is not None:
        return np.array(point.values, dtype=object)
    rng = np.random.default_rng(derived_seed(seed, 99))
    return np.array([Fraction(int(v)) for v in rng.integers(-(2 ** 20), 2 ** 20, net.parameters)], dtype=object)


def _usable(values, p: int) -> bool:
    """p may reduce the point: no denominator is divisible by p and no nonzero entry vanishes mod p."""
    return all(q.denominator % p and (q == 0 or q.numerator % p) for q in values)


def _primes_for(values, prime: int | None, count: int = 2) -> list[int]:
    """Large primes that reduce the point faithfully: a given prime must (else one line), then the primes
    below it that do; without one, the largest that do below the default prime."""
    if prime is not None:
        check_modp_prime(prime)
        if not _usable(values, prime):
            raise InputError(f"the prime {prime} divides an entry or a denominator of the point, so the point mod "
                             f"{prime} is another point; choose another prime (or none: the default ones are "
                             "searched).")
    out, q = [], prime if prime is not None else DEFAULT_PRIME
    while len(out) < count and q > 3:
        if _usable(values, q):
            out.append(q)
        q = previous_prime(q)
    return out


def rank_at_point_modp(arch: Architecture | Network, point: WeightPoint | None, *, inputs: InputData | None = None,
                       seed: int = 0, prime: int | None = None) -> DimensionResult:
    """The rank at W mod two primes (module docstring), next to the generic rank."""
    net = as_network(arch)
    start = time.perf_counter()
    check_memory(net)
    values = _values(point, net, seed)
    primes = _primes_for(values, prime)
    runs = []
    for k, q in enumerate(primes):
        deadline.check()
        run_seed = derived_seed(seed, k)
        run = deadline.stoppable(sample_rank, net, values, q, np.random.default_rng(run_seed), None,
                                 None if inputs is None else inputs.values)
        runs.append({"prime": q, "seed": run_seed, "rank": run["rank"], "rows": run["rows"]})
    ranks = {r["rank"] for r in runs}
    rank = max(ranks)
    rows = max(r["rows"] for r in runs)
    # the generic rank for comparison: one run of the same engine (two runs checked the point; a generic
    # rank below the point's is caught by the note below and covered by the failure bound)
    generic = dimension_modp(net, seed=seed, repetitions=1).dimension
    notes = []
    if len(ranks) > 1:
        notes.append(f"the primes disagree: ranks {[r['rank'] for r in runs]}; the largest is reported (a prime "
                     "dividing every maximal minor lowers the rank)")
    if rank > generic:
        notes.append(f"the rank at the point ({rank}) is above the generic rank ({generic}): the generic run was "
                     "unlucky; its failure bound covers this")
    bound = None if inputs is not None else min(1.0, failure_numerator(net, rank, random_weights=False) / min(primes))
    at, data = _sources(point, inputs, seed, net)
    detail = ("rank of the Jacobian at the given weights mod "
              + " and ".join(map(str, primes)) + (" on the given inputs" if inputs is not None else
                                                  " on random token matrices"))
    certainty = ("a certified lower bound of the rank over QQ on these inputs, equal to it unless the primes "
                 "divide every maximal minor" + ("" if inputs is not None else
                                                 "; the inputs are random: failure_bound bounds missing rank"))
    return DimensionResult(
        architecture=arch, dimension=rank, parameters=net.parameters, ambient_dimension=net.ambient_dimension,
        method="modp", certainty="probabilistic", seed=seed, elapsed_s=time.perf_counter() - start,
        primes=tuple(primes), samples=rows // net.rows_per_sample, runs=tuple(runs), consistent=len(ranks) == 1,
        failure_bound=bound, notes=tuple(notes), at=at, inputs=data, generic_dimension=generic,
        method_detail=detail, certainty_detail=certainty)


def _qq_rank(J) -> int:
    import flint

    rows, cols = J.shape
    return flint.fmpq_mat(rows, cols, list(J.reshape(-1))).rank()


def rank_at_point_exact(arch: Architecture | Network, point: WeightPoint | None, *, inputs: InputData | None = None,
                        seed: int = 0) -> DimensionResult:
    """The rank at W over QQ (python-flint), on random integer token matrices or the given ones."""
    net = as_network(arch)
    if net.parameters > EXACT_MAX_PARAMETERS:
        raise TooLargeError(f"the exact path works over QQ up to {EXACT_MAX_PARAMETERS} weights (this network has "
                            f"{net.parameters}); the default (rank mod two large primes) has no such limit.")
    start = time.perf_counter()
    ar = Rationals()
    w = ar.array(_values(point, net, seed))
    rng = np.random.default_rng(derived_seed(seed, 3))
    if inputs is not None:
        X = ar.array(inputs.values)
        rank = deadline.stoppable(lambda: _qq_rank(jacobian(net, ar, w, X)))
        samples = inputs.count
    else:
        per = net.rows_per_sample
        samples = max(1, math.ceil((net.parameters + CERTIFY_MARGIN) / per))
        blocks = [ar.array(rng.integers(-EXACT_RANGE, EXACT_RANGE + 1, (samples, net.input, net.tokens)))]
        rank = _qq_rank(jacobian(net, ar, w, blocks[0]))
        while rank < net.parameters:  # one more block: it must add nothing
            deadline.check()
            extra = ar.array(rng.integers(-EXACT_RANGE, EXACT_RANGE + 1, (max(1, samples // 2), net.input, net.tokens)))
            blocks.append(extra)
            grown = _qq_rank(jacobian(net, ar, w, np.concatenate(blocks)))
            if grown == rank:
                break
            rank = grown
        samples = sum(len(b) for b in blocks)
    generic = dimension_modp(net, seed=seed).dimension
    at, data = _sources(point, inputs, seed, net)
    certainty = "exact" if inputs is not None else "probabilistic"
    detail = ("the rank over QQ of the Jacobian at the given weights on "
              + ("the given inputs" if inputs is not None else
                 f"random integer token matrices (in [-{EXACT_RANGE}, {EXACT_RANGE}])"))
    return DimensionResult(
        architecture=arch, dimension=rank, parameters=net.parameters, ambient_dimension=net.ambient_dimension,
        method="exact", certainty=certainty, seed=seed, elapsed_s=time.perf_counter() - start, samples=samples,
        failure_bound=None if inputs is not None else min(1.0, (rank + samples) * net.degree / (2 * EXACT_RANGE + 1)),
        at=at, inputs=data, generic_dimension=generic, method_detail=detail,
        certainty_detail=("exact arithmetic; " + ("on the given inputs" if inputs is not None else
                                                  "the random inputs could miss rank with failure_bound")))


# ---------------------------------------------------------------- softmax: certified


def float_spectrum(arch: Architecture | Network, point: WeightPoint | None, inputs: InputData | None,
                   seed: int = 0) -> tuple[float, ...]:
    """Singular values of the float64 Jacobian at the point (what float autodiff would see), descending."""
    net = as_network(arch)
    ar = Float64()
    values = _values(point, net, seed)
    if inputs is not None:
        X = np.vectorize(float, otypes=[float])(inputs.values)
    else:
        rng = np.random.default_rng(derived_seed(seed, 3))
        X = rng.standard_normal((max(1, math.ceil((net.parameters + CERTIFY_MARGIN) / net.rows_per_sample)),
                                 net.input, net.tokens))
    check_numeric_memory(float_bytes(net, len(X)), net, "the float spectrum at the point")
    J = jacobian(net, ar, ar.array([float(v) for v in values]), ar.array(X))
    return tuple(float(v) for v in np.linalg.svd(J, compute_uv=False))


def _pivoted_columns(G, limit: int, digits: int) -> list[int]:
    """Columns of a Gram matrix (arb) chosen by greedy pivoted Cholesky on its midpoints, at most ``limit``,
    while the pivot stays above the working precision's noise (largest diagonal x 10^-(digits - 8))."""
    P = len(G)
    M = [[G[i][j].mid() for j in range(P)] for i in range(P)]
    top = max((abs(M[i][i]) for i in range(P)), default=0)
    if top == 0:
        return []
    floor = top * type(top)(10) ** (8 - digits)
    chosen: list[int] = []
    while len(chosen) < limit:
        k = max((i for i in range(P) if i not in chosen), key=lambda i: abs(M[i][i]), default=None)
        if k is None or abs(M[k][k]) <= floor:
            break
        chosen.append(k)
        pivot, row_k = M[k][k], M[k]
        for i in range(P):
            if i == k or M[i][k] == 0:
                continue
            f = M[i][k] / pivot
            Mi = M[i]
            for j in range(P):
                Mi[j] = Mi[j] - f * row_k[j]
        M[k] = [0 * v for v in row_k]
    return chosen


def rank_at_point_softmax(arch: Architecture | Network, point: WeightPoint | None, *,
                          inputs: InputData | None = None, seed: int = 0, digits: int = DEFAULT_DIGITS,
                          max_digits: int = MAX_DIGITS) -> DimensionResult:
    """The certified rank at W of a softmax network (module docstring): lower bound by a Gram minor whose
    ball excludes 0, upper bound by the named group's exact tangents at W (rank mod p, a valid lower bound
    on their number); the precision doubles until the bounds meet or ``max_digits``."""
    import flint

    net = as_network(arch)
    start = time.perf_counter()
    values = _values(point, net, seed) if point is not None else None
    if values is None:
        rng = np.random.default_rng(derived_seed(seed, 99))
        values = np.array([Fraction(float(v)) for v in rng.standard_normal(net.parameters) / 2], dtype=object)
    if inputs is not None:
        X = inputs.values
    else:
        rng = np.random.default_rng(derived_seed(seed, 3))
        samples = max(1, math.ceil((net.parameters + CERTIFY_MARGIN) / net.rows_per_sample))
        X = np.array([Fraction(float(v)) for v in rng.standard_normal(samples * net.input * net.tokens)],
                     dtype=object).reshape(samples, net.input, net.tokens)
    check_numeric_memory(float_bytes(net, len(X)), net, "the float spectrum at the point")
    check_numeric_memory(arb_bytes(net, len(X)), net, "the certified rank at the point")
    f64 = Float64()
    Jf = jacobian(net, f64, f64.array([float(v) for v in values]),
                  f64.array(np.vectorize(float, otypes=[float])(X)))
    float_spectrum = np.linalg.svd(Jf, compute_uv=False)
    float_rank = int(np.linalg.matrix_rank(Jf))
    # exact kernel vectors: the named group's tangents at W (softmax: GL(a), GL(b), interface GLs)
    kernel = orbit_rank_modp(net, values) if all(_usable([v], DEFAULT_PRIME) for v in values) else 0
    upper = min(net.parameters - kernel, Jf.shape[0])
    lower, used, lower_by = 0, digits, "none"
    prec, G = digits, None
    while True:
        deadline.check()
        with flint.ctx.workdps(prec):
            ar = Balls(prec)
            J = jacobian(net, ar, ar.array(values), ar.array(X))
            M = flint.arb_mat(J.tolist())
            G = M.transpose() * M
            Gl = [[G[i, j] for j in range(G.ncols())] for i in range(G.nrows())]
            cols = _pivoted_columns(Gl, upper, prec)
            while cols and len(cols) > lower:  # certify the largest prefix of the pivots that is certain
                minor = flint.arb_mat([[Gl[i][j] for j in cols] for i in cols]).det()
                if minor > 0:
                    lower, used = len(cols), prec
                    lower_by = (f"the Gram determinant of {len(cols)} selected Jacobian columns is "
                                f"{minor.str(4, radius=True)} > 0 at {prec} digits")
                    break
                cols = cols[:-1]
        if lower >= upper or prec * 2 > max_digits:
            break
        prec *= 2
    with flint.ctx.workdps(prec):
        high = np.sort(np.sqrt(np.abs(np.array([float(e.real.mid()) for e in G.eig(algorithm="approx")]))))[::-1]
    upper_by = (f"{kernel} independent exact kernel vectors (the named group's tangents at W, rank mod p)"
                if kernel else "the rows and columns of the Jacobian")
    cert = RankCertificate(lower=lower, upper=upper, lower_by=lower_by, upper_by=upper_by, digits=used)
    bands = spectrum_bands(high)
    notes = [f"float64: numpy's matrix_rank gives {float_rank}; singular values from {float_spectrum[0]:.3g} to "
             f"{float_spectrum[-1]:.3g}",
             "high-precision spectrum bands (count, largest, smallest): "
             + ", ".join(f"({n}, {a:.2g}, {b:.2g})" for n, a, b in bands)]
    if lower < upper:
        notes.append(f"not certified within {max_digits} digits: the rank is at least {lower} and at most {upper}")
    at, data = _sources(point, inputs, seed, net)
    return DimensionResult(
        architecture=arch, dimension=lower, parameters=net.parameters, ambient_dimension=net.ambient_dimension,
        method="certified", certainty="exact" if lower == upper else "numeric", seed=seed,
        elapsed_s=time.perf_counter() - start, samples=len(X), consistent=lower == upper, notes=tuple(notes),
        at=at, inputs=data, certificate=cert, spectrum=tuple(float(v) for v in high),
        method_detail="arb balls: a Gram minor certified nonzero, exact kernel vectors from the named group",
        certainty_detail=("certified: lower and upper bounds meet" if lower == upper else
                          "a certified lower bound only (the dimension field); see certificate.upper"))
