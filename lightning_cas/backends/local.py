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
  float64 resolution); the rank is *certified* with arb balls (``backends.certified``).

Beside an exact rank the singular values of the Jacobian at W come in proved bands (arb balls), and a band
far below the others is a near-drop: the Jacobian is that close to a lower rank (``backends.certified``).

Batch functional dimension: with given inputs the rank is that of W -> (phi_W(X_n))_n on exactly those
X_n, as the ML literature defines it; nothing about the inputs is then probabilistic.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

import numpy as np

from lightning_cas.backends.certified import near_drops, sources
from lightning_cas.backends.modp import check_memory, check_modp_prime, dimension_modp, failure_numerator, sample_rank
from lightning_cas.backends.numeric import check_numeric_memory, float_bytes
from lightning_cas.core.arithmetic import Float64, Rationals
from lightning_cas.core.checks import derived_seed
from lightning_cas.core.forward import jacobian
from lightning_cas.core.network import Network
from lightning_cas.core.primes import DEFAULT_PRIME, faithful_primes, reduces
from lightning_cas.errors import InputError, TimeLimitError, TooLargeError
from lightning_cas.results.dimension import DimensionResult, spectrum_bands  # noqa: F401 (the float bands, beside the spectrum)
from lightning_cas.system import deadline
from lightning_cas.system.points import InputData, WeightPoint

EXACT_RANGE = 10**6  # random integer inputs of the QQ path: the failure bound falls with the range
EXACT_MAX_PARAMETERS = 400  # the QQ path: fmpq entries grow with the depth; modp has no such limit
CERTIFY_MARGIN = 8  # extra rows beyond P drawn for a certified rank


def _values(point: WeightPoint | None, net: Network, seed: int) -> np.ndarray:
    """The weights as an object array of Fractions (a point, or random integers from the seed)."""
    if point is not None:
        return np.array(point.values, dtype=object)
    rng = np.random.default_rng(derived_seed(seed, 99))
    return np.array([Fraction(int(v)) for v in rng.integers(-(2**20), 2**20, net.parameters)], dtype=object)


def _primes_for(values, prime: int | None, count: int = 2, inputs=None) -> list[int]:
    """Large primes that reduce the point, and the inputs when given, faithfully (core.primes.reduces): a given
    prime must (else one line), then the primes below it that do; without one, the largest that do below the
    default prime. An input whose denominator the prime divided had no residue at all."""
    data = list(values) + ([] if inputs is None else list(np.asarray(inputs, dtype=object).reshape(-1)))
    what = "the point" if inputs is None else "the point and the inputs"
    if prime is not None:
        check_modp_prime(prime)
        if not reduces(data, prime):
            raise InputError(
                f"the prime {prime} divides an entry or a denominator of {what}, so they are other "
                f"numbers mod {prime}; choose another prime (or none: the default ones are searched)."
            )
    return faithful_primes(data, prime if prime is not None else DEFAULT_PRIME, count, what)


def rank_at_point_modp(
    arch: Network,
    point: WeightPoint | None,
    *,
    inputs: InputData | None = None,
    seed: int = 0,
    prime: int | None = None,
) -> DimensionResult:
    """The rank at W mod two primes (module docstring), next to the generic rank."""
    net = arch
    start = time.perf_counter()
    check_memory(net)
    values = _values(point, net, seed)
    primes = _primes_for(values, prime, inputs=None if inputs is None else inputs.values)
    runs = []
    for k, q in enumerate(primes):
        deadline.check()
        run_seed = derived_seed(seed, k)
        run = deadline.stoppable(
            sample_rank,
            net,
            values,
            q,
            np.random.default_rng(run_seed),
            None,
            None if inputs is None else inputs.values,
        )
        runs.append({"prime": q, "seed": run_seed, "rank": run["rank"], "rows": run["rows"]})
    ranks = {r["rank"] for r in runs}
    rank = max(ranks)
    rows = max(r["rows"] for r in runs)
    # the generic rank for comparison: one run of the same engine (two runs checked the point; a generic
    # rank below the point's is caught by the note below and covered by the failure bound)
    generic = dimension_modp(net, seed=seed, repetitions=1).dimension
    notes = []
    if len(ranks) > 1:
        notes.append(
            f"the primes disagree: ranks {[r['rank'] for r in runs]}; the largest is reported (a prime "
            "dividing every maximal minor lowers the rank)"
        )
    if rank > generic:
        notes.append(
            f"the rank at the point ({rank}) is above the generic rank ({generic}): the generic run was "
            "unlucky; its failure bound covers this"
        )
    bound = None if inputs is not None else min(1.0, failure_numerator(net, rank, random_weights=False) / min(primes))
    bands, near, more = _near(net, values, rank, seed) if point is not None and inputs is None else ((), (), [])
    notes += more
    at, data = sources(point, inputs)
    detail = (
        "rank of the Jacobian at the given weights mod "
        + " and ".join(map(str, primes))
        + (" on the given inputs" if inputs is not None else " on random token matrices")
    )
    certainty = (
        "a certified lower bound of the rank over QQ on these inputs, equal to it unless the primes "
        "divide every maximal minor"
        + ("" if inputs is not None else "; the inputs are random: failure_bound bounds missing rank")
    )
    return DimensionResult(
        architecture=arch,
        dimension=rank,
        parameters=net.parameters,
        ambient_dimension=net.ambient_dimension,
        method="modp",
        certainty="probabilistic",
        seed=seed,
        elapsed_s=time.perf_counter() - start,
        primes=tuple(primes),
        samples=rows // net.rows_per_sample,
        runs=tuple(runs),
        consistent=len(ranks) == 1,
        failure_bound=bound,
        notes=tuple(notes),
        at=at,
        inputs=data,
        generic_dimension=generic,
        method_detail=detail,
        certainty_detail=certainty,
        bands=bands,
        near_ranks=near,
    )


def _near(net: Network, values, rank: int, seed: int):
    """The proved bands and near-drops beside the rank at W (only at a given point: on given inputs the
    rank is that of those inputs, not of the differential on generic ones)."""
    try:
        return near_drops(net, values, rank, seed)
    except TimeLimitError:
        return (), (), ["the time limit ended the singular-value bands; the rank stands"]


def _qq_rank(J) -> int:
    import flint

    rows, cols = J.shape
    return flint.fmpq_mat(rows, cols, list(J.reshape(-1))).rank()


def rank_at_point_exact(
    arch: Network, point: WeightPoint | None, *, inputs: InputData | None = None, seed: int = 0
) -> DimensionResult:
    """The rank at W over QQ (python-flint), on random integer token matrices or the given ones."""
    net = arch
    if net.parameters > EXACT_MAX_PARAMETERS:
        raise TooLargeError(
            f"the exact path works over QQ up to {EXACT_MAX_PARAMETERS} weights (this network has "
            f"{net.parameters}); the default (rank mod two large primes) has no such limit."
        )
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
    bands, near, notes = (
        _near(net, _values(point, net, seed), rank, seed) if point is not None and inputs is None else ((), (), [])
    )
    at, data = sources(point, inputs)
    certainty = "exact" if inputs is not None else "probabilistic"
    detail = "the rank over QQ of the Jacobian at the given weights on " + (
        "the given inputs"
        if inputs is not None
        else f"random integer token matrices (in [-{EXACT_RANGE}, {EXACT_RANGE}])"
    )
    return DimensionResult(
        architecture=arch,
        dimension=rank,
        parameters=net.parameters,
        ambient_dimension=net.ambient_dimension,
        method="exact",
        certainty=certainty,
        seed=seed,
        elapsed_s=time.perf_counter() - start,
        samples=samples,
        failure_bound=None if inputs is not None else min(1.0, (rank + samples) * net.degree / (2 * EXACT_RANGE + 1)),
        at=at,
        inputs=data,
        generic_dimension=generic,
        method_detail=detail,
        bands=bands,
        near_ranks=near,
        notes=tuple(notes),
        certainty_detail=(
            "exact arithmetic; "
            + ("on the given inputs" if inputs is not None else "the random inputs could miss rank with failure_bound")
        ),
    )


# ---------------------------------------------------------------- softmax: certified


def float_spectrum(
    arch: Network, point: WeightPoint | None, inputs: InputData | None, seed: int = 0
) -> tuple[float, ...]:
    """Singular values of the float64 Jacobian at the point (what float autodiff would see), descending."""
    net = arch
    ar = Float64()
    values = _values(point, net, seed)
    if inputs is not None:
        X = np.vectorize(float, otypes=[float])(inputs.values)
    else:
        rng = np.random.default_rng(derived_seed(seed, 3))
        X = rng.standard_normal(
            (max(1, math.ceil((net.parameters + CERTIFY_MARGIN) / net.rows_per_sample)), net.input, net.tokens)
        )
    check_numeric_memory(float_bytes(net, len(X)), net, "the float spectrum at the point")
    J = jacobian(net, ar, ar.array([float(v) for v in values]), ar.array(X))
    return tuple(float(v) for v in np.linalg.svd(J, compute_uv=False))
