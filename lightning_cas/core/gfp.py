"""GF(p) on float64 BLAS: centred residues and their exact products (the FFLAS-FFPACK technique).

Residues are stored centred, |x| <= H = p // 2 + 3 (the reduction below may land one or two past
p / 2), as float64. Every integer below 2^53 is exact in float64, so a dot product of k residues is
exact while k * H^2 + 2H <= 2^53: matrix products are cut along the inner dimension into chunks
that short (127 for p < 2^24) and reduced between chunks ("delayed reduction"). The forward pass
of a network (``core.forward`` on ``core.arithmetic.ModP``) and the exact rank
(``backends.rank_modp``) both run on these kernels.

GF(p^2) for p = 3 mod 4 is GF(p)[i] with i^2 = -1 (-1 is not a square mod such a p), so its elements
are complex128 numbers with centred integer parts and numpy's complex products are its products.
A complex dot product of k terms sums 2k real products per part, so complex chunks are half the real
ones (numpy calls zgemm, which forms each part from the four real products; OpenBLAS keeps the 3M
method, whose (a + b)(c + d) would need a quarter, in a routine of its own that numpy never calls).
"""

from __future__ import annotations

import numpy as np

MODULUS_LIMIT = 2**26  # below this, a reduction still covers 7 products (2^26 - 5)
EXACT = 2**53  # float64 represents every integer of absolute value up to this
REDUCE_PIECE = 1 << 14  # entries reduced per step of a large array (128 KiB, stays in cache)


def check_modulus(p: int) -> int:
    """The modulus must be below MODULUS_LIMIT (primality is the caller's concern)."""
    if not 3 <= p < MODULUS_LIMIT:
        raise ValueError(f"rank_modp needs 3 <= p < 2^26, got {p}")
    return p


def bound(p: int) -> int:
    """H: every stored residue satisfies |x| <= H."""
    return p // 2 + 3


def chunk(p: int, complex_: bool = False) -> int:
    """Longest inner dimension of a product whose every partial sum stays exact in float64 (complex:
    GF(p^2), half, module docstring)."""
    h = bound(p)
    k = (EXACT - 2 * h) // (h * h)
    return k // 2 if complex_ else k


def reduce(x: np.ndarray, p: int) -> np.ndarray:
    """Centre x (integers of absolute value below 2^53) mod p in place; returns x.

    q = rint(x / p) is the nearest integer up to float rounding (error < 2 / p), so x - q p is
    an exact integer of absolute value at most H. Large arrays are done in cache-sized pieces
    through one small buffer: four passes over main memory and a fresh temporary (page faults)
    cost twice as much (measured).
    """
    if np.iscomplexobj(x):
        if x.flags.c_contiguous:
            reduce(x.view(np.float64), p)  # the interleaved real and imaginary parts
        else:
            reduce(x.real, p)
            reduce(x.imag, p)
        return x
    inv = 1.0 / p
    if x.size <= REDUCE_PIECE or not x.flags.c_contiguous:
        q = np.multiply(x, inv)
        np.rint(q, out=q)
        q *= p
        x -= q
        return x
    flat = x.reshape(-1)
    buf = np.empty(REDUCE_PIECE)
    for s in range(0, flat.size, REDUCE_PIECE):
        v = flat[s : s + REDUCE_PIECE]
        b = buf[: v.size]
        np.multiply(v, inv, out=b)
        np.rint(b, out=b)
        b *= p
        v -= b
    return x


def inverse(v, p: int):
    """1 / v for a nonzero centred residue, centred; over GF(p^2) (complex v) conj(v) / (a^2 + b^2), the norm
    being nonzero mod p for p = 3 mod 4."""
    if isinstance(v, complex | np.complexfloating):
        a, b = int(v.real) % p, int(v.imag) % p
        n = pow((a * a + b * b) % p, -1, p)
        re, im = a * n % p, -b * n % p
        return complex(re - p if re > p // 2 else re, im - p if im > p // 2 else im)
    inv = pow(int(v) % p, -1, p)
    return float(inv - p if inv > p // 2 else inv)


def centred(values, p: int) -> np.ndarray:
    """Integers (any representatives) -> centred float64 residues."""
    a = np.asarray(values, dtype=np.int64) % p
    return np.where(a > p // 2, a - p, a).astype(np.float64)


def residues(x: np.ndarray, p: int) -> np.ndarray:
    """Centred float64 residues -> int64 in [0, p)."""
    return np.asarray(x, dtype=np.int64) % p


def matmul(A: np.ndarray, B: np.ndarray, p: int) -> np.ndarray:
    """A @ B mod p (numpy broadcasting over leading axes), centred."""
    k, K = chunk(p, np.iscomplexobj(A) or np.iscomplexobj(B)), A.shape[-1]
    if K <= k:
        return reduce(np.matmul(A, B), p)
    C = reduce(np.matmul(A[..., :k], B[..., :k, :]), p)
    for s in range(k, K, k):
        C += np.matmul(A[..., s : s + k], B[..., s : s + k, :])
        reduce(C, p)
    return C


def submul(C: np.ndarray, A: np.ndarray, B: np.ndarray, p: int) -> np.ndarray:
    """C - A @ B mod p, computed in C's storage; returns C."""
    k, K = chunk(p, np.iscomplexobj(A) or np.iscomplexobj(B)), A.shape[-1]
    for s in range(0, K, k):
        C -= A[..., s : s + k] @ B[s : s + k]
        reduce(C, p)
    return C
