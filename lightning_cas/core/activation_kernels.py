"""Exact kernel vectors at W of a network with activation functions or LayerNorm: the upper bound of its rank.

A rank at given weights is proved from two sides: a nonzero minor (mod p, or a ball) bounds it below, and
vectors that lie *exactly* in the kernel of d(W -> phi_W) bound it above. For networks with ReLU, GELU, tanh
or LayerNorm these mechanisms give such vectors, each over QQ at the point, each a change of the weights
that no input can see (to first order):

* **junction**: a block whose output is linear in its output matrices and bias (mlp D, b_d; linear P, b_p;
  attention V or O, b_v, b_o) followed by a block that reads the stream only through matrices (mlp U,
  linear P, attention Q, K, V or W), neither residual: y -> E y before and M -> M E^-1 after,
  d^2 directions (only the diagonal ones after a LayerNorm, whose output is g o z + b_g);
* **bias shift**: the output bias of the first moved by e, every input bias of the second by -M e;
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
  input is an exact kernel vector: a small system over QQ, one per unit;
* **LayerNorm shift**: LayerNorm(y + c 1) = LayerNorm(y), so the output matrix of the block before it
  moved by 1 v^T (and its bias by 1) changes nothing;
* **LayerNorm plane**: z = LayerNorm(y) has mean 0, so g o z + b_g lies in the hyperplane w . (x - b_g) = 0,
  w = 1/g; a block reading it sees no row moved by w^T (its bias by -w . b_g);
* **LayerNorm rotation**: a rotation A of the hyperplane 1^T y = 0 (A antisymmetric, A 1 = 0) commutes with
  LayerNorm, so y -> (I + A) y before it and M -> M - M G A G^-1 (G = diag g; its bias by M G A G^-1 b_g)
  after it change nothing: (d-1)(d-2)/2 directions.

The vectors may depend on each other: the caller counts them by a rank (mod p a lower bound of their rank
over QQ, which is what an upper bound needs) and proves J k = 0 before a vector counts (``core.kernel_proof``).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from lightning_cas.core.network import MLP, Activation, Attention, LayerNorm, Linear, Network


def _input_letters(block) -> list[str]:
    """The matrices through which a block reads its input stream (empty: it reads the stream itself)."""
    if isinstance(block, Attention):
        return ["q", "k", "v" if block.value is None else "w"]
    return {MLP: ["u"], Linear: ["p"]}.get(type(block), [])


def _output_letters(block) -> tuple[list[str], str | None]:
    """(matrices, bias) the block's output is linear in (on the left), or ([], None)."""
    if isinstance(block, Attention):
        if block.value is None:
            return ["v"], ("bv" if block.bias else None)
        return ["o"], ("bo" if block.bias else None)
    if isinstance(block, MLP):
        return ["d"], ("bd" if block.bias else None)
    if isinstance(block, Linear):
        return ["p"], ("bp" if block.bias else None)
    return [], None


class _Vectors:
    """Kernel vectors under construction: each a dict {flat index: Fraction}, named by mechanism."""

    def __init__(self, net: Network, values):
        self.net, self.P = net, net.parameters
        self.values = [Fraction(v) for v in values]
        self.where = {}  # (block, head, letter) -> WeightMatrix
        for m in net.weight_matrices:
            self.where[(m.block, m.head, m.letter)] = m
        self.found: list[tuple[str, dict]] = []

    def mats(self, block: int, letter: str):
        """Every weight matrix of that letter in the block (one per head)."""
        return [m for (b, _, x), m in self.where.items() if b == block and x == letter]

    def entry(self, m, r: int, c: int) -> Fraction:
        return self.values[m.offset + r * m.cols + c]

    def add(self, name: str, vec: dict) -> None:
        vec = {k: v for k, v in vec.items() if v}
        if vec:
            self.found.append((name, vec))

    def dense(self) -> list[tuple[str, np.ndarray]]:
        out = []
        for name, vec in self.found:
            d = np.array([Fraction(0)] * self.P, dtype=object)
            for k, v in vec.items():
                d[k] += v
            out.append((name, d))
        return out


def _left(vs: _Vectors, block: int, E: dict, sign: int, vec: dict, out: bool) -> None:
    """Add sign * (E M) for each output matrix and bias of ``block`` (``out``), or sign * (M E) for each
    input matrix of it; E is sparse {(a, b): value} on the stream."""
    b = vs.net.blocks[block]
    if out:
        mats, bias = _output_letters(b)
        letters = mats + ([bias] if bias else [])
        for letter in letters:
            for m in vs.mats(block, letter):
                for (a, c), e in E.items():  # (E M)[a, :] += e M[c, :]
                    for col in range(m.cols):
                        k = m.offset + a * m.cols + col
                        vec[k] = vec.get(k, 0) + sign * e * vs.entry(m, c, col)
    else:
        for letter in _input_letters(b):
            for m in vs.mats(block, letter):
                for (a, c), e in E.items():  # (M E)[:, c] += e M[:, a]
                    for row in range(m.rows):
                        k = m.offset + row * m.cols + c
                        vec[k] = vec.get(k, 0) + sign * e * vs.entry(m, row, a)


def _constant_bias(b) -> str | None:
    """The bias that shifts the whole output of a (non-residual) block by itself, or None. A lightning head's
    value bias is not one: its output (V Y + b_v 1^T) A moves by b_v (1^T A), which varies with the tokens; a
    softmax head's is (the columns of A sum to 1), and so are b_o, b_d, b_p and LayerNorm's b_g."""
    if getattr(b, "residual", False) or not getattr(b, "bias", False):
        return None
    if isinstance(b, Attention):
        if b.value is not None:
            return "bo"
        return "bv" if b.normalization == "softmax" else None
    if isinstance(b, LayerNorm):
        return "bg"
    return _output_letters(b)[1]


def _affine_out(b) -> bool:
    return bool(_output_letters(b)[0]) and not getattr(b, "residual", False)


def _affine_in(b) -> bool:
    return bool(_input_letters(b)) and not getattr(b, "residual", False)


def _junctions(vs: _Vectors) -> None:
    blocks = vs.net.blocks
    widths = vs.net.widths
    for i in range(len(blocks) - 1):
        first, second = blocks[i], blocks[i + 1]
        if not _affine_in(second):
            continue
        d = widths[i + 1]
        if _affine_out(first):
            for a in range(d):
                for c in range(d):
                    vec: dict = {}
                    _left(vs, i, {(a, c): 1}, 1, vec, out=True)
                    _left(vs, i + 1, {(a, c): 1}, -1, vec, out=False)
                    vs.add("junction", vec)
        elif isinstance(first, LayerNorm) and first.affine:
            for a in range(d):
                vec = {}
                for letter in ("g", "bg"):
                    for m in vs.mats(i, letter):
                        vec[m.offset + a] = vs.entry(m, a, 0)
                _left(vs, i + 1, {(a, a): 1}, -1, vec, out=False)
                vs.add("junction", vec)
        out_bias = _constant_bias(first)
        if out_bias and getattr(second, "bias", False):
            for a in range(d):
                vec = {}
                m = vs.mats(i, out_bias)[0]  # one head's: the shift of the whole output
                vec[m.offset + a] = Fraction(1)
                for letter in _input_letters(second):
                    for m in vs.mats(i + 1, letter):
                        bias = vs.where[(i + 1, m.head, "b" + letter)]
                        for row in range(m.rows):
                            vec[bias.offset + row] = -vs.entry(m, row, a)
                vs.add("bias shift", vec)


def _blind_spots(vs: _Vectors, rows: list[int], signs, Y, bias: bool) -> None:
    """Vectors on the flat indices ``rows`` (a unit's input row, then its bias) orthogonal to (y, 1) at every
    (input, token) where ``signs`` (N, t) is positive; Y (N, d, t) holds the block's inputs over QQ."""
    import flint

    from lightning_cas.core.exact_qq import nullspace

    n_idx, t_idx = np.nonzero(np.asarray(signs) > 0)
    if len(n_idx) >= 4 * len(rows):  # many active inputs: they span everything, nothing to find
        return
    one = flint.fmpq(1)
    seen = [[flint.fmpq(Y[n, c, j]) for c in range(Y.shape[1])] + ([one] if bias else [])
            for n, j in zip(n_idx, t_idx)]
    for v in nullspace(seen, len(rows)):
        vs.add("blind spot", {k: Fraction(int(x.p), int(x.q)) for k, x in zip(rows, v)})


def _hidden_gl(vs: _Vectors, i: int, a: int, c: int) -> dict:
    """The tangent of E = e_a e_c^T on the hidden units of mlp block i: row a of (U, b_u) moved by row c,
    column c of D by minus column a (a = c: the unit's scaling)."""
    (U,), (D,), bu = vs.mats(i, "u"), vs.mats(i, "d"), vs.mats(i, "bu")
    vec = {U.offset + a * U.cols + col: vs.entry(U, c, col) for col in range(U.cols)}
    for m in bu:
        vec[m.offset + a] = vs.entry(m, c, 0)
    for row in range(D.rows):
        vec[D.offset + row * D.cols + c] = -vs.entry(D, row, a)
    return vec


def _always_active(vs: _Vectors, i: int, b, live) -> None:
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


def _unit_kernel(vs: _Vectors, rows: list[int], cols: list[int], a: list, H, Y, bias: bool, matter) -> bool:
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


def _fmpq(q: Fraction):
    import flint

    return flint.fmpq(q.numerator, q.denominator)


def _matter(patterns: dict, blocks, i: int):
    """Which coordinates of block i's output matter: the active ones when a ReLU block reads them next."""
    nxt = blocks[i + 1] if i + 1 < len(blocks) else None
    if isinstance(nxt, Activation) and nxt.function == "relu" and i + 1 in patterns:
        return np.asarray(patterns[i + 1]) > 0
    return None


def _unit_kernels(vs: _Vectors, patterns: dict, streams: list) -> set:
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
                H = np.tensordot(np.array([_fmpq(vs.entry(U, k, c)) for c in range(U.cols)], dtype=object), Y,
                                 axes=(0, 1)) + _fmpq(vs.entry(bu[0], k, 0) if bu else Fraction(0))  # (N, t)
                rows = [U.offset + k * U.cols + c for c in range(U.cols)] + [m.offset + k for m in bu]
                cols = [D.offset + r * D.cols + k for r in range(D.rows)]
                a = [_fmpq(vs.entry(D, r, k)) for r in range(D.rows)]
                if _unit_kernel(vs, rows, cols, a, H, Y, bool(bu), matter):
                    done.add((i, k))
        elif isinstance(b, Activation) and b.function == "relu" and 0 < i < len(blocks) - 1 \
                and isinstance(blocks[i - 1], Linear) and isinstance(blocks[i + 1], Linear):
            before, (P,) = blocks[i - 1], vs.mats(i + 1, "p")
            (Pb,), bp = vs.mats(i - 1, "p"), vs.mats(i - 1, "bp")
            _always_active_stream(vs, i, (np.asarray(patterns[i]) > 0).all(axis=(0, 2)))
            Y, Hs = streams[i - 1], streams[i]
            matter = _matter(patterns, blocks, i + 1)
            for k in range(vs.net.widths[i]):
                rows = [Pb.offset + k * Pb.cols + c for c in range(Pb.cols)] + [m.offset + k for m in bp]
                cols = [P.offset + r * P.cols + k for r in range(P.rows)]
                a = [_fmpq(vs.entry(P, r, k)) for r in range(P.rows)]
                H = Hs[:, k, :]
                if _unit_kernel(vs, rows, cols, a, H, Y, before.bias, matter):
                    done.add((i, k))
    return done


def _always_active_stream(vs: _Vectors, i: int, live) -> None:
    """GL of the always-active coordinates of a ReLU between two linear blocks (rows of the first, columns
    of the second), and their bias shifts into the second's bias."""
    S = [c for c in range(len(live)) if live[c]]
    (Pa,), ba = vs.mats(i + 1, "p"), vs.mats(i + 1, "bp")
    bb = vs.mats(i - 1, "bp")
    for a in S:
        for c in S:
            if a != c:
                vec: dict = {}
                _left(vs, i - 1, {(a, c): 1}, 1, vec, out=True)
                _left(vs, i + 1, {(a, c): 1}, -1, vec, out=False)
                vs.add("always active", vec)
        if bb and ba:
            vec = {bb[0].offset + a: Fraction(1)}
            for r in range(Pa.rows):
                vec[ba[0].offset + r] = -vs.entry(Pa, r, a)
            vs.add("always active", vec)


def _relu_units(vs: _Vectors, patterns: dict | None, streams: list | None) -> None:
    blocks = vs.net.blocks
    done = _unit_kernels(vs, patterns, streams) if patterns is not None and streams is not None else set()
    for i, b in enumerate(blocks):
        if isinstance(b, MLP) and b.activation == "relu":
            (U,), (D,) = vs.mats(i, "u"), vs.mats(i, "d")
            bu = vs.mats(i, "bu")
            dead = _dead(patterns, i)
            if dead is not None:
                live = (np.asarray(patterns[i]) > 0).all(axis=(0, 2))
                _always_active(vs, i, b, live)
                if streams is not None:
                    for k in range(b.hidden):
                        if not dead[k] and (i, k) not in done:
                            rows = [U.offset + k * U.cols + col for col in range(U.cols)] + \
                                   [m.offset + k for m in bu]
                            _blind_spots(vs, rows, np.asarray(patterns[i])[:, k, :], streams[i], bool(bu))
            for k in range(b.hidden):
                if (i, k) in done:
                    continue
                if dead is not None and dead[k]:
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
            dead = _dead(patterns, i)
            d = vs.net.widths[i]
            for c in range(d):
                if (i, c) in done:
                    continue
                if dead is not None and dead[c]:
                    if _output_letters(before)[0]:  # its row c never reaches past the ReLU
                        vec_rows = _row_entries(vs, i - 1, c)
                        for k in vec_rows:
                            vs.add("dead unit", {k: Fraction(1)})
                    if after is not None:
                        for letter in _input_letters(after):
                            for m in vs.mats(i + 1, letter):
                                for row in range(m.rows):
                                    vs.add("dead unit", {m.offset + row * m.cols + c: Fraction(1)})
                    continue
                if _affine_out(before) and after is not None and _affine_in(after):
                    vec = {k: vs.values[k] for k in _row_entries(vs, i - 1, c)}
                    _left(vs, i + 1, {(c, c): 1}, -1, vec, out=False)
                    vs.add("ReLU scaling", vec)
                if dead is not None and streams is not None and isinstance(before, Linear):
                    _blind_spots(vs, _row_entries(vs, i - 1, c), np.asarray(patterns[i])[:, c, :], streams[i - 1],
                                 before.bias)


def _row_entries(vs: _Vectors, block: int, c: int) -> list[int]:
    """Flat indices of row c of every output matrix and bias of ``block``."""
    mats, bias = _output_letters(vs.net.blocks[block])
    out = []
    for letter in mats + ([bias] if bias else []):
        for m in vs.mats(block, letter):
            out += [m.offset + c * m.cols + col for col in range(m.cols)]
    return out


def _dead(patterns: dict | None, block: int):
    """Per unit (row of the ReLU's input): negative on every input and token (None without patterns)."""
    if patterns is None or block not in patterns:
        return None
    signs = np.asarray(patterns[block])
    return (signs < 0).all(axis=(0, 2))


def _layernorm_shifts(vs: _Vectors) -> None:
    blocks = vs.net.blocks
    for i in range(1, len(blocks)):
        if not isinstance(blocks[i], LayerNorm) or not _affine_out(blocks[i - 1]):
            continue
        mats, bias = _output_letters(blocks[i - 1])
        for letter in mats:
            for m in vs.mats(i - 1, letter):
                for col in range(m.cols):
                    vs.add("LayerNorm shift", {m.offset + row * m.cols + col: Fraction(1) for row in range(m.rows)})
        if bias:
            for m in vs.mats(i - 1, bias):
                vs.add("LayerNorm shift", {m.offset + row: Fraction(1) for row in range(m.rows)})


def _layernorm_planes(vs: _Vectors) -> None:
    blocks = vs.net.blocks
    for i in range(len(blocks) - 1):
        ln, nxt = blocks[i], blocks[i + 1]
        if not isinstance(ln, LayerNorm) or not _affine_in(nxt):
            continue
        d = vs.net.widths[i]
        g = [vs.entry(vs.mats(i, "g")[0], r, 0) for r in range(d)] if ln.affine else [Fraction(1)] * d
        bg = [vs.entry(vs.mats(i, "bg")[0], r, 0) for r in range(d)] if ln.bias else [Fraction(0)] * d
        if any(x == 0 for x in g):
            continue
        w = [1 / x for x in g]
        offset = sum(a * b for a, b in zip(w, bg))
        if offset and not getattr(nxt, "bias", False):
            continue  # the plane is not through 0 and the next block has no bias to take the offset
        for letter in _input_letters(nxt):
            for m in vs.mats(i + 1, letter):
                bias = vs.where.get((i + 1, m.head, "b" + letter))
                for r in range(m.rows):
                    vec = {m.offset + r * m.cols + c: w[c] for c in range(d)}
                    if bias is not None:
                        vec[bias.offset + r] = -offset
                    vs.add("LayerNorm plane", vec)
        if i == 0 or not _affine_out(blocks[i - 1]):
            continue
        basis = [[Fraction(int(k == a) - int(k == d - 1)) for k in range(d)] for a in range(d - 1)]
        for a in range(d - 1):
            for b in range(a + 1, d - 1):
                u, v = basis[a], basis[b]
                A = {(r, c): u[r] * v[c] - v[r] * u[c] for r in range(d) for c in range(d)}
                A = {rc: x for rc, x in A.items() if x}
                vec: dict = {}
                _left(vs, i - 1, A, 1, vec, out=True)
                # after: -M G A G^-1 on each input matrix, + M G A G^-1 b_g on its bias
                GAG = {(r, c): g[r] * x / g[c] for (r, c), x in A.items()}
                _left(vs, i + 1, GAG, -1, vec, out=False)
                shift = [sum(GAG.get((r, c), 0) * bg[c] for c in range(d)) for r in range(d)]
                if any(shift):
                    for letter in _input_letters(nxt):
                        for m in vs.mats(i + 1, letter):
                            bias = vs.where.get((i + 1, m.head, "b" + letter))
                            if bias is None:
                                vec = {}
                                break
                            for row in range(m.rows):
                                k = bias.offset + row
                                vec[k] = vec.get(k, 0) + sum(vs.entry(m, row, c) * shift[c] for c in range(d))
                if vec:
                    vs.add("LayerNorm rotation", vec)


def kernel_vectors(net: Network, values, patterns: dict | None = None,
                   streams: list | None = None) -> list[tuple[str, np.ndarray]]:
    """(mechanism, vector of Fractions) for every exact kernel vector the mechanisms give at W (module
    docstring); ``patterns``: the ReLU signs on the inputs, for dead units, always-active units and blind
    spots; ``streams``: each block's input over QQ on those inputs, for blind spots."""
    vs = _Vectors(net, values)
    _junctions(vs)
    _relu_units(vs, patterns, streams)
    _layernorm_shifts(vs)
    _layernorm_planes(vs)
    return vs.dense()
