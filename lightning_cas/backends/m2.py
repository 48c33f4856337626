"""Dimension through Macaulay2: the implicit ideal (exact) or the Jacobian rank mod p.

Python only chooses templates and validated integers; the network (any stack of polynomial blocks,
the old flags' plain stack included) is built inside M2 by the LightningCAS package
(``m2/LightningCAS.m2``) from its blocks, so this is a computation independent of the Python
forward pass. Its answer comes back as one JSON record, checked key by key.
"""

from __future__ import annotations

import math
import time

from lightning_cas.core.network import Network
from lightning_cas.core.primes import check_prime
from lightning_cas.errors import M2ParseError, TooLargeError, UnsupportedError
from lightning_cas.macaulay2.connection import Macaulay2
from lightning_cas.macaulay2.network import check_dimension, check_parameters, package_params
from lightning_cas.macaulay2.parse import json_int, json_int_list, json_polynomials, json_str
from lightning_cas.results.dimension import DimensionResult, ImplicitSummary

M2_PRIME = 2_147_483_629  # a prime below 2^31, distinct from the modp backend's first prime
IMPLICIT_MAX_PARAMETERS = 14
JACOBIAN_MAX_ENTRIES = 20_000_000


def _refuse_softmax(arch: Network, method: str) -> None:
    if arch.normalization != "none":
        raise UnsupportedError(
            f"the {method} method works on polynomial (lightning) networks only; "
            "softmax is not polynomial, use --method numeric."
        )


def jacobian_size(arch: Network) -> int:
    """Entries of the coefficient Jacobian M2 would build: the coefficients of one output column
    (d_L times the token monomials of every degree the network has) times the weights."""
    net = arch
    n = net.input * net.tokens
    monomials = sum(math.comb(n + k - 1, k) for k in net.token_degrees)
    return net.output * monomials * net.parameters


def check_jacobian_size(arch: Network) -> None:
    size = jacobian_size(arch)
    if size > JACOBIAN_MAX_ENTRIES:
        raise TooLargeError(
            f"the jacobian method would expand a {size:,}-entry coefficient Jacobian "
            f"(limit {JACOBIAN_MAX_ENTRIES:,}); use --method modp, which never expands it."
        )


def check_implicit_size(arch: Network) -> None:
    depth = len(arch.blocks)
    if depth > 1 or arch.parameters > IMPLICIT_MAX_PARAMETERS:
        raise TooLargeError(
            f"the implicit method (elimination) handles one layer with at most "
            f"{IMPLICIT_MAX_PARAMETERS} parameters; this architecture has depth {depth} and "
            f"{arch.parameters} parameters. Use --method jacobian or --method modp."
        )


def dimension_jacobian(arch: Network, m2: Macaulay2, seed: int = 0, prime: int | None = None) -> DimensionResult:
    """Rank of the Jacobian of the coefficient map at a random point over ZZ/p, in M2 (any polynomial network)."""
    _refuse_softmax(arch, "jacobian")
    check_jacobian_size(arch)
    p = check_prime(prime if prime is not None else M2_PRIME)
    start = time.perf_counter()
    script, rec = m2.run("dimension_jacobian", {**package_params(arch), "charP": p, "seed": seed, "columns": 1})
    check_parameters(arch, rec, script)
    rank = check_dimension(arch, json_int(rec, "rank", script), script, "rank")
    rows = json_int(rec, "rows", script)
    got_p = json_int(rec, "prime", script)
    if got_p != p or json_int(rec, "dimension", script) != rank:
        raise M2ParseError(f"inconsistent Jacobian record from Macaulay2 (prime {got_p}, asked {p})", script)
    if rank > rows:
        raise M2ParseError(f"Macaulay2 reported rank {rank} for a Jacobian of {rows} rows", script)
    bound = rank * (arch.weight_degree - 1) / p  # only the weights are random here
    return DimensionResult(
        architecture=arch,
        dimension=rank,
        parameters=arch.parameters,
        ambient_dimension=arch.ambient_dimension,
        method="jacobian",
        certainty="probabilistic",
        seed=seed,
        elapsed_s=time.perf_counter() - start,
        m2_version=json_str(rec, "m2_version", script),
        primes=(got_p,),
        runs=({"prime": got_p, "seed": seed, "rank": rank, "rows": rows},),
        failure_bound=min(1.0, bound),
        script=script,
    )


def dimension_implicit(arch: Network, m2: Macaulay2, seed: int = 0, generators: bool = False) -> DimensionResult:
    """Krull dimension of the kernel of the coefficient ring map over QQ (exact)."""
    _refuse_softmax(arch, "implicit")
    check_implicit_size(arch)
    start = time.perf_counter()
    params = {**package_params(arch), "charP": 0, "seed": seed, "columns": 1, "emitGenerators": int(generators)}
    script, rec = m2.run("dimension_implicit", params)
    check_parameters(arch, rec, script)
    dim = check_dimension(arch, json_int(rec, "dimension", script), script)
    degrees = json_int_list(rec, "generator_degrees", script)
    notes = [
        f"degree {json_int(rec, 'degree', script)} (standard grading)",
        f"{json_int(rec, 'linear_span', script)} linearly independent coefficients",
        "minimal generator degrees " + str(degrees),
    ]
    if generators:
        gens = json_polynomials(rec, "generators", script)
        if len(gens) != len(degrees):
            raise M2ParseError(f"{len(gens)} generators but {len(degrees)} generator degrees from Macaulay2", script)
        notes.append("generators: " + " ; ".join(map(str, gens)))
    return DimensionResult(
        architecture=arch,
        dimension=dim,
        parameters=arch.parameters,
        ambient_dimension=arch.ambient_dimension,
        method="implicit",
        certainty="exact",
        seed=seed,
        elapsed_s=time.perf_counter() - start,
        m2_version=json_str(rec, "m2_version", script),
        script=script,
        notes=tuple(notes),
        implicit=ImplicitSummary(json_int(rec, "degree", script), json_int(rec, "linear_span", script), degrees),
    )
