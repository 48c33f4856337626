"""Exact linear algebra over QQ for kernel vectors at a point (python-flint): row bases, null spaces
(solved mod p, lifted and checked over QQ), ranks; shared by the local and the tail kernels."""

from __future__ import annotations

from lightning_cas.core.primes import DEFAULT_PRIME

LOCAL_BUDGET = 400_000  # entries of a block's exact local Jacobian (rows x weights); larger blocks are skipped


# ---------------------------------------------------------------- linear algebra over QQ (python-flint)


def _mat(rows, cols: int):
    import flint

    return flint.fmpq_mat(len(rows), cols, [x for r in rows for x in r]) if rows else flint.fmpq_mat(0, cols)


def row_basis(rows, cols: int) -> list[list]:
    """A basis of the span of ``rows`` (lists of fmpq, length ``cols``)."""
    if not rows:
        return []
    R, rank = _mat(rows, cols).rref()
    return [[R[i, j] for j in range(cols)] for i in range(rank)]


def _integer_rows(rows):
    """Each row times the lcm of its denominators: the same span, integer entries (fmpz)."""
    import flint

    out = []
    for r in rows:
        q = flint.fmpz(1)
        for x in r:
            d = flint.fmpq(x).q
            q = q * d // q.gcd(d)
        out.append([(flint.fmpq(x) * q).p for x in r])
    return out


def nullspace(rows, cols: int, prime: int = DEFAULT_PRIME) -> list[list]:
    """Exact vectors v with r·v = 0 for every row r, one per free column: the pivots are found mod p, the
    pivot block solved over QQ (p-adic lifting, fast at large heights), and every vector checked exactly
    against all the rows; a vector that fails (p hid a pivot) is dropped, so each one returned is exact."""
    import flint

    if not rows:
        return _identity(cols)
    ints = _integer_rows(rows)
    red = flint.nmod_mat(len(ints), cols, [int(x % prime) for r in ints for x in r], prime)
    R, rank = red.rref()
    pivots = _pivots(R, rank)
    free = [c for c in range(cols) if c not in set(pivots)]
    if not free:
        return []
    if not rank:
        return [[flint.fmpq(int(i == f)) for i in range(cols)] for f in free]
    Rt, _ = red.transpose().rref()
    chosen = _pivots(Rt, rank)  # rank independent rows
    A = flint.fmpq_mat(rank, rank, [ints[i][c] for i in chosen for c in pivots])
    B = flint.fmpq_mat(rank, len(free), [-ints[i][c] for i in chosen for c in free])
    X = A.solve(B, "dixon")  # the algorithm (positional only in the stubs)
    V = flint.fmpq_mat(cols, len(free))
    for k, f in enumerate(free):
        V[f, k] = 1
        for pos, c in enumerate(pivots):
            V[c, k] = X[pos, k]
    check = flint.fmpq_mat(len(ints), cols, [x for r in ints for x in r]) * V
    good = [k for k in range(len(free)) if all(check[i, k] == 0 for i in range(len(ints)))]
    return [[V[i, k] for i in range(cols)] for k in good]


def _pivots(R, rank: int) -> list[int]:
    out, col = [], 0
    for i in range(rank):
        while R[i, col] == 0:
            col += 1
        out.append(col)
    return out


def rank_qq(rows, cols: int, prime: int = DEFAULT_PRIME) -> int:
    """A lower bound on the rank over QQ of exact rows: the rank mod p of the rows cleared of denominators
    (a nonzero minor mod p is nonzero over QQ)."""
    import flint

    if not rows:
        return 0
    ints = _integer_rows(rows)  # integer rows: any prime reduces them, and no minor grows by it
    return flint.nmod_mat(len(ints), cols, [int(x % prime) for r in ints for x in r], prime).rank()


def _identity(n: int) -> list[list]:
    import flint

    return [[flint.fmpq(int(i == j)) for j in range(n)] for i in range(n)]


def _rows(M) -> list[list]:
    return [list(r) for r in M]


def _unit(P: int, entries) -> list:
    import flint

    v = [flint.fmpq(0)] * P
    for pos, x in entries:
        v[pos] = x
    return v
