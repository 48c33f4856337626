"""The pieces every block's forward rule is written with (``core.forward`` runs the rules; each kind's
module registers its own with ``forward_rule``): tangent products in closed form, residual groups, activations.

Shapes: a stream Y is (N, width, t), its tangents (N, width, t, P'); a rule returns (out, tangents or None).

Directional derivatives (``directions``): the tangents carry b directions V (P x b) instead of one column
per weight, so a pass costs b forward passes and no P-wide array exists (the black-box rank's J V). The
rules do not change: the closed forms below (``outer``, ``delta``, ``diagonal``, ``identity``) each stand
for the columns of one weight matrix, in the canonical order, and in this mode they return those columns
already multiplied by that matrix's rows of V (taken in turn), and ``join`` adds instead of concatenating.
"""

from __future__ import annotations

import contextlib
from contextvars import ContextVar
from typing import Callable

import numpy as np

FORWARD: dict[type, Callable] = {}  # block class -> its forward rule (ar, block, heads, Y, dY, tangents, site)


def forward_rule(cls: type):
    """Register the decorated function as the forward rule of block class ``cls``."""

    def put(rule: Callable) -> Callable:
        FORWARD[cls] = rule
        return rule

    return put


class Kink(ValueError):
    """A ReLU input exactly 0: the map has no derivative there (block, input n, row, token; 0-based)."""

    def __init__(self, block: int, n: int, row: int, token: int):
        super().__init__(
            f"input {n} is on a kink of block {block}'s ReLU (row {row}, token {token}: its input is "
            "exactly 0, so the map has no derivative there)"
        )
        self.block, self.n, self.row, self.token = block, n, row, token

    def __reduce__(self):  # a deadline's worker process sends it back pickled: rebuild it from its fields
        return (Kink, (self.block, self.n, self.row, self.token))


class _Directions:
    """The rows of V (P x b, in the arithmetic ``ar``) not yet taken by a closed form; ``cursor`` is set to
    a block's first weight before it runs."""

    def __init__(self, ar, V):
        self.ar, self.V, self.cursor = ar, V, 0

    def take(self, rows: int, cols: int):
        """The next weight matrix's directions as (b, rows, cols)."""
        part = self.V[self.cursor : self.cursor + rows * cols]
        self.cursor += rows * cols
        return np.ascontiguousarray(part.T).reshape(-1, rows, cols)


_DIRECTIONS: ContextVar[_Directions | None] = ContextVar("directions", default=None)


@contextlib.contextmanager
def directions(ar, V):
    """Within: tangents are derivatives along the columns of V (module docstring); yields the state whose
    ``cursor`` the forward pass sets to the offset of the block about to run."""
    state = _Directions(ar, V)
    token = _DIRECTIONS.set(state)
    try:
        yield state
    finally:
        _DIRECTIONS.reset(token)


def _contract(ar, G, VF):
    """[n, e, j, k] = sum_r G[n, e, r, j] VF[n, k, r, j] (G may broadcast over n and j)."""
    n, t = VF.shape[0], VF.shape[-1]
    G = np.broadcast_to(G, (n, G.shape[1], G.shape[2], t))
    out = ar.matmul(np.ascontiguousarray(G.transpose(0, 3, 1, 2)), np.ascontiguousarray(VF.transpose(0, 3, 2, 1)))
    return np.ascontiguousarray(out.transpose(0, 2, 1, 3))  # (n, t, e, k) -> (n, e, t, k)


def transpose(M):
    return np.swapaxes(M, -1, -2)


CARRY = "carry"  # the tangents mode of a block that pushes earlier tangents through without its own


def left(ar, M, T):
    """M @ T on the feature axis: M (r, c) or (N, r, c), T (N, c, t, P) -> (N, r, t, P)."""
    n, c, t, p = T.shape
    return ar.matmul(M, T.reshape(n, c, t * p)).reshape(n, -1, t, p)


def right(ar, T, A):
    """T @ A on the token axis: T (N, r, t, P), A (N, t, t') -> (N, r, t', P)."""
    out = ar.matmul(np.ascontiguousarray(transpose(T)), A[:, None])  # (N, r, P, t')
    return np.ascontiguousarray(transpose(out))


def delta(ar, F, e: int):
    """[n, e', j, r, c] = [e' = r] F[n, c, j]: the tangent of a matrix that multiplies from the left."""
    n, c, t = F.shape
    dirs = _DIRECTIONS.get()
    if dirs is not None:
        VF = ar.matmul(dirs.take(e, c)[None], F[:, None])  # (n, b, e, t)
        return np.ascontiguousarray(VF.transpose(0, 2, 3, 1))
    out = ar.zeros((n, e, t, e, c))
    idx = np.arange(e)
    out[:, idx, :, idx, :] = transpose(F)  # advanced indices first: (e, n, t, c) <- (n, t, c)
    return out.reshape(n, e, t, e * c)


def outer(ar, G, F, swap: bool = False):
    """The closed-form tangent [n, e, j, (r, c)] = G[n, e, r, j] F[n, c, j] as (N, e, t, r * c); with
    ``swap``, G is indexed by the column and F by the row: G[n, e, c, j] F[n, r, j]."""
    dirs = _DIRECTIONS.get()
    if dirs is not None:
        g, f = G.shape[2], F.shape[1]
        Vm = np.ascontiguousarray(np.swapaxes(dirs.take(f, g), 1, 2)) if swap else dirs.take(g, f)
        return _contract(ar, G, ar.matmul(Vm[None], F[:, None]))  # Vm F: (n, b, g, t)
    out = ar.mul(np.swapaxes(G, 2, 3)[..., None], transpose(F)[:, None, :, None, :])  # (n, e, t, g, f)
    if swap:
        out = np.swapaxes(out, -1, -2)
    n, e, t = out.shape[:3]
    return np.ascontiguousarray(out).reshape(n, e, t, -1)


def join(parts):
    """A block's tangents: the carried ones, then its own weights' (along directions: their sum)."""
    parts = [p for p in parts if p is not None]
    if len(parts) == 1:
        return parts[0]
    dirs = _DIRECTIONS.get()
    if dirs is None:
        return np.concatenate(parts, axis=-1)
    out = np.array(parts[0], copy=True)  # the first may be a stream's tangents a residual group still holds
    for p in parts[1:]:
        out = dirs.ar.add(out, p)
    return out


def affine(ar, M, Y, b):
    """M Y (+ b broadcast over the tokens)."""
    out = ar.matmul(M, Y)
    return out if b is None else ar.add(out, b)


def ones_row(ar, n: int, t: int):
    return ar.ones((n, 1, t))


def add_skip(ar, out, dout, Y, dY):
    """A residual group's output: its blocks' ``out`` plus its input ``Y``; the input's tangents ``dY`` (the
    weights before the group, carried) add to the first columns of ``dout``, the group's own weights follow."""
    out = ar.add(out, Y)
    if dY is None:
        return out, dout
    if dout is None:
        raise ValueError("a residual group carried no tangents of its input")
    k = dY.shape[-1]
    if k == dout.shape[-1]:
        return out, ar.add(dout, dY)
    return out, np.concatenate([ar.add(dout[..., :k], dY), dout[..., k:]], axis=-1)


def relu_signs(ar, H, site):
    """The signs of a ReLU's input: from ``patterns`` when an exact pass put them there, else decided by the
    arithmetic (and recorded); an exact 0 is a ``Kink``."""
    block, patterns = site if site is not None else (0, None)
    if patterns is not None and block in patterns:
        signs = patterns[block]
        if signs.shape != H.shape:
            raise ValueError(f"the ReLU pattern of block {block} has shape {signs.shape}, its input {H.shape}")
        return signs
    signs = ar.signs(H)
    zero = np.argwhere(signs == 0)
    if len(zero):
        raise Kink(block, *map(int, zero[0]))
    if patterns is not None:
        patterns[block] = signs
    return signs


def activate(ar, function: str, H, site, derivative: bool):
    """(f(H), f'(H) or None) for f = relu, gelu, tanh."""
    if function == "relu":
        mask = ar.array((relu_signs(ar, H, site) > 0).astype(np.int64))
        return ar.mul(H, mask), (mask if derivative else None)
    F, dF = ar.analytic(function, H)
    return F, (dF if derivative else None)


def diagonal(ar, F):
    """[n, e, j, r] = [e = r] F[n, r, j]: the tangent of a gain g in g o F."""
    n, d, t = F.shape
    dirs = _DIRECTIONS.get()
    if dirs is not None:
        v = dirs.take(d, 1)[:, :, 0]  # (b, d)
        return ar.mul(F[..., None], np.ascontiguousarray(v.T)[None, :, None, :])
    out = ar.zeros((n, d, t, d))
    idx = np.arange(d)
    out[:, idx, :, idx] = np.swapaxes(F, 0, 1)  # advanced indices first: (d, n, t) <- (n, d, t)
    return out


def identity(ar, n: int, d: int, t: int):
    """[n, e, j, (r, c)] = [e = r][j = c]: the tangent of a matrix added to the stream."""
    dirs = _DIRECTIONS.get()
    if dirs is not None:
        return np.ascontiguousarray(
            np.broadcast_to(dirs.take(d, t).transpose(1, 2, 0)[None], (n, d, t, dirs.V.shape[1]))
        )
    out = ar.zeros((n, d, t, d, t))
    rows, cols = np.meshgrid(np.arange(d), np.arange(t), indexing="ij")
    out[:, rows, cols, rows, cols] = ar.ones((n, d, t))
    return out.reshape(n, d, t, d * t)
