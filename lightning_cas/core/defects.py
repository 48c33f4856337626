"""A network's defect split into its causes: parameters - dimension = named group + mechanisms + unexplained.

The kernel of the Jacobian at a generic W is the tangent space of the fiber. It contains the tangents
of the named group (``core.symmetry``) and, for every block i, three nested subspaces of directions
that move block i's weights only, each in the kernel for a reason that is a proof:

* **own kernel** (``K_alone``): directions that do not change block i's map at all, on any input. Its
  part beyond the block's own symmetries is **filling** when the block alone attains the proved bound
  of its map space (an mlp of degree r, hidden m on width w: at most out C(w + r - 1, r) dimensions),
  so the count is forced; otherwise it is the block's **own defect** (its parametrization alone is
  defective, e.g. sums of m < w squares have an orthogonal group of symmetries);
* **bottleneck** (``K_input``): directions that change block i's map but not on the inputs it gets,
  the outputs of blocks 0..i-1 (e.g. the image of an embedding of rank below the stream's width);
* **invisibility** (``K_local``): directions that change block i's output but not what the blocks
  after it make of it (a readout of rank below the stream's width after the last residual block).

K_alone is the kernel of block i's Jacobian on random inputs, K_input on the prefix's outputs,
K_local that of the network's Jacobian by block i's weights alone (``forward.jacobian(only=i)``),
all at the same W, exactly mod p (``rank_modp``). They are stacked onto the named tangents in a fixed
order; each gain is its count, so the parts add up by construction and overlaps (an interface GL's
tangent that is a sum of local directions) are counted once. What is left, parameters - dimension -
(rank of everything stacked), moves several blocks at once and is not tangent to the named group:
**unexplained**. For a shallow polynomial network with one output whose dimension is the proved
Alexander-Hirschowitz value, the rest is that theorem's **secant defect**. Every stacked direction is
checked against a fresh batch of the network's Jacobian rows: one that is not in the kernel, or a
split with a negative remainder, is an error naming the network, never a printed table.
"""

from __future__ import annotations

import numpy as np

from lightning_cas.core import gfp
from lightning_cas.core.arithmetic import ModP
from lightning_cas.core.block_theory import block_alone, block_space, expected, published
from lightning_cas.core.checks import derived_seed
from lightning_cas.core.forward import jacobian, prefix
from lightning_cas.core.network import Attention, Network, Power
from lightning_cas.core.primes import DEFAULT_PRIME
from lightning_cas.core.rank_modp import RowEchelon, blas_threads
from lightning_cas.core.splits import Cause, Explained
from lightning_cas.core.symmetry import orbit_rank_modp, tangent_blocks
from lightning_cas.errors import ResultError

ROWS_PER_BLOCK = 384  # Jacobian rows per streamed block of samples
TANGENT_ELEMENTS = 1 << 22


def _kernel(columns: int, rows_of, rng, prime: int) -> np.ndarray:
    """A basis (rows) of the kernel of the matrix whose rows ``rows_of(rng)`` streams in blocks, drawn
    until a block adds no rank (or the rank is full)."""
    ech = RowEchelon(columns, prime)
    while ech.rank < columns:
        if not ech.add(rows_of(rng)):
            break
    return null_space(ech, prime)


def null_space(ech: RowEchelon, prime: int) -> np.ndarray:
    """The kernel of the rows an echelon form holds: one vector per free column (centred residues)."""
    pivots = np.asarray(ech.pivots, dtype=np.intp)
    free = np.setdiff1d(np.arange(ech.columns), pivots)
    K = np.zeros((len(free), ech.columns))
    if len(free):
        B = ech.basis()
        K[np.arange(len(free)), free] = 1.0
        K[:, pivots] = -B[:, free].T
    return gfp.reduce(K, prime)


def prefix_output(net: Network, ar, wc, X, upto: int):
    """The input of block ``upto``: blocks 0..upto-1 applied to X."""
    return prefix(net, ar, wc, X, upto)


def _samples(net: Network, columns: int, rows_per_sample: int, width: int) -> int:
    by_memory = TANGENT_ELEMENTS // max(1, max(net.widest, width) * net.tokens * columns)
    return max(1, min(by_memory, max(1, ROWS_PER_BLOCK // rows_per_sample), columns // rows_per_sample + 2))


def block_kernels(net: Network, ar, wc, i: int, rng) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(K_alone, K_input, K_local) of block i at W (module docstring), on its own weights' coordinates."""
    p = ar.prime
    b, width = net.blocks[i], net.widths[i]
    mats = [m for m in net.weight_matrices if m.block == i]
    lo, hi = mats[0].offset, mats[-1].stop
    alone = block_alone(b, width, net.tokens)
    wi = wc[lo:hi]
    n_alone = _samples(net, hi - lo, alone.rows_per_sample, width)
    n_net = _samples(net, hi - lo, net.rows_per_sample, width)
    shape = (net.input, net.tokens)
    K_alone = _kernel(hi - lo, lambda g: jacobian(alone, ar, wi, ar.random(g, (n_alone, width, net.tokens))), rng, p)
    K_input = _kernel(
        hi - lo,
        lambda g: jacobian(alone, ar, wi, prefix_output(net, ar, wc, ar.random(g, (n_alone,) + shape), i)),
        rng,
        p,
    )
    K_local = _kernel(hi - lo, lambda g: jacobian(net, ar, wc, ar.random(g, (n_net,) + shape), only=i), rng, p)
    return K_alone, K_input, K_local


def _embed(K: np.ndarray, lo: int, P: int) -> np.ndarray:
    out = np.zeros((K.shape[0], P))
    out[:, lo : lo + K.shape[1]] = K
    return out


def explain(net: Network, dimension: int, prime: int = DEFAULT_PRIME, seed: int = 0) -> Explained:
    """parameters - ``dimension`` split into the named group's orbit, the mechanisms of every block and
    the unexplained rest, at a random point mod ``prime`` (module docstring)."""
    if not net.polynomial:
        raise ValueError("the defect split needs a polynomial network")
    P = net.parameters
    ar = ModP(prime)
    rng = np.random.default_rng(derived_seed(seed, 11))
    wc = ar.array(rng.integers(0, prime, size=P, dtype=np.int64))
    ech = RowEchelon(P, prime)
    causes: list[Cause] = []
    with blas_threads():
        for T in tangent_blocks(net, wc, ar):
            ech.add(T)
        named = ech.rank
        for i in range(len(net.blocks)):
            if ech.rank >= P - dimension:
                break  # the named group (and what is stacked so far) already fills the fiber
            own = [m for m in net.weight_matrices if m.block == i]
            if not own:
                continue  # a power block: no weights of its own
            lo = own[0].offset
            K_alone, K_input, K_local = block_kernels(net, ar, wc, i, rng)
            size = sum(m.size for m in own)
            gain = ech.add(_embed(K_alone, lo, P)) if len(K_alone) else 0
            if gain:
                causes += _own_causes(net, i, gain, size - len(K_alone), wc[lo : lo + size], prime)
            gain = ech.add(_embed(K_input, lo, P)) if len(K_input) else 0
            if gain:
                causes.append(
                    Cause(
                        i,
                        "bottleneck",
                        gain,
                        f"block {i} sees only the outputs of the blocks before it, "
                        "a smaller set than its input space, and these directions change it only off "
                        "that set",
                    )
                )
            gain = ech.add(_embed(K_local, lo, P)) if len(K_local) else 0
            if gain:
                causes.append(
                    Cause(
                        i,
                        "invisibility",
                        gain,
                        f"these directions change block {i}'s output but not what the blocks after it make of it",
                    )
                )
        if P - dimension > ech.rank:
            causes += _prefix_causes(net, ar, wc, ech, P - dimension, rng)
        _check_kernel(net, ar, wc, ech, rng)
    unexplained = P - dimension - ech.rank
    if unexplained < 0:
        raise ResultError(
            f"internal error: the defect split of {net.label()} does not add up: {ech.rank} kernel "
            f"directions found at the point, but parameters - dimension = {P - dimension}"
        )
    if unexplained:
        cause = _counted(net, dimension, unexplained, seed)
        if cause is not None:
            causes.append(cause)
            unexplained = 0
    return Explained(named_group=named, causes=tuple(causes), unexplained=unexplained, prime=prime)


def _prefix_causes(net: Network, ar, wc, ech: RowEchelon, kernel: int, rng) -> list[Cause]:
    """The own kernels of the first blocks together (blocks 0..k as a network: directions that do not change
    their output on any input), stacked until nothing is left; filling when the first blocks give every
    tuple of maps with their degrees, else their own defect."""
    from lightning_cas.core.block_theory import _row_space

    out = []
    for k in range(1, len(net.blocks) - 1):
        if ech.rank >= kernel:
            break
        if isinstance(net.blocks[k], Power) and isinstance(net.blocks[k + 1], Power):
            continue
        if any(e + 1 - c.residual <= k < e for e, c in enumerate(net.blocks) if c.residual):
            continue  # a residual group's skip crosses the prefix's end: its output is not all the rest sees
        prefix = Network(net.input, net.tokens, net.blocks[: k + 1])
        n = _samples(net, prefix.parameters, prefix.rows_per_sample, net.input)
        K = _kernel(
            prefix.parameters,
            lambda g: jacobian(prefix, ar, wc[: prefix.parameters], ar.random(g, (n, net.input, net.tokens))),
            rng,
            ar.prime,
        )
        gain = ech.add(_embed(K, 0, net.parameters)) if len(K) else 0
        if not gain:
            continue
        space = prefix.output * _row_space(net, net.blocks[: k + 1])
        if prefix.parameters - len(K) == space:
            out.append(
                Cause(
                    k,
                    "filling",
                    gain,
                    f"blocks 0..{k} together give every tuple of {prefix.output} maps "
                    f"with their degrees (dimension {space}) from {prefix.parameters} weights: the "
                    "directions that do not change their output",
                )
            )
        else:
            out.append(
                Cause(
                    k,
                    "own defect",
                    gain,
                    f"blocks 0..{k} together, on any input, have these kernel "
                    "directions beyond the named group and the blocks' own kernels",
                )
            )
    return out


def _counted(net: Network, dimension: int, rest: int, seed: int) -> Cause | None:
    """The rest, when a proved count forces it: the dimension is a proved published value (the
    Alexander-Hirschowitz secant defect) or equals a proved upper bound other than parameters - orbit
    (the network, its first blocks or some of its blocks have more weights than their map spaces can
    hold, so at least that many directions are in the kernel)."""
    claim = published(net)
    if claim is not None and claim.status == "proved" and claim.value == dimension:
        return Cause(None, "secant defect", rest, f"{claim.regime} (proved)")
    for name, value, why in expected(net, seed).bounds:
        if value != dimension or name == "parameters - orbit":
            continue
        if name == "ambient":
            return Cause(
                None,
                "filling",
                rest,
                f"the network's maps fill the whole space of maps with its degrees "
                f"(dimension {value}): every weight beyond it lies in the fiber",
            )
        if name.startswith("split after block "):
            k = int(name.rsplit(" ", 1)[1])
            return Cause(
                k,
                "filling",
                rest,
                f"blocks 0..{k} have more weights than the maps they give can hold, "
                f"with the group at the interface ({name} attained: {why})",
            )
        if name.startswith("filling of block"):
            blocks = name.split("block", 1)[1].lstrip("s ").split(", ")
            return Cause(int(blocks[0]) if len(blocks) == 1 else None, "filling", rest, f"{name} attained ({why})")
    return None


def _own_causes(net: Network, i: int, gain: int, alone_rank: int, wi, prime: int) -> list[Cause]:
    """The own kernel's gain beyond the named group: filling as far as counting forces it, the rest the
    block's own defect."""
    b, width = net.blocks[i], net.widths[i]
    bound = block_space(b, width, net.tokens)
    assert bound is not None  # a block of a polynomial network, not a Power (explain skips those)
    space, size, why = bound
    alone = block_alone(b, width, net.tokens)
    own_orbit = orbit_rank_modp(alone, wi, prime)
    forced = max(0, size - own_orbit - space)
    filling = min(gain, forced) if alone_rank == space else 0
    out = []
    mixing = min(gain - filling, _head_mixing(b, width))
    if mixing:
        out.append(
            Cause(
                i,
                "head mixing",
                mixing,
                f"block {i} is linear in the pairs (V_h, A_h = K_h^T Q_h) and "
                f"every A_h ranges over all {width} x {width} matrices (a >= d), every V_h over all "
                "matrices: GL(heads) mixes the pairs, H^2 - H directions beyond the per-head scalings",
            )
        )
        gain -= mixing
    if filling:
        out.append(
            Cause(
                i,
                "filling",
                filling,
                f"block {i} alone fills its map space, of dimension {space} ({why}), "
                f"with {size} weights and an orbit of {own_orbit}",
            )
        )
    if gain - filling:
        out.append(
            Cause(
                i,
                "own defect",
                gain - filling,
                f"block {i} alone (on any input) has a kernel beyond its "
                f"named symmetries: its own map space has dimension {alone_rank}, below both {space} "
                f"({why}) and {size} - {own_orbit}"
                if alone_rank < space
                else f"block {i} alone has a kernel beyond its named symmetries and the count forced by filling",
            )
        )
    return out


def _head_mixing(b, width: int) -> int:
    """H^2 - H for a lightning attention block whose heads can be mixed (every A_h and V_h ranges over all
    matrices: a >= d, and a value dim b >= min(d, out) when the value map is factored), else 0."""
    if not isinstance(b, Attention) or b.normalization != "none" or b.heads < 2 or b.attention < width:
        return 0
    if b.value is not None and b.value < min(width, b.output_width(width)):
        return 0
    return b.heads * (b.heads - 1)


def _check_kernel(net: Network, ar, wc, ech: RowEchelon, rng) -> None:
    """Every stacked direction must be in the kernel of a fresh batch of the network's Jacobian rows."""
    if not ech.rank:
        return
    n = max(
        1,
        min(
            ROWS_PER_BLOCK // net.rows_per_sample + 1,
            TANGENT_ELEMENTS // (net.widest * net.tokens * net.parameters) or 1,
        ),
    )
    J = jacobian(net, ar, wc, ar.random(rng, (n, net.input, net.tokens)))
    if np.any(ar.matmul(J, np.ascontiguousarray(ech.basis().T)) != 0):
        raise ResultError(
            f"internal error: the defect split of {net.label()} stacked a direction that is not in "
            "the kernel of the network's Jacobian"
        )
