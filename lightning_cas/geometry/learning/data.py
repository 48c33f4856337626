"""The learning coefficient on given data: whether the data's Gram matrix sees the whole coefficient span.

On inputs X_1..X_N the loss is K_N(w) = Σ |f_w(X_i) − f_{w*}(X_i)|² = |E (c(w) − c(w*))|², E the evaluation
on the data. Always K_N ≲ K, so every upper bound of λ holds on data too. When E is injective on the span of
the coefficient vectors (a non-degenerate Gram matrix there), K_N ≍ K and every bound holds; otherwise only the
upper bounds and the data's own rank do.
"""

from __future__ import annotations

import numpy as np

from lightning_cas.core.arithmetic import ModP
from lightning_cas.core.checks import derived_seed
from lightning_cas.core.forward import evaluate
from lightning_cas.core.network import Network
from lightning_cas.core.primes import DEFAULT_PRIME, faithful_primes
from lightning_cas.core.rank_modp import blas_threads, rank

SPAN_MAX = 400  # coefficients: beyond this the span is not measured and the data's form counts as degenerate


def span_ranks(net: Network, data_values, seed: int) -> tuple[int, int] | None:
    """(dim of the coefficient span, dim of its image on the data), both as ranks mod p of outputs at random
    weights: on many random inputs (evaluation there is injective on polynomials of the network's degrees) and on
    the data. None beyond SPAN_MAX coefficients. Ranks mod p are at most the ranks over QQ, so a data rank equal
    to the span rank is what a non-degenerate form gives (with the usual failure probability of a mod-p rank)."""
    ambient = net.ambient_dimension
    if ambient is None or ambient > SPAN_MAX:
        return None
    prime = faithful_primes(list(data_values.flat), DEFAULT_PRIME, 1, "the inputs")[0]  # data never meets the prime
    ar = ModP(prime)
    rng = np.random.default_rng(derived_seed(seed, 11))
    draws = ambient + 8
    weights = [ar.random(rng, (net.parameters,)) for _ in range(draws)]
    probes = ar.random(rng, (ambient + 8, net.input, net.tokens))
    data = ar.array(data_values)
    with blas_threads():
        everywhere = np.stack([evaluate(net, ar, w, probes).reshape(-1) for w in weights])
        on_data = np.stack([evaluate(net, ar, w, data).reshape(-1) for w in weights])
    return rank(everywhere, prime), rank(on_data, prime)
