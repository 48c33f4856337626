"""Fibers of the parametrization: which weights give the same function as W (docs/mathematics.md, symmetries).

Two independent computations meet here. Macaulay2 builds the fiber ideal {W' : phi_W' = phi_W}
and decomposes it (exact over QQ); Python computes the orbit of the named symmetry group at W as
the rank of its infinitesimal action (exact rationals, python-flint). Comparing the two is the
identifiability verdict. Architectures too large for a primary decomposition take the fast
path: fiber dimension = parameters - dimension from the modp backend (probabilistic).
"""

from __future__ import annotations

import time
from dataclasses import replace

from lightning_cas.core.data import freeze
from lightning_cas.core.names import polynomial_text
from lightning_cas.core.network import Network
from lightning_cas.core.symmetry import head_permutations, orbit_tangents  # noqa: F401  (re-exported)
from lightning_cas.core.symmetry import orbit_dimension as symmetry_orbit_dimension
from lightning_cas.core.weights import Point, flat, point_to_dict, random_point
from lightning_cas.errors import InputError, M2ParseError, M2TimeoutError, TooLargeError, UnsupportedError
from lightning_cas.geometry.fibers.network import network_fiber
from lightning_cas.geometry.fibers.points import (
    permutation_components,
    reduce_point,
    same_function,
    tangent_dimension,
    unflatten,
)
from lightning_cas.macaulay2.connection import Macaulay2
from lightning_cas.macaulay2.network import check_fiber_dimension, check_parameters, package_params
from lightning_cas.macaulay2.parse import json_bool, json_int, json_list, json_polynomials, json_rationals, json_str
from lightning_cas.options import FIBER_METHODS, check_point, resolve
from lightning_cas.results.fibers import (
    VERDICT_COMPONENTS,
    VERDICT_DIMENSION_ONLY,
    VERDICT_DIMENSIONS,
    VERDICT_INCONSISTENT,
    VERDICT_ORBIT,
    VERDICT_PERMUTATIONS,
    FiberComponent,
    FiberResult,
)
from lightning_cas.system.deadline import Deadline
from lightning_cas.system.points import as_point

METHODS = FIBER_METHODS
# Size guard for the primary decomposition (measured on M2 1.21, see tests/test_fiber.py):
# (2,2),a=2 [12 weights] 0.5 s; (2,2,2),a=(1,1) [16 weights, depth 2] 5.5 s;
# (2,2,1),a=(2,1) [18 weights, depth 2] did not finish in 300 s.
M2_MAX_PARAMETERS = {1: 21, 2: 16}
# An explicit --method m2 may go past the measured limits (the timeout still applies), but not
# to sizes where a primary decomposition is hopeless: those are refused up front.
M2_HARD_LIMIT = 40
WITNESS_TRIES = 6
FALLBACK_RESERVE_S = 1.0  # auto: what the M2 attempt leaves of the limit for the modp answer


# ---------------------------------------------------------------- the verb


def m2_feasible(arch: Network) -> bool:
    """The size guard: the primary decomposition is attempted only below measured limits."""
    limit = M2_MAX_PARAMETERS.get(arch.depth)
    return limit is not None and arch.parameters <= limit


def fiber(
    arch: Network,
    point: Point | None = None,
    *,
    method: str = "auto",
    seed: int = 0,
    timeout: float | None = None,
    m2: str | None = None,
    prime: int | None = None,
    session=None,
) -> FiberResult:
    """The fiber through W (a given point, or a random nonzero integer point from ``seed``).

    method: ``m2`` decomposes the fiber ideal (exact over QQ; over ZZ/prime if ``prime`` is
    given); ``modp`` only compares dimensions (fast, probabilistic); ``auto`` uses M2 when the
    size guard allows and falls back to modp if M2 hits the timeout.
    """
    opts = resolve("fiber", arch, method=method, seed=seed, timeout=timeout, m2=m2, prime=prime, session=session)
    if arch.paper is None:
        return _network_fiber(arch, point, opts)
    if arch.normalization != "none":
        raise UnsupportedError(
            "fibers are computed for polynomial (lightning) networks only; softmax is not polynomial."
        )
    if point is not None:
        point = check_point(arch, point)
    with opts.deadline() as deadline:
        result = _fiber(arch, point, opts.method, opts.seed, deadline, opts.macaulay2, opts.prime)
    return result if point is not None else replace(result, point_source=f"random (seed {opts.seed})")


def _network_fiber(net: Network, point, opts):
    """A network of blocks: tangent ranks mod p (``geometry.fibers.network``; no decomposition yet)."""
    if not net.polynomial:
        raise UnsupportedError("fibers are computed for polynomial networks only; softmax is not polynomial.")
    if opts.method == "m2":
        raise UnsupportedError(
            "a Macaulay2 decomposition of the fiber takes the paper's plain attention layers; "
            "a network of blocks gets the tangent ranks (--method modp or auto)."
        )
    if opts.prime is not None:
        raise UnsupportedError(
            "--prime chooses the field of a Macaulay2 decomposition; a network of blocks is "
            "compared by tangent ranks mod large primes."
        )
    with opts.deadline():
        return network_fiber(net, None if point is None else as_point(net, point), opts.seed)


def _fiber(arch, point, method, seed, deadline, m2: Macaulay2, prime) -> FiberResult:
    if method == "m2" and arch.parameters > M2_HARD_LIMIT:
        raise TooLargeError(
            f"a Macaulay2 fiber decomposition in {arch.parameters} weights will not finish "
            f"(limit {M2_HARD_LIMIT}); use --method modp for the fiber dimension."
        )
    if point is None:
        point = random_point(arch, seed)
    start = time.perf_counter()
    orbit = symmetry_orbit_dimension(arch, point)
    from lightning_cas.core.theory import predict_symmetry_dimension

    group = predict_symmetry_dimension(arch).value
    from lightning_cas.backends.modp import dimension_modp

    generic = dimension_modp(arch, seed=seed)
    generic_fiber = arch.parameters - generic.dimension
    tangent, tangent_prime = tangent_dimension(arch, point, seed)
    notes = [
        f"generic fiber dimension {generic_fiber} (parameters {arch.parameters} - dimension "
        f"{generic.dimension}, modp, primes {', '.join(map(str, generic.primes))})",
        f"tangent space of the fiber at W: dimension {tangent} (Jacobian rank mod {tangent_prime})",
    ]
    if arch.multihead:
        notes.append(
            f"head permutations: a finite group of order {head_permutations(arch)} (it can add fiber "
            "components, never dimensions); the orbit counts GL(a_i) and a scaling per head"
        )
        from lightning_cas.core.head_mixing import extended_orbit_dimension, mixing_layers

        if mixing_layers(arch):
            ext = extended_orbit_dimension(arch, point)
            explained = "; this explains the whole generic fiber" if ext == generic_fiber else ""
            notes.append(
                f"head mixing (GL(H_i) on (V_h, A_h) in layer(s) "
                f"{[i + 1 for i in mixing_layers(arch)]}, where a_i >= d_(i-1)): orbit dimension with it "
                f"{ext}{explained}"
            )
    if tangent > generic_fiber:
        notes.append(
            "W is a critical point of the parametrization (the Jacobian drops rank there): this fiber "
            "is special, not the generic one"
        )
    common = dict(
        architecture=arch,
        point=freeze(point_to_dict(point)),
        symmetry_orbit_dimension=orbit,
        symmetry_group_dimension=group,
        parameters=arch.parameters,
        seed=seed,
        generic_fiber_dimension=generic_fiber,
        tangent_dimension=tangent,
    )
    use_m2 = method == "m2" or (method == "auto" and m2_feasible(arch))
    if use_m2:
        try:
            left = deadline.left("before the Macaulay2 decomposition")
            if method == "auto" and left is not None:  # the Macaulay2 run keeps a moment for the fast-path answer
                m2 = replace(m2, deadline=Deadline(max(left - FALLBACK_RESERVE_S, left / 2)))
            return _fiber_m2(arch, point, seed, m2, prime, common, notes, start)
        except M2TimeoutError as exc:
            if method == "m2":
                raise
            notes.append(f"Macaulay2 did not finish ({exc}); fell back to the modp fast path")
    elif method == "auto":
        notes.append(
            f"{arch.parameters} weights at depth {arch.depth} is above the size guard for a primary "
            "decomposition; used the modp fast path"
        )
    return _fiber_fast(arch, generic, generic_fiber, tangent, orbit, common, notes, start)


def _fiber_fast(arch, generic, generic_fiber, tangent, orbit, common, notes, start) -> FiberResult:
    if orbit > tangent:
        verdict = VERDICT_INCONSISTENT  # the orbit lies in the fiber: it cannot outgrow its tangent space
    elif generic_fiber > orbit:
        verdict = VERDICT_DIMENSIONS
    else:
        verdict = VERDICT_DIMENSION_ONLY
    message = (
        f"generic fiber dimension {generic_fiber}, symmetry orbit at W dimension {orbit} "
        f"(group dimension {common['symmetry_group_dimension']}): {verdict}"
    )
    if verdict == VERDICT_DIMENSIONS:
        message += f"; {generic_fiber - orbit} dimension(s) of the fiber are not explained by the named symmetries"
    return FiberResult(
        fiber_dimension=generic_fiber,
        components=(),
        verdict=verdict,
        message=message,
        method="modp",
        certainty="probabilistic",
        elapsed_s=time.perf_counter() - start,
        field="GF(p)",
        primes=tuple(generic.primes),
        notes=tuple(notes),
        **common,
    )


def _fiber_m2(arch, point, seed, m2: Macaulay2, prime, common, notes, start) -> FiberResult:
    values = flat(point)
    if prime is not None:
        reduced = reduce_point(point, prime)
        if reduced is None:
            raise InputError(f"the prime {prime} divides a denominator of the point; choose another prime.")
        vanished = [k for k, (q, r) in enumerate(zip(values, reduced)) if q != 0 and r == 0]
        if vanished:
            # the point mod p has a zero where W has none: its fiber is another point's fiber
            raise InputError(
                f"the prime {prime} divides {len(vanished)} nonzero entries of the point (weight "
                f"{vanished[0] + 1} first), so W mod {prime} is another point; choose another prime "
                "or none (QQ)."
            )
        values = [int(v) for v in reduced]
    params = {
        **package_params(arch),
        "charP": prime or 0,
        "seed": seed,
        "columns": 1,
        "weightPoint": values,
        "witnessTries": WITNESS_TRIES,
    }
    script, rec = m2.run("fiber", params)
    check_parameters(arch, rec, script)
    fiber_dim = check_fiber_dimension(arch, json_int(rec, "fiber_dimension", script), script)
    components = []
    for n, comp in enumerate(json_list(rec, "components", script), 1):
        gens = json_polynomials(comp, "generators", script)
        contains = json_bool(comp, "contains_point", script)
        wvals = json_rationals(comp, "witness", script)
        witness = None
        if wvals is not None:
            if len(wvals) != arch.parameters:
                raise M2ParseError(
                    f"witness of component {n} has {len(wvals)} entries, expected {arch.parameters}", script
                )
            wpoint = unflatten(arch, wvals)
            if prime is None and not same_function(arch, wpoint, point, seed):
                raise M2ParseError(
                    f"the witness of component {n} does not give the same function as W (checked exactly in Python)",
                    script,
                )
            witness = freeze(point_to_dict(wpoint))
        components.append(
            FiberComponent(
                dimension=check_fiber_dimension(
                    arch, json_int(comp, "dimension", script), script, f"component {n} of dimension"
                ),
                degree=json_int(comp, "degree", script),
                contains_point=contains,
                generators=tuple(map(polynomial_text, gens)),
                witness=witness,
            )
        )
    if not components or fiber_dim != max(c.dimension for c in components):
        raise M2ParseError(f"the fiber dimension {fiber_dim} is not the largest component dimension", script)
    orbit = common["symmetry_orbit_dimension"]
    through_w = [c for c in components if c.contains_point]
    local = max((c.dimension for c in through_w), default=-1)
    if not through_w:
        raise M2ParseError("no component of the fiber contains W", script)
    if orbit > local:
        verdict = VERDICT_INCONSISTENT
        message = f"the symmetry orbit (dimension {orbit}) is larger than the fiber at W (dimension {local})"
    elif local > orbit:
        verdict = VERDICT_DIMENSIONS
        message = (
            f"the fiber has dimension {local} at W but the symmetry orbit only {orbit}: "
            f"{local - orbit} dimension(s) are not explained by the named symmetries"
        )
    elif (
        len(components) > 1
        and arch.multihead
        and prime is None
        and permutation_components(arch, point, components) == set(range(len(components)))
    ):
        verdict = VERDICT_PERMUTATIONS
        message = (
            f"the fiber has {len(components)} components of dimension {orbit}, each containing a head "
            "permutation of W: identifiable up to the named symmetries and head permutations"
        )
    elif len(components) > 1:
        verdict = VERDICT_COMPONENTS
        others = [i for i, c in enumerate(components, 1) if not c.contains_point]
        message = (
            f"the fiber has {len(components)} components (dimensions "
            f"{[c.dimension for c in components]}); W's component is the orbit closure (dimension "
            f"{orbit})"
        )
        if others:
            message += f"; component(s) {others} do not contain W"
            if any(components[i - 1].witness for i in others):
                message += " (witness points given)"
        if len(through_w) > 1:
            message += f"; W lies on {len(through_w)} components (a special point where branches meet)"
        if arch.multihead and prime is None:
            hit = sorted(i + 1 for i in permutation_components(arch, point, components))
            rest = [i for i in range(1, len(components) + 1) if i not in hit]
            message += f"; head permutations of W lie on component(s) {hit}" + (
                f", component(s) {rest} are explained by no named symmetry" if rest else ""
            )
    else:
        verdict = VERDICT_ORBIT
        message = (
            f"the fiber is irreducible of dimension {fiber_dim}, equal to the symmetry orbit dimension: "
            "identifiable up to the named symmetries"
        )
    certainty = "exact" if prime is None else "probabilistic"
    if prime is not None:
        notes.append(f"decomposed over ZZ/{prime}: components over GF(p) agree with QQ except for finitely many primes")
    notes.append(
        "components are minimal primes over the coefficient field (irreducible over it, not "
        "necessarily absolutely irreducible)"
    )
    return FiberResult(
        fiber_dimension=fiber_dim,
        components=tuple(components),
        verdict=verdict,
        message=message,
        method="m2",
        certainty=certainty,
        elapsed_s=time.perf_counter() - start,
        m2_version=json_str(rec, "m2_version", script),
        field="QQ" if prime is None else f"ZZ/{prime}",
        primes=() if prime is None else (prime,),
        script=script,
        notes=tuple(notes),
        **common,
    )
