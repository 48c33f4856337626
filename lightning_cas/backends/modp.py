"""Dimension exactly over GF(p): Jacobian rank of W -> (phi_W(X_1), ..., phi_W(X_N)) at a random point.

The Jacobian is built numerically (forward mode, ``core.forward``, the one forward definition of
every block) on centred float64 residues (``core.arithmetic.ModP``) in blocks of token matrices,
and each block goes straight into the streaming exact echelon form of ``rank_modp`` (float64 BLAS,
delayed reduction), so peak memory is about a quarter of one P x P matrix. Token matrices are drawn
until a whole block adds no rank (or the rank is P): the sample count is decided by the data, not
guessed.

Why that is a dimension, and the failure bound. The rank at W with enough samples is the rank of
d phi_W; it is the generic rank unless an r x r minor of the coefficient Jacobian (entries of
degree D - 1 in the weights) vanishes at W: probability <= r (D - 1) / p (Schwartz-Zippel). A
block adds no rank while the samples so far miss some tangent direction f only if f (of the
network's degree in the tokens, 3^L for L attention layers) vanishes at the block's first token
matrix, or, for a sketched block, if a random combination of its rows falls into the span so far:
<= (3^L + 1) / p per block. Every block but the last adds rank, so there are at most r + 1
blocks, and one run under-estimates with probability at most (r (D - 1) + (r + 1) (3^L + 1)) / p:
a function of the rank alone, so the largest rank gives, before the run, the largest bound a run
can state (``failure_numerator``, what a given prime is checked against). Two repetitions with
different primes and seeds guard against that; a disagreement is reported, never averaged away.
A prime for which the generic rank itself drops (it divides every maximal minor) is not covered
by the bound; it would show up as a disagreement between the primes.

At high degree (x^6 after four layers: weight degree 1555) the numerator passes p for every p < 2^26, so no
number of GF(p) runs keeps the promise. Then the point is drawn from GF(p^2) = GF(p)[i] (p = 3 mod 4, complex
float64, ``core.gfp``) and the elimination runs there: the same numerator over p^2, so one run keeps it
(``needs_extension``). A nonzero minor at a point of GF(p^2) is a nonzero minor of the Jacobian over GF(p)(W, X),
hence over QQ: the rank is the same proved lower bound.
"""

from __future__ import annotations

import math
import os
import time
from fractions import Fraction

import numpy as np

from lightning_cas.core import rank_modp
from lightning_cas.core.arithmetic import ModP, ModP2
from lightning_cas.core.checks import derived_seed
from lightning_cas.core.forward import jacobian
from lightning_cas.core.gfp import MODULUS_LIMIT
from lightning_cas.core.network import Network
from lightning_cas.core.primes import DEFAULT_PRIME, EXTENSION_PRIME, check_prime, next_prime, second_primes
from lightning_cas.errors import TooLargeError, UnsupportedError
from lightning_cas.options import MAX_FAILURE_BOUND
from lightning_cas.results.dimension import DimensionResult
from lightning_cas.system import deadline, progress

TANGENT_ELEMENTS = 1 << 22  # entries of one forward-mode tangent array per block (32 MiB)
BLOCK_ROWS = 384  # Jacobian rows per block
MIN_SAMPLES_ROWS = 8  # the first draw has at least P + 8 rows
SKETCH_MARGIN = 8  # sketch rows beyond the previous block's gain
MAX_REPETITIONS = 8  # runs of a network too large for any modp prime to keep one run's bound small
# Beyond this many GF(p) runs, one run over GF(p^2) is cheaper: its complex products cost five real ones
# (measured, 2000 x 2000 on one BLAS thread: 2.2 s against 0.43 s), and its bound is over p^2.
EXTENSION_AFTER = 5


def check_modp_prime(p) -> int:
    """The one prime check with the modp method's range: below 2^26, where the float64 rank routine is exact."""
    return check_prime(
        p,
        below=MODULUS_LIMIT,
        why=f"the modp method needs a prime below 2^26 = {MODULUS_LIMIT} "
        "(its exact float64 arithmetic), got {p}; for a larger prime use --method jacobian.",
    )


def default_samples(arch: Network) -> int:
    """Token matrices drawn up front: at least P + 8 rows (more are drawn while the rank grows)."""
    net = arch
    return max(1, math.ceil((net.parameters + MIN_SAMPLES_ROWS) / net.rows_per_sample))


def block_samples(arch: Network) -> int:
    """Token matrices per Jacobian block: about BLOCK_ROWS rows, and one tangent array of at most
    TANGENT_ELEMENTS entries (measured: larger blocks waste rows after the rank stops growing,
    smaller ones make the elimination's matrix products thin)."""
    net = arch
    by_memory = TANGENT_ELEMENTS // (net.widest * net.tokens * net.parameters)
    return max(1, min(by_memory, BLOCK_ROWS // net.rows_per_sample))


def working_bytes(arch: Network, extension: bool = False) -> int:
    """Peak memory of one run: the echelon form (r x (P - r) entries on its way to the rank, at most P^2 / 4,
    the rank at most min(P, ambient dimension): a network whose image is thin holds few rows; three copies
    while it is updated), one block's tangents and products (about 16 block-sized arrays; an attention block's dS holds
    t tangents per token), 8 bytes each (16 over GF(p^2))."""
    net = arch
    P = net.parameters
    rows = min(P, net.ambient_dimension or P, P // 2)  # r (P - r) grows with r up to P / 2
    block = block_samples(net) * max(net.widest, net.tokens * net.tokens) * net.tokens * P
    return (16 if extension else 8) * (3 * rows * (P - rows) + 16 * block) + 64 * 2**20


def check_memory(arch: Network, what: str = "the modp method", extension: bool = False) -> None:
    """Refuse, before any allocation, a run that would not fit in the memory this process may use."""
    net = arch
    need, free = working_bytes(net, extension), available_bytes()
    if need > free:
        raise TooLargeError(
            f"{what} would need about {need / 2**30:.1f} GiB for this architecture "
            f"({net.parameters} weights) and {free / 2**30:.1f} GiB are available; "
            "try smaller widths."
        )


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
        return 2**62


def sample_rank(
    arch: Network,
    w: np.ndarray,
    prime: int,
    rng: np.random.Generator,
    samples: int | None = None,
    inputs: np.ndarray | None = None,
    extension: bool = False,
) -> dict:
    """Rank of the Jacobian at the weights ``w`` (integers or Fractions, any representatives mod prime; with
    ``extension``, GF(p^2) = GF(p)[i] elements as complex numbers, tokens drawn from GF(p^2) too).

    Without ``inputs``, ``samples`` token matrices are drawn from ``rng`` up front (default:
    ``default_samples``) and streamed in blocks; further blocks are drawn until one adds no rank or
    the rank is P. Once a block adds fewer rows than it has, the next block is first sketched: c random
    combinations of its rows (c = the last gain + SKETCH_MARGIN) go in, and the block itself only if
    all c raised the rank. Late blocks add a few rows each, so this skips most of the elimination
    work; a sketch misses rank only with probability <= c / p. With ``inputs`` (N, d_0, t), exactly
    those token matrices are streamed, unsketched: the rank on given data.
    Returns rank, rows, samples and sketched (the sum of the c's, for the failure bound).
    """
    net = arch
    ar = ModP2(check_modp_prime(prime)) if extension else ModP(check_modp_prime(prime))
    wc = ar.array(w)
    ech = rank_modp.RowEchelon(net.parameters, prime, dtype=np.complex128 if extension else np.float64)
    with rank_modp.blas_threads():
        if inputs is not None:
            drawn, sketched = _stream_given(net, wc, ar, ar.array(inputs), ech), 0
        else:
            first = ar.random(rng, (samples or default_samples(net), net.input, net.tokens))
            drawn, sketched = _stream(net, wc, ar, rng, first, ech)
    return {"rank": ech.rank, "rows": drawn * net.rows_per_sample, "samples": drawn, "sketched": sketched}


def _stream(net, wc, ar, rng, first, ech) -> tuple[int, int]:
    """The loop of sample_rank: (token matrices drawn, sketch rows)."""
    P, nb, shape = net.parameters, block_samples(net), first.shape[1:]
    drawn = sketched = 0
    last = None  # rank added by the previous block
    while ech.rank < P:
        X = first[drawn : drawn + nb] if drawn < len(first) else ar.random(rng, (nb,) + shape)
        drawn += len(X)
        B = jacobian(net, ar, wc, X)
        c = B.shape[0] if last is None else last + SKETCH_MARGIN
        if c < B.shape[0]:
            sketched += c
            gained = ech.add(ar.matmul(ar.random(rng, (c, B.shape[0])), B))
            if gained == c:
                gained += ech.add(B)
        else:
            gained = ech.add(B)
        progress.report(done=drawn * net.rows_per_sample, unit="rows", detail=f"rank {ech.rank} of at most {P}")
        if not gained:
            break  # a whole block added nothing: the samples before it already see every direction
        last = gained
    return drawn, sketched


def _stream_given(net, wc, ar, X, ech) -> int:
    """Every given token matrix, block by block (stops early only at full rank)."""
    nb = block_samples(net)
    for s in range(0, len(X), nb):
        if ech.rank == net.parameters:
            break
        ech.add(jacobian(net, ar, wc, X[s : s + nb]))
    return len(X)


def jacobian_rank(
    arch: Network, w: np.ndarray, prime: int, rng: np.random.Generator, samples: int | None = None
) -> tuple[int, int]:
    """(rank, rows) of the Jacobian at the weights ``w`` (residues mod prime), tokens from ``rng``."""
    run = sample_rank(arch, w, prime, rng, samples)
    return run["rank"], run["rows"]


def rank_at_random_point(
    arch: Network, prime: int, seed: int, samples: int | None = None, extension: bool = False
) -> tuple[int, int]:
    """(rank, rows) of the Jacobian at weights and tokens drawn from GF(prime) (``extension``: GF(prime^2))
    with ``seed``."""
    net = arch
    rng = np.random.default_rng(seed)
    if extension:
        w = ModP2(prime).random(rng, net.parameters)
        run = sample_rank(net, w, prime, rng, samples, extension=True)
        return run["rank"], run["rows"]
    w = rng.integers(0, prime, size=net.parameters, dtype=np.int64)
    return jacobian_rank(net, w, prime, rng, samples)


def failure_numerator(arch: Network, rank: int | None = None, *, random_weights: bool = True) -> int:
    """The numerator of the failure bound (module docstring) of a run that finds ``rank``; without a
    rank, the largest one (min(parameters, ambient dimension)): the most any run can state. At given
    weights (``random_weights=False``) only the token part remains."""
    net = arch
    if rank is None:
        rank = min(net.parameters, net.ambient_dimension or net.parameters)
    return (rank * (net.weight_degree - 1) if random_weights else 0) + (rank + 1) * (net.degree + 1)


def failure_bound(arch: Network, rank: int, prime: int, extension: bool = False) -> float:
    """Schwartz-Zippel bound on one run under-estimating (module docstring), at most 1; over GF(p^2) the point
    is drawn from p^2 values per coordinate."""
    return min(1.0, failure_numerator(arch, rank) / (prime * prime if extension else prime))


def needs_extension(arch: Network) -> bool:
    """Run once over GF(p^2) instead of over GF(p) (module docstring's last paragraph): when the GF(p) primes
    would be more than EXTENSION_AFTER runs, or could not keep the promise together at all."""
    primes = default_primes(arch)
    numerator = failure_numerator(arch)
    together = math.prod(Fraction(min(numerator, q), q) for q in primes)
    return len(primes) > EXTENSION_AFTER or together >= Fraction(str(MAX_FAILURE_BOUND))


def default_primes(arch: Network, repetitions: int = 2) -> list[int]:
    """The primes of a run without a given prime, chosen so that the bound a run states keeps the promise a
    given prime is held to (options.MAX_FAILURE_BOUND, with the largest rank possible, for every prime used).

    DEFAULT_PRIME (the fastest) when it and its repetition pass; else the smallest pair of primes that pass,
    while they stay below the float64 limit 2^26; beyond that no prime keeps the promise for every rank a run
    could find, so the default primes stay (a prime near 2^26 costs the engine about three times as much and
    still would not pass: 6144 weights at depth 4 took 50 s there against 15 s) and runs are added until the
    bound of all runs under-counting together (the product: the runs are independent, and a run never
    over-counts) is below the promise."""
    numerator = failure_numerator(arch)
    floor = math.floor(Fraction(numerator) / Fraction(str(MAX_FAILURE_BOUND)))  # a prime q passes iff q > floor
    primes = second_primes(DEFAULT_PRIME, repetitions)
    if min(primes) > floor:
        return primes
    need = [next_prime(floor)]
    while len(need) < repetitions:
        need.append(next_prime(need[-1]))
    if need[-1] < MODULUS_LIMIT:
        return second_primes(need[-1], repetitions)
    primes = second_primes(DEFAULT_PRIME, repetitions)
    while (
        math.prod(Fraction(numerator, q) for q in primes) > Fraction(str(MAX_FAILURE_BOUND))
        and numerator < min(primes)
        and len(primes) < MAX_REPETITIONS
    ):
        primes = second_primes(primes[0], len(primes) + 1)
    return primes


def dimension_modp(
    arch: Network,
    seed: int = 0,
    prime: int | None = None,
    repetitions: int = 2,
    samples: int | None = None,
    extension: bool | None = None,
) -> DimensionResult:
    """Dimension by exact rank mod p, repeated with a second prime and seed; or once over GF(p^2) (``extension``;
    default: when ``needs_extension``)."""
    net = arch
    if not net.polynomial:
        raise UnsupportedError(
            "the modp method computes lightning (polynomial) networks only; "
            "softmax is not polynomial, use --method numeric."
        )
    start = time.perf_counter()
    if extension is None:
        extension = prime is None and needs_extension(net)
    if extension:
        primes = [EXTENSION_PRIME if prime is None else prime]
    elif prime is not None:  # the api has held a given prime to the promise (options.check_failure_bound)
        primes = second_primes(check_modp_prime(prime), repetitions)
    else:
        primes = default_primes(net, repetitions)
    check_memory(net, extension=extension)
    runs = []
    for k, q in enumerate(primes):
        deadline.check()
        run_seed = derived_seed(seed, k)
        progress.report(f"exact rank mod {q}, run {k + 1} of {len(primes)}")
        over = (True,) if extension else ()  # GF(p^2) only when asked: the GF(p) call keeps its four arguments
        rank, rows = deadline.stoppable(rank_at_random_point, net, q, run_seed, samples, *over)
        runs.append(
            {"prime": q, "seed": run_seed, "rank": rank, "rows": rows} | ({"field": "p^2"} if extension else {})
        )
    ranks = {r["rank"] for r in runs}
    dim = max(ranks)  # a random point never raises the rank: the largest is the best lower bound
    rows = max(r["rows"] for r in runs)
    notes = []
    if len(ranks) > 1:
        notes.append(
            f"repetitions disagree: ranks {[r['rank'] for r in runs]}; reporting the largest, "
            "which is still only a lower bound"
        )
    per_run = failure_bound(net, dim, min(primes), extension)
    if extension:
        notes.append(
            f"one run over GF({primes[0]}^2): over GF(p) no prime below 2^26 keeps the bound below "
            f"{MAX_FAILURE_BOUND:g} with at most {EXTENSION_AFTER} runs"
        )
    elif per_run >= MAX_FAILURE_BOUND:
        together = math.prod(failure_bound(net, dim, q) for q in primes)
        notes.append(
            f"no prime below 2^26 (the modp method's limit) brings one run's failure bound below "
            f"{MAX_FAILURE_BOUND:g}; the dimension is wrong only if all {len(primes)} runs under-count, "
            f"with probability at most {together:.2g}"
        )
    return DimensionResult(
        architecture=arch,
        dimension=dim,
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
        failure_bound=per_run,
        notes=tuple(notes),
    )
