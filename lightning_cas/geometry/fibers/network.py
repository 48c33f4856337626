"""Fibers of a network of blocks: the fiber through W against the orbit of the named group, by tangent ranks.

The fiber's tangent space at W is the kernel of the differential there; the named group's orbit is
tangent to it. Both are computed mod a large prime (the kernel from the exact echelon form of the
Jacobian at W on random token matrices, the orbit from the group's tangents at W; over QQ when the
network is small). When the kernel is larger than the orbit, the extra directions are what a missing
symmetry would have to move: their supports (the weight matrices they change) are reported, so a
defect of the dimension can be traced to the weights that carry it.
"""

from __future__ import annotations

import time
from fractions import Fraction

import numpy as np

from lightning_cas.backends.local import rank_at_point_modp
from lightning_cas.backends.modp import block_samples, default_samples, dimension_modp
from lightning_cas.core import gfp
from lightning_cas.core.arithmetic import ModP
from lightning_cas.core.checks import derived_seed
from lightning_cas.core.forward import jacobian
from lightning_cas.core.network import Network
from lightning_cas.core.primes import DEFAULT_PRIME
from lightning_cas.core.rank_modp import RowEchelon, blas_threads
from lightning_cas.core.symmetry import (
    group_dimension,
    head_permutations,
    orbit_dimension,
    orbit_rank_modp,
    random_weights,
    tangent_blocks,
)
from lightning_cas.results.fibers import (
    VERDICT_DIMENSION_ONLY,
    VERDICT_DIMENSIONS,
    VERDICT_INCONSISTENT,
    ExtraDirection,
    NetworkFiberResult,
)
from lightning_cas.system.points import WeightPoint

EXACT_ORBIT_MAX_PARAMETERS = 300  # beyond this the orbit rank is taken mod p (a valid lower bound)


def _matrix_names(net: Network) -> list[str]:
    out = []
    for m in net.weight_matrices:
        b = net.blocks[m.block]
        head = f" head {m.head}" if b.heads > 1 else ""  # heads is 1 on every kind without heads
        out.append(f"{m.letter.upper()} (block {m.block}{head})")
    return out


def kernel_basis(net: Network, values, prime: int, seed: int) -> np.ndarray:
    """A basis (rows, centred residues) of the kernel of the Jacobian at W mod p, on random token matrices
    drawn until a block adds no rank."""
    ar = ModP(prime)
    w = ar.array(values)
    ech = RowEchelon(net.parameters, prime)
    rng = np.random.default_rng(derived_seed(seed, 5))
    with blas_threads():
        first = True
        while ech.rank < net.parameters:
            n = default_samples(net) if first else block_samples(net)
            first = False
            X = ar.random(rng, (n, net.input, net.tokens))
            if not ech.add(jacobian(net, ar, w, X)):
                break
    B = ech.basis()  # rank x P, identity at the pivots
    pivots = set(int(c) for c in ech.pivots)
    free = [c for c in range(net.parameters) if c not in pivots]
    K = np.zeros((len(free), net.parameters))
    pivot_rows = {int(c): r for r, c in enumerate(ech.pivots)}
    for k, f in enumerate(free):
        K[k, f] = 1.0
        for c, r in pivot_rows.items():
            K[k, c] = -B[r, f]
    return gfp.reduce(K, prime)


def extra_directions(net: Network, values, prime: int = DEFAULT_PRIME, seed: int = 0) -> list[ExtraDirection]:
    """The kernel directions at W beyond the orbit, grouped by the weight matrices they move: the rows the
    kernel adds to the reduced echelon form of the orbit's tangents (reduced against everything, so each moves
    as few weights as the echelon form allows)."""
    ar = ModP(prime)
    ech = RowEchelon(net.parameters, prime)
    with blas_threads():
        for T in tangent_blocks(net, ar.array(values), ar):
            ech.add(T)
        named = set(int(c) for c in ech.pivots)
        for v in kernel_basis(net, values, prime, seed):
            ech.add(v[None, :])
    B = ech.basis()
    extra = [B[r] for r, c in enumerate(ech.pivots) if int(c) not in named]
    names = _matrix_names(net)
    groups: dict[tuple, int] = {}
    for v in extra:
        moved = tuple(names[i] for i, m in enumerate(net.weight_matrices) if np.any(v[m.offset : m.stop] != 0))
        groups[moved] = groups.get(moved, 0) + 1
    return [ExtraDirection(count, moved) for moved, count in sorted(groups.items(), key=lambda kv: -kv[1])]


def network_fiber(net: Network, point: WeightPoint | None, seed: int = 0) -> NetworkFiberResult:
    start = time.perf_counter()
    values = list(point.values) if point is not None else random_weights(net, seed)
    wp = point if point is not None else WeightPoint(net, tuple(map(Fraction, values)))
    generic = dimension_modp(net, seed=seed)
    local = rank_at_point_modp(net, wp, seed=seed)
    generic_fiber, tangent = net.parameters - generic.dimension, net.parameters - local.dimension
    exact = net.parameters <= EXACT_ORBIT_MAX_PARAMETERS
    if exact:
        orbit = orbit_dimension(net, values)
    else:
        orbit = orbit_rank_modp(net, values, local.primes[0])
    extra = extra_directions(net, values, local.primes[0], seed) if tangent > orbit else []
    notes = [
        f"generic fiber dimension {generic_fiber} (parameters {net.parameters} - dimension {generic.dimension}, "
        f"modp, primes {', '.join(map(str, generic.primes))})",
        f"tangent space of the fiber at W: dimension {tangent} (Jacobian rank at W mod "
        f"{', '.join(map(str, local.primes))})",
        f"orbit of the named group at W: {orbit} ("
        + ("exact over QQ" if exact else f"rank mod {local.primes[0]}, a lower bound")
        + ")",
    ]
    if head_permutations(net) > 1:
        notes.append(
            f"head permutations: a finite group of order {head_permutations(net)} (components, never dimensions)"
        )
    if tangent > generic_fiber:
        notes.append(
            "W is a critical point of the parametrization (the Jacobian drops rank there): this fiber is "
            "special, not the generic one"
        )
    if orbit > tangent:
        verdict = VERDICT_INCONSISTENT
        message = f"the named orbit ({orbit}) is larger than the fiber's tangent space at W ({tangent})"
    elif tangent > orbit:
        verdict = VERDICT_DIMENSIONS
        moved = "; ".join(f"{d.count} moving {', '.join(d.matrices)}" for d in extra)
        message = (
            f"the fiber's tangent space at W has dimension {tangent}, the named orbit {orbit}: "
            f"{tangent - orbit} direction(s) no named symmetry explains ({moved})"
        )
    else:
        verdict = VERDICT_DIMENSION_ONLY
        message = (
            f"generic fiber dimension {generic_fiber}, named orbit at W {orbit}: the named group explains the "
            "fiber's dimension (components not computed)"
        )
    source = None if point is None or point.source is None else {"source": point.source, "sha256": point.sha256}
    return NetworkFiberResult(
        architecture=net,
        point=wp.to_dict(),
        generic_fiber_dimension=generic_fiber,
        tangent_dimension=tangent,
        symmetry_orbit_dimension=orbit,
        symmetry_group_dimension=group_dimension(net),
        verdict=verdict,
        message=message,
        parameters=net.parameters,
        primes=local.primes,
        extra=tuple(extra),
        notes=tuple(notes),
        source=source,
        point_source=None if point is not None else f"random integers (seed {seed})",
        method="modp",
        certainty="probabilistic",
        seed=seed,
        elapsed_s=time.perf_counter() - start,
        method_detail="tangent ranks mod p: the Jacobian's kernel at W against the named group's tangents",
    )
