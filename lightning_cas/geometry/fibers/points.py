"""Exact checks at a point that the fiber verdict relies on: phi_W over QQ, a witness compared with W, W's
head permutations, and the fiber's tangent dimension at W mod p. Apart from geometry.fibers.fiber, which runs
the decomposition and decides the verdict.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import sympy

from lightning_cas.core.arithmetic import Rationals
from lightning_cas.core.checks import derived_seed
from lightning_cas.core.forward import evaluate
from lightning_cas.core.names import parse_polynomial
from lightning_cas.core.network import Network
from lightning_cas.core.weights import Point, flat, layer_heads, make_layer, unflat

# ---------------------------------------------------------------- points


def unflatten(arch: Network, values) -> Point:
    """Cut a flat list (canonical weight order) into per-layer (Q, K, V) of Fractions (per head)."""
    return unflat(arch, [Fraction(v) for v in values])


def evaluate_exact(arch: Network, point: Point, X) -> list[list[Fraction]]:
    """phi_W(X) over QQ by the one forward definition (core.forward on python-flint's fmpq): exact,
    for checking witnesses independently of Macaulay2."""
    ar = Rationals()
    out = evaluate(arch, ar, ar.array(flat(point)), ar.array([[list(row) for row in X]]))[0]
    return [[Fraction(int(v.p), int(v.q)) for v in row] for row in out]


def same_function(arch: Network, p1: Point, p2: Point, seed: int = 0, trials: int = 3) -> bool:
    """phi_{p1} = phi_{p2}, tested exactly at random rational token matrices (a polynomial identity
    test: a wrong witness passes only with probability <= degree / 2001 per trial)."""
    rng = np.random.default_rng(derived_seed(seed, 7))
    for _ in range(trials):
        X = [[Fraction(int(v)) for v in row] for row in rng.integers(-1000, 1001, (arch.widths[0], arch.tokens))]
        if evaluate_exact(arch, p1, X) != evaluate_exact(arch, p2, X):
            return False
    return True


# ---------------------------------------------------------------- Jacobian rank at W (mod p)


def reduce_point(point: Point, p: int) -> np.ndarray | None:
    """W mod p as int64, or None when p divides a denominator."""
    vals = []
    for q in flat(point):
        if q.denominator % p == 0:
            return None
        vals.append(q.numerator % p * pow(q.denominator, -1, p) % p)
    return np.array(vals, dtype=np.int64)


def tangent_dimension(arch: Network, point: Point, seed: int = 0) -> tuple[int, int]:
    """(parameters - rank of d phi at W mod p, prime): the dimension of the fiber's tangent space at
    W, an upper bound (a random X or the prime can only lower the rank)."""
    from lightning_cas.backends.modp import default_samples, jacobian_rank
    from lightning_cas.core.primes import DEFAULT_PRIME

    p = DEFAULT_PRIME
    w = reduce_point(point, p)
    while w is None:
        p = int(sympy.prevprime(p))
        w = reduce_point(point, p)
    rank, _ = jacobian_rank(arch, w, p, np.random.default_rng(derived_seed(seed, 1)), default_samples(arch))
    return arch.parameters - rank, p


def permuted_points(arch: Network, point: Point, limit: int = 24) -> list[Point]:
    """W with its heads permuted within each layer (every permutation, at most ``limit`` of them)."""
    import itertools

    per_layer = [list(itertools.permutations(layer_heads(layer))) for layer in point]
    out = []
    for choice in itertools.product(*per_layer):
        out.append(tuple(make_layer(heads) for heads in choice))
        if len(out) >= limit:
            break
    return out


def permutation_components(arch: Network, point: Point, components) -> set[int]:
    """Indices of the components (exact generators over QQ) that contain a head permutation of W."""
    from lightning_cas.core.model import flat_weight_symbols

    symbols = flat_weight_symbols(arch)
    hit = set()
    for perm in permuted_points(arch, point):
        subs = {w: sympy.Rational(v.numerator, v.denominator) for w, v in zip(symbols, flat(perm))}
        for k, comp in enumerate(components):
            if all(parse_polynomial(g).xreplace(subs) == 0 for g in comp.generators):
                hit.add(k)
    return hit
