"""Exact kernel vectors at W of a network with ReLU: the mechanisms that ReLU's positive homogeneity and its
0/1 patterns on given inputs give (``core.activation_kernels`` gathers them with the others; each is proved
against the Jacobian before it counts, ``core.kernel_proof``):

* **ReLU scaling**: ReLU is positively homogeneous, so a hidden unit's input row and bias scaled by c and
  its output column by 1/c change nothing (an mlp's unit; across an activation block, a row of the
  block before and a column of the block after);
* **dead unit** (given the signs on the inputs): a ReLU input negative on every input moves nowhere
  under small changes, so its input row and bias, and its output column (or the columns that read it),
  are invisible;
* **blind spot** (given the signs and the block's inputs): a unit's input row and bias moved by v with v
  orthogonal to (y, 1) at every input and token where the unit is active change nothing (where it is
  inactive its input stays negative); a dead unit is the case of no active input;
* **always active** (given the signs): units active on every input act linearly there, so GL of them
  (rows of U and b_u by E, columns of D by -E) and a shift of their biases into b_d change nothing;
* **unit kernel** (given the signs and the block's inputs; it contains the scaling, the dead unit and the
  blind spot): a unit's input row and bias moved by v and the column that reads it by u change the next
  values by u h + a (v . (y, 1)) where the unit is active (a: the column, h: the unit's input); where the
  values go into a ReLU only its active coordinates matter. Every (v, u) that makes these zero at every
  input is an exact kernel vector: a small system over QQ, one per unit.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from lightning_cas.core.network import MLP, Activation, Linear
from lightning_cas.core.residual_groups import plain_interface
from lightning_cas.core.weight_moves import Vectors, affine_in, affine_out, fmpq, input_letters, move, output_letters


def _blind_spots(vs: Vectors, rows: list[int], signs, Y, bias: bool) -> None:
    """Vectors on the flat indices ``rows`` (a unit's input row, then its bias) orthogonal to (y, 1) at every
    (input, token) where ``signs`` (N, t) is positive; Y (N, d, t) holds the block's inputs over QQ."""
    import flint

    from lightning_cas.core.exact_qq import nullspace

    n_idx, t_idx = np.nonzero(np.asarray(signs) > 0)
    if len(n_idx) >= 4 * len(rows):  # many active inputs: they span everything, nothing to find
        return
    one = flint.fmpq(1)
    seen = [[flint.fmpq(Y[n, c, j]) for c in range(Y.shape[1])] + ([one] if bias else []) for n, j in zip(n_idx, t_idx)]
    for v in nullspace(seen, len(rows)):
        vs.add("blind spot", {k: Fraction(int(x.p), int(x.q)) for k, x in zip(rows, v)})


def _hidden_gl(vs: Vectors, i: int, a: int, c: int) -> dict:
    """The tangent of E = e_a e_c^T on the hidden units of mlp block i: row a of (U, b_u) moved by row c,
    column c of D by minus column a (a = c: the unit's scaling)."""
    (U,), (D,), bu = vs.mats(i, "u"), vs.mats(i, "d"), vs.mats(i, "bu")
    vec = {U.offset + a * U.cols + col: vs.entry(U, c, col) for col in range(U.cols)}
    for m in bu:
        vec[m.offset + a] = vs.entry(m, c, 0)
    for row in range(D.rows):
        vec[D.offset + row * D.cols + c] = -vs.entry(D, row, a)
    return vec


def _always_active(vs: Vectors, i: int, b, live) -> None:
    """GL of the always-active units of mlp block i, and their bias shifts into b_d."""
    S = [k for k in range(b.hidden) if live[k]]
    (D,), bu, bd = vs.mats(i, "d"), vs.mats(i, "bu"), vs.mats(i, "bd")
    for a in S:
        for c in S:
            if a != c:  # a == c: the scaling, already there
                vs.add("always active", _hidden_gl(vs, i, a, c))
        if bu and bd:
            vec = {bu[0].offset + a: Fraction(1)}
            for row in range(D.rows):
                vec[bd[0].offset + row] = -vs.entry(D, row, a)
            vs.add("always active", vec)


UNIT_BUDGET = 200_000  # entries of one unit's system; a larger one is left to the other mechanisms


def _unit_kernel(vs: Vectors, rows: list[int], cols: list[int], a: list, H, Y, bias: bool, matter) -> bool:
    """The unit kernel (module docstring) of one unit: ``rows`` the flat indices of its input row (then its
    bias), ``cols`` those of the column a that reads it; H (N, t) its input, Y (N, d, t) the block's input
    over QQ, ``matter`` (N, m, t) booleans or None (every coordinate matters). False when too large."""
    import flint

    from lightning_cas.core.exact_qq import nullspace

    zero = flint.fmpq(0)
    n_idx, t_idx = np.nonzero(np.asarray([[h > zero for h in row] for row in H], dtype=bool))
    m, width = len(cols), len(rows) + len(cols)
    if len(n_idx) * m * width > UNIT_BUDGET:
        return False
    system = []
    one = flint.fmpq(1)
    for n, j in zip(n_idx, t_idx):
        tilde = [flint.fmpq(Y[n, c, j]) for c in range(Y.shape[1])] + ([one] if bias else [])
        h = flint.fmpq(H[n, j])
        for r in range(m):
            if matter is not None and not matter[n, r, j]:
                continue
            row = [a[r] * x for x in tilde] + [zero] * m
            row[len(rows) + r] = h
            system.append(row)
    for v in nullspace(system, width):
        vs.add("unit kernel", {k: Fraction(int(x.p), int(x.q)) for k, x in zip(rows + cols, v)})
    return True


def _matter(patterns: dict, blocks, i: int):
    """Which coordinates of block i's output matter: the active ones when a ReLU block reads them next."""
    nxt = blocks[i + 1] if i + 1 < len(blocks) else None
    if not plain_interface(blocks, i + 1):
        return None  # a residual skip leaves or joins there: every coordinate matters
    if isinstance(nxt, Activation) and nxt.function == "relu" and i + 1 in patterns:
        return np.asarray(patterns[i + 1]) > 0
    return None


def _unit_kernels(vs: Vectors, patterns: dict, streams: list) -> set:
    """Every unit kernel the network's ReLUs allow; returns the (block, unit) pairs done."""
    blocks, done = vs.net.blocks, set()
    for i, b in enumerate(blocks):
        if i not in patterns:
            continue
        if isinstance(b, MLP) and b.activation == "relu":
            (U,), (D,) = vs.mats(i, "u"), vs.mats(i, "d")
            bu = vs.mats(i, "bu")
            Y = streams[i]
            matter = _matter(patterns, blocks, i)
            for k in range(b.hidden):
                H = np.tensordot(
                    np.array([fmpq(vs.entry(U, k, c)) for c in range(U.cols)], dtype=object), Y, axes=(0, 1)
                ) + fmpq(vs.entry(bu[0], k, 0) if bu else Fraction(0))  # (N, t)
                rows = [U.offset + k * U.cols + c for c in range(U.cols)] + [m.offset + k for m in bu]
                cols = [D.offset + r * D.cols + k for r in range(D.rows)]
                a = [fmpq(vs.entry(D, r, k)) for r in range(D.rows)]
                if _unit_kernel(vs, rows, cols, a, H, Y, bool(bu), matter):
                    done.add((i, k))
        elif (
            isinstance(b, Activation)
            and b.function == "relu"
            and 0 < i < len(blocks) - 1
            and isinstance(blocks[i - 1], Linear)
            and isinstance(blocks[i + 1], Linear)
            and plain_interface(blocks, i)
            and plain_interface(blocks, i + 1)
        ):
            before, (P,) = blocks[i - 1], vs.mats(i + 1, "p")
            (Pb,), bp = vs.mats(i - 1, "p"), vs.mats(i - 1, "bp")
            _always_active_stream(vs, i, (np.asarray(patterns[i]) > 0).all(axis=(0, 2)))
            Y, Hs = streams[i - 1], streams[i]
            matter = _matter(patterns, blocks, i + 1)
            for k in range(vs.net.widths[i]):
                rows = [Pb.offset + k * Pb.cols + c for c in range(Pb.cols)] + [m.offset + k for m in bp]
                cols = [P.offset + r * P.cols + k for r in range(P.rows)]
                a = [fmpq(vs.entry(P, r, k)) for r in range(P.rows)]
                H = Hs[:, k, :]
                if _unit_kernel(vs, rows, cols, a, H, Y, bool(before.bias), matter):
                    done.add((i, k))
    return done


def _always_active_stream(vs: Vectors, i: int, live) -> None:
    """GL of the always-active coordinates of a ReLU between two linear blocks (rows of the first, columns
    of the second), and their bias shifts into the second's bias."""
    S = [c for c in range(len(live)) if live[c]]
    (Pa,), ba = vs.mats(i + 1, "p"), vs.mats(i + 1, "bp")
    bb = vs.mats(i - 1, "bp")
    for a in S:
        for c in S:
            if a != c:
                vec: dict = {}
                move(vs, i - 1, {(a, c): 1}, 1, vec, out=True)
                move(vs, i + 1, {(a, c): 1}, -1, vec, out=False)
                vs.add("always active", vec)
        if bb and ba:
            vec = {bb[0].offset + a: Fraction(1)}
            for r in range(Pa.rows):
                vec[ba[0].offset + r] = -vs.entry(Pa, r, a)
            vs.add("always active", vec)


def relu_units(vs: Vectors, patterns: dict | None, streams: list | None) -> None:
    blocks = vs.net.blocks
    done = _unit_kernels(vs, patterns, streams) if patterns is not None and streams is not None else set()
    for i, b in enumerate(blocks):
        if isinstance(b, MLP) and b.activation == "relu":
            (U,), (D,) = vs.mats(i, "u"), vs.mats(i, "d")
            bu = vs.mats(i, "bu")
            signs = _signs(patterns, i)
            dead = _dead(signs, b.hidden)
            if signs is not None:
                live = (signs > 0).all(axis=(0, 2))
                _always_active(vs, i, b, live)
                if streams is not None:
                    for k in range(b.hidden):
                        if not dead[k] and (i, k) not in done:
                            rows = [U.offset + k * U.cols + col for col in range(U.cols)] + [m.offset + k for m in bu]
                            _blind_spots(vs, rows, signs[:, k, :], streams[i], bool(bu))
            for k in range(b.hidden):
                if (i, k) in done:
                    continue
                if dead[k]:
                    for col in range(U.cols):
                        vs.add("dead unit", {U.offset + k * U.cols + col: Fraction(1)})
                    for m in bu:
                        vs.add("dead unit", {m.offset + k: Fraction(1)})
                    for row in range(D.rows):
                        vs.add("dead unit", {D.offset + row * D.cols + k: Fraction(1)})
                    continue
                vs.add("ReLU scaling", _hidden_gl(vs, i, k, k))
        elif isinstance(b, Activation) and b.function == "relu" and i > 0:
            before, after = blocks[i - 1], (blocks[i + 1] if i + 1 < len(blocks) else None)
            d = vs.net.widths[i]
            signs = _signs(patterns, i)
            dead = _dead(signs, d)
            for c in range(d):
                if (i, c) in done:
                    continue
                if dead[c]:
                    if output_letters(before)[0] and not vs.net.skip_in(i):  # row c never reaches past the ReLU
                        vec_rows = _row_entries(vs, i - 1, c)
                        for k in vec_rows:
                            vs.add("dead unit", {k: Fraction(1)})
                    if after is not None and plain_interface(blocks, i + 1):  # no skip adds to column c
                        for letter in input_letters(after):
                            for m in vs.mats(i + 1, letter):
                                for row in range(m.rows):
                                    vs.add("dead unit", {m.offset + row * m.cols + c: Fraction(1)})
                    continue
                if affine_out(vs.net, i - 1) and after is not None and affine_in(vs.net, i + 1):
                    vec = {k: vs.values[k] for k in _row_entries(vs, i - 1, c)}
                    move(vs, i + 1, {(c, c): 1}, -1, vec, out=False)
                    vs.add("ReLU scaling", vec)
                if signs is not None and streams is not None and isinstance(before, Linear) and not vs.net.skip_in(i):
                    _blind_spots(vs, _row_entries(vs, i - 1, c), signs[:, c, :], streams[i - 1], before.bias)


def _row_entries(vs: Vectors, block: int, c: int) -> list[int]:
    """Flat indices of row c of every output matrix and bias of ``block``."""
    mats, bias = output_letters(vs.net.blocks[block])
    out = []
    for letter in mats + ([bias] if bias else []):
        for m in vs.mats(block, letter):
            out += [m.offset + c * m.cols + col for col in range(m.cols)]
    return out


def _signs(patterns: dict | None, block: int) -> np.ndarray | None:
    """The signs (N, units, t) of the ReLU's input at ``block`` on the given inputs (None without patterns)."""
    if patterns is None or block not in patterns:
        return None
    return np.asarray(patterns[block])


def _dead(signs: np.ndarray | None, units: int) -> np.ndarray:
    """Per unit (row of the ReLU's input): negative on every input and token (none dead without signs)."""
    if signs is None:
        return np.zeros(units, dtype=bool)
    return np.asarray((signs < 0).all(axis=(0, 2)))
