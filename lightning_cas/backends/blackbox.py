"""Dimension by a black-box rank: Wiedemann's method on J, touched only through products J v.

J is the Jacobian of W -> (phi_W(X_n))_n at a random point of GF(p^2) (``core.arithmetic.ModP2``), m rows
(m > P: at least P + 8), P columns. It is never formed: J v is one directional forward pass
(``core.forward.jvp``), whose arrays are those of a forward pass, so memory is O(m + P) plus one pass
(the dense route's echelon form holds up to P^2 / 4 entries).

The square operator is B = R [J | 0] C D on GF(p^2)^n, n the power of two >= m: C and R are Benes networks
(two butterfly networks back to back) of random 2 x 2 switches [[1, a], [1, 1 + a]] (determinant 1), D a
random diagonal, and [J | 0] sends x to J (x_1..x_P), padded with zero rows. Its first P coordinates cover
GF(p^2)^P, so rank [J | 0] = rank J, and B is singular (rank <= P < n).

Why the rank found is a proved lower bound. Berlekamp-Massey on s_i = u^T B^i v returns the linear complexity
L of the terms seen, at most the degree of the minimal polynomial of B (which annihilates the whole sequence),
and deg minpoly(B) <= rank(B) + 1 for every matrix (the nonzero eigenvalues' part has degree <= its dimension
<= rank; a nilpotent Jordan block of size s has rank s - 1). So rank J >= rank B >= L - 1, whatever the
random choices; J's rank mod p (any point of the algebraic closure) is a lower bound on the generic rank over
QQ as in MATH.md section 14. The method stops at L - 1 = min(P, ambient) (no rank can be larger), after
2 (min(P, ambient) + 1) terms (BM's generator is then the sequence's minimal one), or early, once EARLY_STOP
discrepancies in a row are zero past 2 L terms: a stop that only ever under-counts.

Equality, and its failure bound. L - 1 = rank J fails only if (a) the random point lowers the rank (the dense
route's Schwartz-Zippel numerator, ``modp.failure_numerator``, now over p^2 values per coordinate), or the
preconditioned B does not have minimal polynomial of degree rank + 1: (b) C and R do not bring independent
columns and rows to the front (Benes networks of switches: at most n log2(n) / p^2 each, a conservative form of
Chen, Eberly, Kaltofen, Saunders, Turner and Villard 2002), (c) D does not separate the nonzero eigenvalues
(at most n^2 / p^2, conservative for Kaltofen-Saunders 1991's diagonal scaling), or (d) the projections u, v
miss the minimal polynomial (at most 2 n / p^2, Wiedemann 1986), or (e) the early stop comes before the
complexity is reached (it needs a zero discrepancy where the sequence's complexity exceeds L, which makes the
(L + 1) x (L + 1) Hankel determinant of the terms, of degree L + 1 in u, vanish: at most the sum of (L + 1) / p^2
over L < n, below n^2 / p^2). The sum is tiny over p^2 (about 10^-5 at
n = 6 10^4, p near 2^24): one run keeps the promise where the dense route over GF(p) needs three to five.
The sample count is checked as the dense route checks it: when the rank is below min(P, ambient), a second
run at the same point with one more block of samples (fresh preconditioners) must find the same rank.
"""

from __future__ import annotations

import math
import time

import numpy as np

from lightning_cas.core import gfp
from lightning_cas.core.arithmetic import ModP2
from lightning_cas.core.checks import derived_seed
from lightning_cas.core.forward import jvp
from lightning_cas.core.network import Network
from lightning_cas.core.primes import EXTENSION_PRIME
from lightning_cas.errors import InputError, UnsupportedError
from lightning_cas.options import MAX_FAILURE_BOUND
from lightning_cas.results.dimension import DimensionResult
from lightning_cas.system import deadline, progress

MAX_RUNS = 6  # sample counts tried before a still-growing rank is reported as a lower bound
EARLY_STOP = 8  # zero discrepancies in a row past 2 L terms that end the sequence (bound (e))


class Benes:
    """A Benes network on GF(p^2)^n (n a power of two): butterfly levels 1, 2, ..., n/2, then back down, each
    level a random switch [[1, a], [1, 1 + a]] on every pair it joins."""

    def __init__(self, ar: ModP2, rng: np.random.Generator, n: int):
        self.ar, self.n = ar, n
        k = n.bit_length() - 1
        self.levels = [1 << j for j in list(range(k)) + list(range(k - 2, -1, -1))]
        self.switches = [ar.random(rng, (n // (2 * s), 1, s)) for s in self.levels]

    def apply(self, x: np.ndarray) -> np.ndarray:
        """The network applied to x (centred residues): per level a x_1 reduced, then x_0 + a x_1 and
        x_0 + (1 + a) x_1 = (x_0 + a x_1) + x_1 below 3 H, reduced once."""
        p = self.ar.prime
        for s, a in zip(self.levels, self.switches):
            pairs = x.reshape(-1, 2, s)
            x0, x1 = pairs[:, :1], pairs[:, 1:]
            top = gfp.reduce(a * x1, p)
            top += x0
            x = gfp.reduce(np.concatenate([top, top + x1], axis=1), p).reshape(-1)
        return x


def berlekamp_massey_step(state: dict, s: np.ndarray, ar: ModP2) -> None:
    """One term of Berlekamp-Massey over GF(p^2) (``state``: C, B, L, m, b; ``s``: the terms so far)."""
    n, C, L = len(s) - 1, state["C"], state["L"]
    d = s[n]
    if L:
        d = ar.add(np.array([d]), gfp.matmul(C[1 : L + 1][None, :], s[n - L : n][::-1][:, None], ar.prime)[0])[0]
    if d == 0:
        state["m"] += 1
        state["zeros"] = state.get("zeros", 0) + 1
        return
    state["zeros"] = 0
    coef = ar.mul(np.array([d]), np.array([ar.inverse(state["b"])]))[0]
    B, m = state["B"], state["m"]
    need = max(len(C), len(B) + m)
    T = C.copy()
    C = np.concatenate([C, ar.zeros(need - len(C))])
    C[m : m + len(B)] = ar.sub(C[m : m + len(B)], ar.mul(B, np.array([coef])))
    if 2 * L <= n:
        state.update(C=C, L=n + 1 - L, B=T, b=d, m=1)
    else:
        state.update(C=C, m=m + 1)


def krylov_rank(net: Network, ar: ModP2, w, X, rng: np.random.Generator, bound: int) -> tuple[int, int]:
    """(L - 1, terms used) for the preconditioned operator of the module docstring at weights w, tokens X."""
    P = net.parameters
    m = len(X) * net.rows_per_sample
    n = 1 << max(1, (m - 1).bit_length())
    C, R = Benes(ar, rng, n), Benes(ar, rng, n)
    D = ar.random(rng, n)
    u, x = ar.random(rng, n), ar.random(rng, n)
    state = {"C": ar.ones(1), "B": ar.ones(1), "L": 0, "m": 1, "b": complex(1)}
    terms = ar.zeros(2 * (bound + 1))
    for i in range(len(terms)):
        terms[i] = gfp.matmul(u[None, :], x[:, None], ar.prime)[0, 0]
        berlekamp_massey_step(state, terms[: i + 1], ar)
        if state["L"] - 1 >= bound or (state.get("zeros", 0) >= EARLY_STOP and i + 1 >= 2 * state["L"] + EARLY_STOP):
            break
        y = C.apply(ar.mul(D, x))
        Jy = jvp(net, ar, w, X, y[:P, None])[:, 0]
        x = R.apply(np.concatenate([Jy, ar.zeros(n - m)]))
        if i % 64 == 0:
            deadline.check()
            progress.report(done=i, unit="products", detail=f"rank >= {max(state['L'] - 1, 0)}")
    return max(state["L"] - 1, 0), i + 1


def preconditioner_numerator(n: int) -> int:
    """(b) + (c) + (d) + (e) of the module docstring, over p^2, for an operator of size n."""
    return 2 * n * max(1, n.bit_length() - 1) + 2 * n * n + 2 * n


def check_blackbox_prime(p) -> int:
    """Below 2^26 (the float64 kernels) and 3 mod 4 (GF(p^2) = GF(p)[i]), refused in one line otherwise."""
    from lightning_cas.backends.modp import check_modp_prime

    p = check_modp_prime(p)
    if p % 4 != 3:
        raise InputError(
            f"the blackbox method works over GF(p^2) = GF(p)[i] and needs a prime p = 3 mod 4, got {p}; "
            f"for example {EXTENSION_PRIME}."
        )
    return p


def samples_for(net: Network) -> int:
    return max(1, math.ceil((net.parameters + 8) / net.rows_per_sample))


def dimension_blackbox(arch: Network, seed: int = 0, prime: int | None = None) -> DimensionResult:
    """Dimension by the black-box rank over GF(p^2) (module docstring)."""
    from lightning_cas.backends.modp import block_samples, failure_numerator

    net = arch
    if not net.polynomial:
        raise UnsupportedError("the blackbox method computes polynomial networks only; softmax needs --method numeric.")
    start = time.perf_counter()
    p = EXTENSION_PRIME if prime is None else check_blackbox_prime(prime)
    ar = ModP2(p)
    bound = min(net.parameters, net.ambient_dimension or net.parameters)
    rng = np.random.default_rng(seed)
    w = ar.random(rng, net.parameters)
    extra = block_samples(net)  # the dense route's block: about 384 rows
    X = ar.random(rng, (samples_for(net), net.input, net.tokens))
    runs: list[dict] = []
    while True:
        deadline.check()
        run_seed = derived_seed(seed, len(runs) + 1)
        progress.report(f"black-box rank over GF({p}^2), {len(X)} token matrices")
        rank, terms = krylov_rank(net, ar, w, X, np.random.default_rng(run_seed), bound)
        runs.append({"prime": p, "seed": run_seed, "rank": rank, "rows": len(X) * net.rows_per_sample, "terms": terms})
        if rank >= bound or (len(runs) > 1 and rank == runs[-2]["rank"]) or len(runs) >= MAX_RUNS:
            break
        X = np.concatenate([X, ar.random(rng, (extra, net.input, net.tokens))])
    dim = max(r["rank"] for r in runs)
    sizes = [1 << max(1, (r["rows"] - 1).bit_length()) for r in runs]
    numerator = failure_numerator(net, dim) + sum(preconditioner_numerator(n) for n in sizes)
    bound_value = min(numerator / (p * p), 0.999999)
    notes = []
    if dim < bound and (len(runs) < 2 or runs[-1]["rank"] != runs[-2]["rank"]):
        notes.append(f"the rank still grew after {len(runs)} sample counts: {dim} is only a lower bound")
    if bound_value >= MAX_FAILURE_BOUND:
        notes.append(f"the failure bound {bound_value:.2g} is not below {MAX_FAILURE_BOUND:g}")
    return DimensionResult(
        architecture=arch,
        dimension=dim,
        parameters=net.parameters,
        ambient_dimension=net.ambient_dimension,
        method="blackbox",
        certainty="probabilistic",
        method_detail=(
            f"Wiedemann's black-box rank over GF({p}^2) (Benes and diagonal preconditioners, products J v by "
            "directional forward passes); the rank found is a proved lower bound"
        ),
        certainty_detail=(
            f"dimension >= {dim} proved (Berlekamp-Massey's degree); equal with probability >= 1 - {bound_value:.2g}"
        ),
        seed=seed,
        elapsed_s=time.perf_counter() - start,
        primes=(p,),
        samples=len(X),
        runs=tuple(runs),
        consistent=True,
        failure_bound=bound_value,
        notes=tuple(notes),
    )


# Measured on the 2-core project machine (one BLAS thread): the dense route's elimination runs at about
# DENSE_RATE multiply-adds per second (P^2 min(P, ambient) / 3 of them per prime).
DENSE_RATE = 4e9


def pass_seconds(arch: Network, p: int = EXTENSION_PRIME) -> float:
    """One directional pass over the route's token matrices, timed at a random point: the black-box route's cost
    is this times the number of passes, so it is measured rather than modelled."""
    from lightning_cas.core.rank_modp import blas_threads

    net, ar, rng = arch, ModP2(p), np.random.default_rng(0)
    w = ar.random(rng, net.parameters)
    X = ar.random(rng, (samples_for(net), net.input, net.tokens))
    with blas_threads():
        start = time.perf_counter()
        jvp(net, ar, w, X, ar.random(rng, (net.parameters, 1)))
        return time.perf_counter() - start


PASS_RATE = 1.2e8  # weight x token-row products per second of one directional pass (x^6 5040 weights, measured)


def estimates(arch: Network, pass_s: float | None = None) -> dict:
    """Estimated seconds and peak bytes of each route for a dimension (``choose``'s inputs); ``pass_s``: one
    directional pass's seconds (None: modelled at PASS_RATE, no allocation; ``pass_seconds`` times one)."""
    from lightning_cas.backends.modp import EXTENSION_AFTER, default_primes, needs_extension, working_bytes

    net = arch
    P = net.parameters
    bound = min(P, net.ambient_dimension or P)
    extension = needs_extension(net)  # one GF(p^2) run, costing EXTENSION_AFTER GF(p) runs
    runs_dense = EXTENSION_AFTER if extension else len(default_primes(net))
    dense_s = runs_dense * P * P * bound / 3 / DENSE_RATE
    n = samples_for(net)
    runs = 1 if bound < P else 2  # a rank below P needs the second sample count (module docstring)
    passes = runs * 2 * (bound + 1)
    one = n * net.tokens * P / PASS_RATE if pass_s is None else pass_s
    return {
        "modp": {"seconds": dense_s, "bytes": working_bytes(net, extension)},
        "blackbox": {"seconds": passes * one, "bytes": blackbox_bytes(net)},
    }


def blackbox_bytes(arch: Network) -> int:
    """Peak memory of the black-box route: one directional pass over its token matrices and a few vectors."""
    from lightning_cas.backends.modp import block_samples

    net = arch
    n = samples_for(net) + block_samples(net)
    return 16 * 24 * n * net.widest * net.tokens * max(1, net.tokens) + 16 * 8 * 2 * n * net.rows_per_sample + 2**26


def choose(arch: Network, free_bytes: int) -> tuple[str, str]:
    """``auto``'s route for a polynomial network's dimension, and why. Memory first: the dense route whenever its
    echelon form fits (it was faster on every network measured, bench/scaling.md, and the modelled black-box time
    says so too); else the black-box route when one directional pass fits, its time estimated from one timed
    pass; else the dense route, which refuses in one line."""
    est = estimates(arch)
    gib = 2**30
    dense, bb = est["modp"], est["blackbox"]
    if dense["bytes"] <= free_bytes:
        return "modp", (
            f"auto chose modp: it fits ({dense['bytes'] / gib:.2g} of {free_bytes / gib:.2g} GiB free) and is the "
            f"faster by estimate (~{dense['seconds']:.3g} s against blackbox ~{bb['seconds']:.3g} s)"
        )
    if bb["bytes"] > free_bytes:
        return "modp", f"auto: neither route fits in {free_bytes / gib:.2g} GiB"
    timed = estimates(arch, pass_s=pass_seconds(arch))["blackbox"]
    return "blackbox", (
        f"auto chose blackbox: modp's echelon form would need {dense['bytes'] / gib:.2g} GiB and "
        f"{free_bytes / gib:.2g} GiB are free; blackbox needs {timed['bytes'] / gib:.2g} GiB, "
        f"~{timed['seconds']:.3g} s by one timed pass"
    )
