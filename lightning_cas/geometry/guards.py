"""The size guards of the Macaulay2 routes: what each route refuses before any work, measured on the one-layer
cases (bench_critical). They sit below the planner, which reads them through geometry.solvers, and the questions,
which import the planner: a guard never needs the question it guards."""

from __future__ import annotations

import math

from lightning_cas.core.network import Network
from lightning_cas.core.theory import generic_ed_degree
from lightning_cas.errors import TooLargeError

# The coefficient expansion (output entries x token monomials) and the weights: beyond them the computation does
# not finish in minutes.
IMPLICIT_MAX_WEIGHTS = 14
LAGRANGE_MAX_WEIGHTS = 12
LAGRANGE_MAX_SPAN = 10  # (2,1,a,2) has 6 coordinates and takes 1 s; (2,2,1,2) with 12 does not finish in 4 min
NUMERICAL_MAX_WEIGHTS = 40
MAX_EXPANSION = 200_000


def coefficient_count(arch: Network) -> int:
    """Coefficients M2 expands: one output column's entries times its token monomials."""
    net = arch
    n = net.input * net.tokens
    return net.output * sum(math.comb(n + k - 1, k) for k in net.token_degrees)


def guard(arch, limit: int, method: str) -> None:
    """The expansion's size guard of a Macaulay2 route: ``limit`` weights and MAX_EXPANSION entries."""
    weights, coefficients = arch.parameters, coefficient_count(arch)
    if weights > limit or weights * coefficients > MAX_EXPANSION:
        raise TooLargeError(
            f"the {method} method would work on {weights} weights and {coefficients:,} "
            f"coefficients ({weights * coefficients:,} entries; limits {limit} weights, "
            f"{MAX_EXPANSION:,} entries); choose a smaller architecture."
        )


def one_layer(arch) -> bool:
    return arch.paper is not None and arch.depth == 1 and not arch.multihead


def span_estimate(arch) -> int:
    """The coordinates the Lagrange ideal lives in: exactly for one plain layer (the span of the coefficients
    of output token 1), else the coefficient count, an upper bound."""
    if one_layer(arch):
        d, e = arch.widths
        return e * d * d * (d + 1) // 2 if arch.tokens >= 2 else e * math.comb(d + 2, 3)
    return coefficient_count(arch)


# The decision boundary's homotopy and its exact ideal
MAX_PATHS = 20000
MAX_VARIABLES = 9


def boundary_size(net: Network) -> None:
    n, e = net.input * net.tokens, net.degree
    paths = e ** (n + 1)
    if n > MAX_VARIABLES or paths > MAX_PATHS:
        raise TooLargeError(
            f"the decision boundary has degree {e} in {n} input coordinates: the homotopy would "
            f"track {e}^{n + 1} = {paths} paths and the exact ideal has up to "
            f"{generic_ed_degree(e, n)} points; this command stops at {MAX_PATHS} paths and "
            f"{MAX_VARIABLES} coordinates."
        )
