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
all at the same W, exactly mod p (``rank_modp``). They are added to the named tangents in a fixed
order; each gain is its count, so the parts add up by construction and overlaps (an interface GL's
tangent that is a sum of local directions) are counted once. What is left, parameters - dimension -
(dimension of everything added), moves several blocks at once and is not tangent to the named group:
**unexplained**. For a shallow polynomial network with one output whose dimension is the proved
Alexander-Hirschowitz value, the rest is that theorem's **secant defect**.

The cost follows the answer, not the kernel. A kernel is never written out (it has P - dimension
vectors of length P): each subspace is kept as its annihilator, the row space of the Jacobian rows that
define it (at most the block's rank rows), and block-local subspaces sit on disjoint coordinates, so
their sum is direct and its dimension is the sum of theirs. Only the named group's tangents N (g rows)
cross blocks: for S = sum of ker(R_j) on disjoint coordinate ranges C_j (a range with no subspace yet
has R_j = the identity), dim(N + S) = dim S + rank M, where M (g columns) stacks R_j N_j^T for every
range (N_j: the tangents' columns in C_j). So memory is O(P (g + rank)) and the work is that of the
ranks of the block Jacobians, not of an echelon form of the kernel. A linear block alone is injective
in its weights (P Y + b determines P and b), so its own kernel is known to be 0 without a rank.

Every subspace added is checked against a fresh batch of the network's Jacobian rows (its annihilator
must contain their columns on its range, and the tangents must be in their kernel): one that is not
in the kernel, or a split with a negative remainder, is an error naming the network, never a table.
"""

from __future__ import annotations

import copy

import numpy as np

from lightning_cas.core import gfp
from lightning_cas.core.arithmetic import ModP
from lightning_cas.core.block_theory import block_alone, block_space, expected, published
from lightning_cas.core.checks import derived_seed
from lightning_cas.core.forward import jacobian, prefix
from lightning_cas.core.network import Attention, Linear, Network, Power
from lightning_cas.core.primes import DEFAULT_PRIME
from lightning_cas.core.rank_modp import RowEchelon, blas_threads
from lightning_cas.core.splits import Cause, Explained
from lightning_cas.core.symmetry import orbit_rank_modp, tangent_blocks
from lightning_cas.errors import ResultError, TooLargeError

ROWS_PER_BLOCK = 384  # Jacobian rows per streamed block of samples
TANGENT_ELEMENTS = 1 << 22
STREAM_ROWS = 4096  # rows of a transposed matrix streamed into an echelon form at once


def _rows(columns: int, rows_of, rng, prime: int) -> RowEchelon:
    """An echelon form of the rows ``rows_of(rng)`` streams in blocks, drawn until a block adds no rank (or
    the rank is full): the annihilator of the kernel they define."""
    ech = RowEchelon(columns, prime)
    while ech.rank < columns:
        if not ech.add(rows_of(rng)):
            break
    return ech


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


def _outside(A: np.ndarray, ann, prime: int) -> np.ndarray:
    """The rows of A reduced by an annihilator (basis, pivots): zero exactly where a row lies in its row space."""
    B, piv = ann
    if not len(B):
        return A.copy()
    return gfp.submul(np.array(A, dtype=np.float64), np.take(A, piv, axis=1), B, prime)


def _annihilator(ech: RowEchelon) -> tuple[np.ndarray, np.ndarray]:
    """(basis rows, pivot columns) of an echelon form."""
    return ech.basis(), np.asarray(ech.pivots, dtype=np.intp)


def _span_of(A: np.ndarray, prime: int) -> tuple[np.ndarray, np.ndarray]:
    """(basis rows, pivot columns) of the row space of A, streamed."""
    ech = RowEchelon(A.shape[1], prime)
    for s in range(0, A.shape[0], STREAM_ROWS):
        ech.add(np.ascontiguousarray(A[s : s + STREAM_ROWS]))
    return _annihilator(ech)


def _left_kernel(A: np.ndarray, prime: int) -> np.ndarray:
    """A basis (rows z) of {z : z A = 0}, streamed over A's columns (A is short and wide)."""
    ech = RowEchelon(A.shape[0], prime)
    for s in range(0, A.shape[1], STREAM_ROWS):
        ech.add(np.ascontiguousarray(A[:, s : s + STREAM_ROWS].T))
    return null_space(ech, prime)


class _Span:
    """N + S at the point: the named tangents G (a basis, g x P) and, on disjoint coordinate ranges, the
    subspaces added so far as annihilators (module docstring). ``dim`` is dim(N + S)."""

    def __init__(self, G: np.ndarray, ranges: list[tuple[int, int]], prime: int):
        self.G, self.p = G, prime
        self.groups: list[list] = [[lo, hi, None] for lo, hi in ranges]  # None: nothing added on the range yet
        self._identity: dict[tuple[int, int], np.ndarray] = {}
        self.local = 0  # dim S
        self.dim = len(G)
        self._others: tuple[tuple[int, int], RowEchelon] | None = None  # a range, the echelon form of M off it

    def _m_rows(self, lo: int, hi: int, ann) -> np.ndarray:
        """The rows of M for one range: its annihilator times the tangents' columns there."""
        Gt = np.ascontiguousarray(self.G[:, lo:hi].T)
        if ann is None:
            if (lo, hi) not in self._identity:
                self._identity[(lo, hi)] = _span_of(Gt, self.p)[0]
            return self._identity[(lo, hi)]
        return gfp.matmul(ann[0], Gt, self.p)

    def _rank_m(self, groups, lo: int, hi: int) -> int:
        """rank M; the rows of every range but [lo, hi) are reduced once and kept while [lo, hi) changes
        (the three subspaces of one block)."""
        if not len(self.G):
            return 0
        if self._others is None or self._others[0] != (lo, hi):
            ech = RowEchelon(len(self.G), self.p)
            for glo, ghi, ann in groups:
                if (glo, ghi) != (lo, hi):
                    rows = self._m_rows(glo, ghi, ann)
                    if len(rows):
                        ech.add(rows)
            self._others = ((lo, hi), ech)
        ech = copy.deepcopy(self._others[1])
        rows = self._m_rows(lo, hi, next(g[2] for g in groups if (g[0], g[1]) == (lo, hi)))
        if len(rows):
            ech.add(rows)
        return ech.rank

    def add(self, lo: int, hi: int, ann) -> int:
        """Add ker(ann) on [lo, hi) (a union of whole ranges); returns the gain in dimension."""
        if len(ann[0]) == hi - lo:
            return 0  # a full annihilator: its kernel is 0
        inside = [g for g in self.groups if lo <= g[0] and g[1] <= hi]
        if sum(g[1] - g[0] for g in inside) != hi - lo:
            raise ValueError(f"[{lo}, {hi}) is not a union of the split's coordinate ranges")
        merged = _intersect(ann, lo, [g for g in inside if g[2] is not None], self.p)
        groups = [g for g in self.groups if g[1] <= lo] + [[lo, hi, merged]] + [g for g in self.groups if g[0] >= hi]
        local = (
            self.local
            - sum(g[1] - g[0] - len(g[2][0]) for g in inside if g[2] is not None)
            + (hi - lo - len(merged[0]))
        )
        dim = local + self._rank_m(groups, lo, hi)
        gain = dim - self.dim
        if gain < 0:
            raise ResultError("internal error: the defect split lost a direction it had added")
        self.groups, self.local, self.dim = groups, local, dim
        return gain


def _intersect(ann, lo: int, parts, prime: int):
    """The annihilator of ker(ann) + (the subspaces ``parts`` hold, each on its own range inside): the
    rows z ann whose part on every part's range lies in that part's row space, i.e. whose reduction
    by it vanishes. The reductions are linear in z, so z runs over the left kernel of ann's reductions
    side by side (as many rows as ann has). When they all vanish (the nested case: K_alone in K_input
    in K_local), ann itself."""
    B = ann[0]
    residues = [_outside(np.ascontiguousarray(B[:, g[0] - lo : g[1] - lo]), g[2], prime) for g in parts]
    residues = [r for r in residues if r.any()]
    if not residues:
        return ann
    Z = _left_kernel(np.hstack(residues), prime)
    if not len(Z):
        return np.zeros((0, B.shape[1])), np.zeros(0, dtype=np.intp)
    return _span_of(gfp.matmul(Z, B, prime), prime)


def prefix_output(net: Network, ar, wc, X, upto: int):
    """The input of block ``upto``: blocks 0..upto-1 applied to X."""
    return prefix(net, ar, wc, X, upto)


def _samples(net: Network, columns: int, rows_per_sample: int, width: int) -> int:
    by_memory = TANGENT_ELEMENTS // max(1, max(net.widest, width) * net.tokens * columns)
    return max(1, min(by_memory, max(1, ROWS_PER_BLOCK // rows_per_sample), columns // rows_per_sample + 2))


def _check_size(net: Network, columns: int, rank: int, memory: int | None) -> None:
    """An echelon form of ``rank`` rows on ``columns`` columns, its basis and one more copy between two
    compactions: refused before the work when that does not fit in ``memory``."""
    need = 24 * rank * columns + 64 * 2**20
    if memory is not None and need > memory:
        raise TooLargeError(
            f"the defect split of {net.label()} would need about {need / 2**30:.1f} GiB for {columns} weights "
            f"and {memory / 2**30:.1f} GiB are available"
        )


def block_kernels(net: Network, ar, wc, i: int, rng, memory: int | None = None):
    """The annihilators (basis, pivots) of K_alone, K_input and K_local of block i at W (module docstring), on
    its own weights' coordinates; K_alone's is None for a linear block (injective in its weights)."""
    p = ar.prime
    b, width = net.blocks[i], net.widths[i]
    mats = [m for m in net.weight_matrices if m.block == i]
    lo, hi = mats[0].offset, mats[-1].stop
    bound = block_space(b, width, net.tokens)
    _check_size(net, hi - lo, hi - lo if bound is None else min(hi - lo, bound[0]), memory)
    alone = block_alone(b, width, net.tokens)
    wi = wc[lo:hi]
    n_alone = _samples(net, hi - lo, alone.rows_per_sample, width)
    n_net = _samples(net, hi - lo, net.rows_per_sample, width)
    shape = (net.input, net.tokens)
    K_alone = (
        None
        if isinstance(b, Linear)
        else _annihilator(
            _rows(hi - lo, lambda g: jacobian(alone, ar, wi, ar.random(g, (n_alone, width, net.tokens))), rng, p)
        )
    )
    # block 0's inputs are the network's: what it sees is any input (for a linear block, K_alone = 0 too)
    K_input = (
        K_alone
        if i == 0
        else _annihilator(
            _rows(
                hi - lo,
                lambda g: jacobian(alone, ar, wi, prefix_output(net, ar, wc, ar.random(g, (n_alone,) + shape), i)),
                rng,
                p,
            )
        )
    )
    K_local = _annihilator(
        _rows(hi - lo, lambda g: jacobian(net, ar, wc, ar.random(g, (n_net,) + shape), only=i), rng, p)
    )
    return K_alone, K_input, K_local


def explain(
    net: Network, dimension: int, prime: int = DEFAULT_PRIME, seed: int = 0, memory: int | None = None
) -> Explained:
    """parameters - ``dimension`` split into the named group's orbit, the mechanisms of every block and
    the unexplained rest, at a random point mod ``prime`` (module docstring). ``memory``: bytes the work
    may use (a block whose echelon form would not fit is refused before the work: TooLargeError)."""
    if not net.polynomial:
        raise ValueError("the defect split needs a polynomial network")
    P = net.parameters
    ar = ModP(prime)
    rng = np.random.default_rng(derived_seed(seed, 11))
    wc = ar.array(rng.integers(0, prime, size=P, dtype=np.int64))
    causes: list[Cause] = []
    ranges: dict[int, tuple[int, int]] = {}
    for m in net.weight_matrices:
        lo, hi = ranges.get(m.block, (m.offset, m.stop))
        ranges[m.block] = (min(lo, m.offset), max(hi, m.stop))
    with blas_threads():
        named_ech = RowEchelon(P, prime)
        for T in tangent_blocks(net, wc, ar):
            named_ech.add(T)
        span = _Span(named_ech.basis(), sorted(ranges.values()), prime)
        del named_ech
        named = span.dim
        for i in range(len(net.blocks)):
            if span.dim >= P - dimension:
                break  # the named group (and what is added so far) already fills the fiber
            if i not in ranges:
                continue  # a power block: no weights of its own
            lo, hi = ranges[i]
            K_alone, K_input, K_local = block_kernels(net, ar, wc, i, rng, memory)
            gain = span.add(lo, hi, K_alone) if K_alone is not None else 0
            if gain:
                causes += _own_causes(net, i, gain, len(K_alone[0]), wc[lo:hi], prime)
            gain = span.add(lo, hi, K_input) if K_input is not None else 0
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
            gain = span.add(lo, hi, K_local)
            if gain:
                causes.append(
                    Cause(
                        i,
                        "invisibility",
                        gain,
                        f"these directions change block {i}'s output but not what the blocks after it make of it",
                    )
                )
        if P - dimension > span.dim:
            causes += _prefix_causes(net, ar, wc, span, P - dimension, rng, memory)
        _check_kernel(net, ar, wc, span, rng)
    unexplained = P - dimension - span.dim
    if unexplained < 0:
        raise ResultError(
            f"internal error: the defect split of {net.label()} does not add up: {span.dim} kernel "
            f"directions found at the point, but parameters - dimension = {P - dimension}"
        )
    bound = None
    if unexplained:
        counted = _counted(net, dimension, unexplained, seed)
        if counted is not None:
            cause, bound = counted
            causes.append(cause)
            unexplained = 0
    claim = published(net)
    if bound is None and claim is not None and claim.status == "proved" and claim.value == dimension:
        bound = f"the published value: {claim.regime}"  # a theorem's value: the dimension is proved
    return Explained(named_group=named, causes=tuple(causes), unexplained=unexplained, prime=prime, proved_bound=bound)


def _prefix_causes(net: Network, ar, wc, span: _Span, kernel: int, rng, memory: int | None) -> list[Cause]:
    """The own kernels of the first blocks together (blocks 0..k as a network: directions that do not change
    their output on any input), added until nothing is left; filling when the first blocks give every
    tuple of maps with their degrees, else their own defect."""
    from lightning_cas.core.block_theory import row_space

    out = []
    for k in range(1, len(net.blocks) - 1):
        if span.dim >= kernel:
            break
        if isinstance(net.blocks[k], Power):
            continue  # Y -> Y^r has an injective differential where Y has no zero entry: the prefix before it

        if any(e + 1 - c.residual <= k < e for e, c in enumerate(net.blocks) if c.residual):
            continue  # a residual group's skip crosses the prefix's end: its output is not all the rest sees
        prefix = Network(net.input, net.tokens, net.blocks[: k + 1])
        space = prefix.output * row_space(net, net.blocks[: k + 1])
        _check_size(net, prefix.parameters, min(prefix.parameters, space), memory)
        n = _samples(net, prefix.parameters, prefix.rows_per_sample, net.input)
        ann = _annihilator(
            _rows(
                prefix.parameters,
                lambda g: jacobian(prefix, ar, wc[: prefix.parameters], ar.random(g, (n, net.input, net.tokens))),
                rng,
                ar.prime,
            )
        )
        gain = span.add(0, prefix.parameters, ann)
        if not gain:
            continue
        if len(ann[0]) == space:
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


def _counted(net: Network, dimension: int, rest: int, seed: int) -> tuple[Cause, str] | None:
    """The rest, when a proved count forces it, and that bound in words: the dimension is a proved published
    value (the Alexander-Hirschowitz secant defect) or equals a proved upper bound other than parameters -
    orbit (the network, its first blocks or some of its blocks have more weights than their map spaces can
    hold, so at least that many directions are in the kernel)."""
    claim = published(net)
    if claim is not None and claim.status == "proved" and claim.value == dimension:
        return Cause(None, "secant defect", rest, f"{claim.regime} (proved)"), f"the published value: {claim.regime}"
    for name, value, why in expected(net, seed).bounds:
        if value != dimension or name == "parameters - orbit":
            continue
        bound = f"{name} = {value} ({why})"
        if name == "ambient":
            return (
                Cause(
                    None,
                    "filling",
                    rest,
                    f"the network's maps fill the whole space of maps with its degrees "
                    f"(dimension {value}): every weight beyond it lies in the fiber",
                ),
                bound,
            )
        if name.startswith("split after block "):
            k = int(name.rsplit(" ", 1)[1])
            return (
                Cause(
                    k,
                    "filling",
                    rest,
                    f"blocks 0..{k} have more weights than the maps they give can hold, "
                    f"with the group at the interface ({name} attained: {why})",
                ),
                bound,
            )
        if name.startswith("filling of block"):
            blocks = name.split("block", 1)[1].lstrip("s ").split(", ")
            cause = Cause(int(blocks[0]) if len(blocks) == 1 else None, "filling", rest, f"{name} attained ({why})")
            return cause, bound
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


def _check_kernel(net: Network, ar, wc, span: _Span, rng) -> None:
    """Everything added must be in the kernel of a fresh batch of the network's Jacobian rows: the named
    tangents directly, a subspace ker(R) on a range when R's row space holds the batch's columns there."""
    if not span.dim:
        return
    n = max(
        1,
        min(
            ROWS_PER_BLOCK // net.rows_per_sample + 1,
            TANGENT_ELEMENTS // (net.widest * net.tokens * net.parameters) or 1,
        ),
    )
    J = jacobian(net, ar, wc, ar.random(rng, (n, net.input, net.tokens)))
    bad = bool(len(span.G)) and bool(np.any(ar.matmul(J, np.ascontiguousarray(span.G.T)) != 0))
    for lo, hi, ann in span.groups:
        bad = bad or (ann is not None and bool(_outside(np.ascontiguousarray(J[:, lo:hi]), ann, ar.prime).any()))
    if bad:
        raise ResultError(
            f"internal error: the defect split of {net.label()} added a direction that is not in "
            "the kernel of the network's Jacobian"
        )
