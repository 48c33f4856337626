"""Exact rank mod a prime p < 2^26 on float64 BLAS (the FFLAS-FFPACK technique).

The residues and their products are those of ``core.gfp`` (centred float64, delayed reduction), so
the whole elimination stays on numpy's BLAS matrix product; nothing is converted to Python.

The rank routine is a streaming row echelon form: blocks of rows are reduced against the rows kept
so far (a matrix product per kept block), echelonized by recursive halving (matrix products down
to a few rows), and kept as a new block; blocks are merged into the reduced form as they grow.
Only the non-pivot columns of the kept rows are stored (their pivot columns are the identity), so
the memory peak is about rank * (columns - rank) <= columns^2 / 4 entries (up to a third more between
two compactions) plus one block, however many rows are streamed through.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools

import numpy as np

from lightning_cas.core.gfp import centred, check_modulus, inverse, reduce, submul

BLAS_THREADS = 1  # see blas_threads
BASE_ROWS = 8  # below this many rows a block is eliminated row by row


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


def columns(A: np.ndarray, idx) -> np.ndarray:
    """A[:, idx] as a C-ordered copy (plain fancy indexing returns Fortran order, which makes
    every later row operation strided and several times slower)."""
    return np.take(A, idx, axis=1)


def _base(A: np.ndarray, p: int) -> tuple[np.ndarray, list[int]]:
    """Gauss-Jordan on a few rows (in place): (pivot rows in RREF, their pivot columns)."""
    keep, piv = [], []
    for i in range(A.shape[0]):
        nz = np.flatnonzero(A[i])
        if not nz.size:
            continue
        c = int(nz[0])
        A[i] *= inverse(A[i, c], p)
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
    A2 = A[m // 2 :]
    if p1:
        A2 = submul(A2, columns(A2, p1), E1, p)
    E2, p2 = echelon(A2, p)
    if not p2:
        return E1, p1
    if p1:
        E1 = submul(E1, columns(E1, p2), E2, p)
    return np.vstack([E1, E2]), p1 + p2


class RowEchelon:
    """Rows streamed in blocks; keeps an echelon form of everything seen, stored on non-pivot columns.

    The kept rows are a few row blocks. Each block is reduced at its own pivots (the identity there)
    and zero at the pivots of the blocks before it, but not yet cleared at the pivots of the blocks
    after it: a new row is reduced block by block, in order, so the kept rows are not rewritten each
    time a block comes in (that rank-k update of all of them, thin and memory-bound, was a third of a
    6144-weight rank). Blocks of similar size are merged (the earlier one cleared at the later one's
    pivots, in place), so there are few of them and their products are thick; all of them are merged
    into one, the reduced row echelon form, before the storage is compacted and when ``basis`` is asked.

    Columns that become pivots stay in storage until they are a quarter of it; only then is the
    storage compacted. Rows go into a buffer that grows by doubling, and merges work in place: the
    memory peak is one copy of the kept rows.
    """

    def __init__(self, columns: int, p: int, dtype=np.float64):
        """``dtype`` complex128: rows over GF(p^2) = GF(p)[i] (``core.gfp``), p = 3 mod 4."""
        self.p = check_modulus(p)
        self.dtype = np.dtype(dtype)
        self.columns = columns
        self.pivots = np.zeros(0, dtype=np.intp)  # pivot column of each kept row
        self.stored = np.arange(columns)  # the columns kept in storage
        self.alive = np.ones(columns, dtype=bool)  # stored column is not a pivot
        self._where = np.arange(columns)  # position in storage of each column (-1: compacted away)
        self._buf = np.zeros((0, columns), dtype=self.dtype)  # kept rows on the stored columns, capacity rows
        self._blocks: list[tuple[int, int]] = []  # row ranges of the blocks, in order

    @property
    def rank(self) -> int:
        return len(self.pivots)

    def add(self, A: np.ndarray) -> int:
        """Add a block of rows (centred residues, any float64 array of shape (m, columns));
        returns how much the rank grew."""
        A = np.asarray(A, dtype=self.dtype)
        if A.ndim != 2 or A.shape[1] != self.columns:
            raise ValueError(f"expected rows of length {self.columns}, got shape {A.shape}")
        if self.rank == self.columns or not A.shape[0]:
            return 0
        R = columns(A, self.stored)
        for j, (start, end) in enumerate(self._blocks):
            # the first block's multipliers are A's own entries at its pivots (some may be compacted
            # away); a later block's are R's, once the blocks before it have reduced R
            M = columns(A, self.pivots[start:end]) if j == 0 else columns(R, self._where[self.pivots[start:end]])
            if M.any():
                R = submul(R, M, self._buf[start:end], self.p)
        if not R.any():
            return 0
        E, local = echelon(R, self.p)  # zero on pivot columns, so no old pivot is chosen again
        if not local:
            return 0
        r, k = self.rank, len(local)
        if r + k > self._buf.shape[0]:
            grown = np.empty((min(self.columns, max(2 * (r + k), 64)), self.stored.size), dtype=self.dtype)
            grown[:r] = self._buf[:r]
            self._buf = grown
        self._buf[r : r + k] = E
        self.pivots = np.concatenate([self.pivots, self.stored[local]])
        self.alive[local] = False
        self._blocks.append((r, r + k))
        while len(self._blocks) >= 2 and self._size(-2) <= 2 * self._size(-1):
            self._merge_last_two()
        if (~self.alive).sum() * 4 > self.stored.size:
            self._merge_all()
            keep = np.flatnonzero(self.alive)
            self._buf = columns(self._buf[: self.rank], keep)
            self.stored, self.alive = self.stored[keep], np.ones(keep.size, dtype=bool)
            self._where = np.full(self.columns, -1)
            self._where[self.stored] = np.arange(self.stored.size)
        return k

    def _size(self, j: int) -> int:
        start, end = self._blocks[j]
        return end - start

    def _merge_last_two(self) -> None:
        """The earlier block cleared at the later one's pivots (in place): one block, reduced at both."""
        (a0, a1), (b0, b1) = self._blocks[-2], self._blocks[-1]
        Fa = self._buf[a0:a1]
        M = columns(Fa, self._where[self.pivots[b0:b1]])
        if M.any():
            submul(Fa, M, self._buf[b0:b1], self.p)
        self._blocks[-2:] = [(a0, b1)]

    def _merge_all(self) -> None:
        while len(self._blocks) >= 2:
            self._merge_last_two()

    def basis(self) -> np.ndarray:
        """The kept rows in full (rank x columns), identity at the pivots (the reduced row echelon form)."""
        self._merge_all()
        B = np.zeros((self.rank, self.columns), dtype=self.dtype)
        B[:, self.stored] = self._buf[: self.rank]
        B[np.arange(self.rank), self.pivots] = 1.0
        return B


def rank(A: np.ndarray, p: int, block: int = 512) -> int:
    """Rank mod p of an integer matrix (any representatives), streamed in row blocks."""
    A = np.asarray(A)
    if A.ndim != 2:
        raise ValueError("rank needs a matrix")
    ech = RowEchelon(A.shape[1], p)
    for s in range(0, A.shape[0], block):
        ech.add(centred(A[s : s + block], p))
    return ech.rank
