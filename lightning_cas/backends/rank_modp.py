"""Exact linear algebra mod a prime p < 2^23 on float64 BLAS (the FFLAS-FFPACK technique).

Residues are stored centred, |x| <= H = p // 2 + 3 (the reduction below may land one or two
past p / 2), as float64. Every integer below 2^53 is exact in float64, so a dot product of k
residues is exact while k * H^2 + 2H <= 2^53: matrix products are cut along the inner dimension
into chunks that short (511 for p < 2^23) and reduced between chunks ("delayed reduction").
That keeps the whole elimination on numpy's BLAS matrix product; nothing is converted to Python.

The rank routine is a streaming reduced row echelon form: blocks of rows are reduced against the
rows kept so far (one matrix product), echelonized by recursive halving (matrix products down to
a few rows), and merged. Only the non-pivot columns of the kept rows are stored (their pivot
columns are the identity), so the memory peak is about rank * (columns - rank) <= columns^2 / 4
entries plus one block, however many rows are streamed through.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools

import numpy as np

MODULUS_LIMIT = 2 ** 26  # below this, a reduction still covers 7 products (2^26 - 5)
EXACT = 2 ** 53  # float64 represents every integer of absolute value up to this
BLAS_THREADS = 1  # see blas_threads
BASE_ROWS = 8  # below this many rows a block is eliminated row by row
REDUCE_PIECE = 1 << 14  # entries reduced per step of a large array (128 KiB, stays in cache)


@functools.lru_cache(maxsize=1)
def _openblas():
    """(get, set) of the OpenBLAS numpy loaded, or None (another BLAS, or not found)."""
    try:
        with open("/proc/self/maps") as fh:
            paths = {line.split()[-1] for line in fh if "openblas" in line.lower() and "/" in line}
    except OSError:
        return None
    for path in sorted(paths):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for suffix in ("64_", "_64_", ""):
            for prefix in ("scipy_openblas", "openblas"):
                get = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
                put = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
                if get is not None and put is not None:
                    get.restype, put.argtypes = ctypes.c_int, [ctypes.c_int]
                    return get, put
    return None


@contextlib.contextmanager
def blas_threads(n: int = BLAS_THREADS):
    """Run numpy's matrix products on n OpenBLAS threads, then restore the previous count.

    Measured on the 2-core shared machine this project runs on: with two threads the streaming
    elimination ran 3-12 times slower whenever other processes were busy (OpenBLAS threads spin
    while waiting), and most of its products are too thin to gain from a second thread anyway.
    Without OpenBLAS (or if its symbols are not found) this does nothing.
    """
    api = _openblas()
    if api is None:
        yield
        return
    get, put = api
    before = get()
    put(n)
    try:
        yield
    finally:
        put(before)


def check_modulus(p: int) -> int:
    """The modulus must be below MODULUS_LIMIT (primality is the caller's concern)."""
    if not 3 <= p < MODULUS_LIMIT:
        raise ValueError(f"rank_modp needs 3 <= p < 2^26, got {p}")
    return p


def bound(p: int) -> int:
    """H: every stored residue satisfies |x| <= H."""
    return p // 2 + 3


def chunk(p: int) -> int:
    """Longest inner dimension of a product whose every partial sum stays exact in float64."""
    h = bound(p)
    return (EXACT - 2 * h) // (h * h)


def reduce(x: np.ndarray, p: int) -> np.ndarray:
    """Centre x (integers of absolute value below 2^53) mod p in place; returns x.

    q = rint(x / p) is the nearest integer up to float rounding (error < 2 / p), so x - q p is
    an exact integer of absolute value at most H. Large arrays are done in cache-sized pieces
    through one small buffer: four passes over main memory and a fresh temporary (page faults)
    cost twice as much (measured).
    """
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
        v = flat[s:s + REDUCE_PIECE]
        b = buf[:v.size]
        np.multiply(v, inv, out=b)
        np.rint(b, out=b)
        b *= p
        v -= b
    return x


def centred(values, p: int) -> np.ndarray:
    """Integers (any representatives) -> centred float64 residues."""
    a = np.asarray(values, dtype=np.int64) % p
    return np.where(a > p // 2, a - p, a).astype(np.float64)


def residues(x: np.ndarray, p: int) -> np.ndarray:
    """Centred float64 residues -> int64 in [0, p)."""
    return np.asarray(x, dtype=np.int64) % p


def matmul(A: np.ndarray, B: np.ndarray, p: int) -> np.ndarray:
    """A @ B mod p (numpy broadcasting over leading axes), centred."""
    k, K = chunk(p), A.shape[-1]
    if K <= k:
        return reduce(np.matmul(A, B), p)
    C = reduce(np.matmul(A[..., :k], B[..., :k, :]), p)
    for s in range(k, K, k):
        C += np.matmul(A[..., s:s + k], B[..., s:s + k, :])
        reduce(C, p)
    return C


def submul(C: np.ndarray, A: np.ndarray, B: np.ndarray, p: int) -> np.ndarray:
    """C - A @ B mod p, computed in C's storage; returns C."""
    k, K = chunk(p), A.shape[-1]
    for s in range(0, K, k):
        C -= A[..., s:s + k] @ B[s:s + k]
        reduce(C, p)
    return C


def columns(A: np.ndarray, idx) -> np.ndarray:
    """A[:, idx] as a C-ordered copy (plain fancy indexing returns Fortran order, which makes
    every later row operation strided and several times slower)."""
    return np.take(A, idx, axis=1)


class ModField:
    """GF(p) arithmetic on centred float64 residues, the interface ``model.jacobian`` expects."""

    def __init__(self, prime: int):
        self.prime = check_modulus(prime)

    def matmul(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        return matmul(A, B, self.prime)

    def add(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        """A + B, computed in A's storage when it can (``model.jacobian`` passes fresh arrays)."""
        if A.shape == np.broadcast_shapes(A.shape, B.shape) and A.flags.writeable:
            A += B
            return reduce(A, self.prime)
        return reduce(A + B, self.prime)

    def mul(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        return reduce(A * B, self.prime)

    def random(self, rng: np.random.Generator, shape) -> np.ndarray:
        """The same draws as ``model.Field(p).random`` (uniform in [0, p)), centred."""
        return centred(rng.integers(0, self.prime, size=shape, dtype=np.int64), self.prime)


def _inverse(v: float, p: int) -> float:
    inv = pow(int(v) % p, -1, p)
    return float(inv - p if inv > p // 2 else inv)


def _base(A: np.ndarray, p: int) -> tuple[np.ndarray, list[int]]:
    """Gauss-Jordan on a few rows (in place): (pivot rows in RREF, their pivot columns)."""
    keep, piv = [], []
    for i in range(A.shape[0]):
        nz = np.flatnonzero(A[i])
        if not nz.size:
            continue
        c = int(nz[0])
        A[i] *= _inverse(A[i, c], p)
        reduce(A[i], p)
        A[i, c] = 1.0
        col = A[:, c].copy()
        col[i] = 0.0
        if col.any():
            A -= np.outer(col, A[i])
            reduce(A, p)
        keep.append(i)
        piv.append(c)
    return A[keep], piv


def echelon(A: np.ndarray, p: int) -> tuple[np.ndarray, list[int]]:
    """RREF of the rows of A (centred residues, overwritten): (k x n rows, k pivot columns).

    The returned rows have the identity at their pivot columns. Recursive halving: the second
    half is reduced by the first half's rows with one matrix product, and the first half's rows
    are cleared at the second half's pivots with another.
    """
    m = A.shape[0]
    if m <= BASE_ROWS:
        return _base(A, p)
    E1, p1 = echelon(A[: m // 2], p)
    A2 = A[m // 2:]
    if p1:
        A2 = submul(A2, columns(A2, p1), E1, p)
    E2, p2 = echelon(A2, p)
    if not p2:
        return E1, p1
    if p1:
        E1 = submul(E1, columns(E1, p2), E2, p)
    return np.vstack([E1, E2]), p1 + p2


class RowEchelon:
    """Rows streamed in blocks; keeps the RREF of everything seen, stored on non-pivot columns.

    Columns that become pivots stay in storage (as the identity pattern they hold in an RREF,
    which reduces every new row to zero there) until they are a quarter of it; only then is the
    storage compacted. Rows go into a buffer that grows by doubling. Both avoid copying the
    whole echelon form at every block, so its memory peak is one copy, not three (the time at
    6144 columns was the same within the noise of the loaded machine, 7-8 s CPU per prime).
    """

    def __init__(self, columns: int, p: int):
        self.p = check_modulus(p)
        self.columns = columns
        self.pivots = np.zeros(0, dtype=np.intp)  # pivot column of each kept row
        self.stored = np.arange(columns)  # the columns kept in storage
        self.alive = np.ones(columns, dtype=bool)  # stored column is not a pivot
        self._buf = np.zeros((0, columns))  # kept rows on the stored columns, capacity rows

    @property
    def rank(self) -> int:
        return len(self.pivots)

    @property
    def F(self) -> np.ndarray:
        return self._buf[:self.rank]

    def add(self, A: np.ndarray) -> int:
        """Add a block of rows (centred residues, any float64 array of shape (m, columns));
        returns how much the rank grew."""
        A = np.asarray(A, dtype=np.float64)
        if A.ndim != 2 or A.shape[1] != self.columns:
            raise ValueError(f"expected rows of length {self.columns}, got shape {A.shape}")
        if self.rank == self.columns or not A.shape[0]:
            return 0
        R = columns(A, self.stored)
        if self.rank:
            R = submul(R, columns(A, self.pivots), self.F, self.p)
        if not R.any():
            return 0
        E, local = echelon(R, self.p)  # zero on pivot columns, so no old pivot is chosen again
        if not local:
            return 0
        if self.rank:
            submul(self.F, columns(self.F, local), E, self.p)
        r, k = self.rank, len(local)
        if r + k > self._buf.shape[0]:
            grown = np.empty((min(self.columns, max(2 * (r + k), 64)), self.stored.size))
            grown[:r] = self.F
            self._buf = grown
        self._buf[r:r + k] = E
        self.pivots = np.concatenate([self.pivots, self.stored[local]])
        self.alive[local] = False
        if (~self.alive).sum() * 4 > self.stored.size:
            keep = np.flatnonzero(self.alive)
            self._buf = columns(self._buf[:self.rank], keep)
            self.stored, self.alive = self.stored[keep], np.ones(keep.size, dtype=bool)
        return k

    def basis(self) -> np.ndarray:
        """The kept rows in full (rank x columns), identity at the pivots: for checks."""
        B = np.zeros((self.rank, self.columns))
        B[:, self.stored] = self.F
        B[np.arange(self.rank), self.pivots] = 1.0
        return B


def rank(A: np.ndarray, p: int, block: int = 512) -> int:
    """Rank mod p of an integer matrix (any representatives), streamed in row blocks."""
    A = np.asarray(A)
    if A.ndim != 2:
        raise ValueError("rank needs a matrix")
    ech = RowEchelon(A.shape[1], p)
    for s in range(0, A.shape[0], block):
        ech.add(centred(A[s:s + block], p))
    return ech.rank
