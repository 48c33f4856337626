"""The float64 exact rank mod p against python-flint, the float64 mod-p Jacobian against the int64
one and against exact derivatives (multi-head included), and the modp engine against the old
route (int64 Jacobian, 2P + 8 rows, flint rank) and the theory."""

from fractions import Fraction

import flint
import numpy as np
import pytest

from lightning_cas import Architecture, dimension
from lightning_cas.backends import modp
from lightning_cas.core import gfp, primes, rank_modp
from lightning_cas.core.arithmetic import ModP
from lightning_cas.core.theory import predict_dimension
from lightning_cas.errors import InputError, LightningError, TooLargeError
from tests.support import Field, jacobian

LARGEST = primes.previous_prime(gfp.MODULUS_LIMIT)  # 2^26 - 5: 8 products per reduction
PRIMES = [3, 5, 65521, primes.DEFAULT_PRIME, LARGEST]


def flint_rank(A: np.ndarray, p: int) -> int:
    A = np.asarray(A, dtype=np.int64) % p
    if 0 in A.shape:
        return 0
    return flint.nmod_mat(A.shape[0], A.shape[1], A.reshape(-1).tolist(), p).rank()


def known_rank(rng, m, n, r, p, entries=None):
    """An m x n matrix of rank <= r (= r over GF(p) for these sizes, checked by flint)."""
    L = rng.integers(0, p, (m, r), dtype=np.int64)
    R = rng.integers(0, p, (r, n), dtype=np.int64) if entries is None else rng.choice(entries, (r, n))
    return Field(p).matmul(L, R.astype(np.int64))  # int64 arithmetic, independent of the float route


@pytest.mark.parametrize("p", PRIMES)
@pytest.mark.parametrize(
    "m,n,r",
    [
        (1, 1, 1),
        (1, 1, 0),
        (0, 5, 0),
        (5, 0, 0),
        (1, 9, 1),
        (9, 1, 1),
        (7, 7, 7),
        (40, 12, 12),
        (12, 40, 12),
        (60, 60, 23),
        (130, 90, 71),
        (200, 300, 140),
    ],
)
def test_rank_matches_flint_on_matrices_of_known_rank(p, m, n, r):
    rng = np.random.default_rng(m * 1000 + n + r + p % 97)
    A = known_rank(rng, m, n, r, p) if r else np.zeros((m, n), dtype=np.int64)
    expected = flint_rank(A, p)
    assert expected <= r
    for block in (3, 64, 512):
        assert rank_modp.rank(A, p, block=block) == expected


@pytest.mark.parametrize("p", PRIMES)
def test_edge_values_zero_and_p_minus_one(p):
    """Entries only 0 and p - 1 (-1 centred), at the bound of every partial sum: long products
    (inner dimension far above the reduction chunk) must still be exact."""
    rng = np.random.default_rng(p % 1009)
    for m, n, r in [(300, 300, 300), (300, 280, 150), (50, 700, 40)]:
        A = known_rank(rng, m, n, r, p, entries=[0, p - 1])
        A[0] = p - 1  # a full row of p - 1
        A[:, -1] = 0  # a zero column
        assert rank_modp.rank(A, p) == flint_rank(A, p)
    full = np.full((200, 200), p - 1, dtype=np.int64)
    assert rank_modp.rank(full, p) == 1 == flint_rank(full, p)
    assert rank_modp.rank(np.zeros((4, 6), dtype=np.int64), p) == 0


def test_products_are_exact_at_the_largest_residues():
    """H x H summed over a whole chunk is the worst case of the exactness argument."""
    for p in PRIMES:
        h = gfp.bound(p)
        k = gfp.chunk(p)
        assert k * h * h + 2 * h <= 2**53 and k >= 1
        K = min(5 * k + 3, 5000)  # several chunks wherever a chunk is shorter than 1000
        A = np.full((3, K), float(p // 2))
        B = np.full((K, 2), -float(p // 2))
        got = gfp.residues(gfp.matmul(A, B, p), p)
        assert (got == (-(p // 2) * (p // 2) * K) % p).all()


def test_echelon_keeps_the_row_space_in_reduced_form():
    p = primes.DEFAULT_PRIME
    rng = np.random.default_rng(5)
    A = known_rank(rng, 150, 120, 77, p)
    ech = rank_modp.RowEchelon(120, p)
    gains = [ech.add(gfp.centred(A[s : s + 40], p)) for s in range(0, 150, 40)]
    B = gfp.residues(ech.basis(), p)
    assert sum(gains) == ech.rank == flint_rank(A, p)
    assert (B[:, ech.pivots] == np.eye(ech.rank, dtype=np.int64)).all()  # identity at the pivots
    assert flint_rank(np.vstack([A, B]), p) == ech.rank == flint_rank(B, p)  # same row space


@pytest.mark.parametrize("sizes", [(5, 7, 3, 40, 1, 9, 60), (64, 64, 64), (1,) * 30 + (200,)])
def test_blocks_of_any_size_kept_lazily_give_the_rank_and_the_reduced_form(sizes):
    """The echelon form keeps its rows as blocks cleared only when merged: streamed in uneven blocks (the
    storage compacted on the way), with the basis asked half-way (every block merged) and rows added after
    it, the rank and the row space are flint's, and the basis is reduced: the identity at the pivots."""
    p = primes.DEFAULT_PRIME
    rng = np.random.default_rng(sum(sizes))
    A = known_rank(rng, sum(sizes), 150, 97, p)
    ech = rank_modp.RowEchelon(150, p)
    s = 0
    for n, size in enumerate(sizes):
        ech.add(gfp.centred(A[s : s + size], p))
        s += size
        if n == len(sizes) // 2:
            half = gfp.residues(ech.basis(), p)
            assert flint_rank(np.vstack([A[:s], half]), p) == ech.rank == flint_rank(A[:s], p)
    B = gfp.residues(ech.basis(), p)
    assert ech.rank == flint_rank(A, p) == flint_rank(np.vstack([A, B]), p) == flint_rank(B, p)
    assert (B[:, ech.pivots] == np.eye(ech.rank, dtype=np.int64)).all()


def test_modulus_bounds():
    with pytest.raises(ValueError):
        rank_modp.RowEchelon(3, gfp.MODULUS_LIMIT + 1)
    with pytest.raises(InputError, match="2\\^26"):
        modp.check_modp_prime(2_147_483_647)
    with pytest.raises(InputError, match="not prime"):
        modp.check_modp_prime(16_777_215)
    assert primes.check_prime(2_147_483_647) == 2_147_483_647  # still fine for Macaulay2
    assert [primes.previous_prime(n) for n in (4, 100, 2**24)] == [3, 97, primes.DEFAULT_PRIME]


# ---------------------------------------------------------------- the Jacobian


ARCHS = [
    Architecture((2, 2), (1,), 2),
    Architecture((3, 3, 3), (2, 2), 2),
    Architecture((4, 3, 2, 3), (2, 1, 3), 3),
    Architecture((2, 5), (3,), 1),
    Architecture((3, 2, 4), (2, 2), 4),
]


@pytest.mark.parametrize("arch", ARCHS, ids=str)
def test_float_jacobian_equals_int64_jacobian(arch):
    p = primes.DEFAULT_PRIME
    rng = np.random.default_rng(3)
    w = rng.integers(0, p, arch.parameters)
    X = rng.integers(0, p, (3, arch.widths[0], arch.tokens))
    exact = jacobian(arch, w, X, Field(p))
    fast = jacobian(arch, gfp.centred(w, p), gfp.centred(X, p), ModP(p))
    assert (gfp.residues(fast, p) == exact).all()


def multihead_output(arch, w, X):
    """phi_W(X) written out directly: layer output = sum over heads of V Y (Yᵀ Kᵀ Q Y)."""
    pos, Y = 0, X
    for (a, d, e), heads in zip(arch.paper.layer_shapes, arch.heads):
        out = 0
        for _ in range(heads):
            Q = w[pos : pos + a * d].reshape(a, d)
            K = w[pos + a * d : pos + 2 * a * d].reshape(a, d)
            V = w[pos + 2 * a * d : pos + 2 * a * d + e * d].reshape(e, d)
            pos += 2 * a * d + e * d
            out = out + V.dot(Y).dot(Y.T.dot(K.T).dot(Q).dot(Y))
        Y = out
    return Y


@pytest.mark.parametrize(
    "widths,attention,heads,tokens",
    [((2, 3), (2,), (2,), 2), ((2, 2, 2), (1, 2), (2, 1), 2), ((3, 2, 2), (2, 1), (1, 3), 3)],
)
def test_multihead_jacobian_is_the_exact_derivative(widths, attention, heads, tokens):
    """J v = d/de phi(w + e v) at e = 0, exactly: phi(w + e v) is a polynomial of degree D in e,
    recovered from D + 1 integer evaluations."""
    arch = Architecture(widths, attention, tokens=tokens, heads=heads)
    rng = np.random.default_rng(7)
    w = rng.integers(-3, 4, arch.parameters).astype(object)
    v = rng.integers(-3, 4, arch.parameters).astype(object)
    X = rng.integers(-3, 4, (widths[0], tokens)).astype(object)
    D = arch.weight_degree
    values = [multihead_output(arch, w + e * v, X).reshape(-1) for e in range(D + 1)]
    # c_1 of the interpolating polynomial: sum_e values[e] * (d/de of the Lagrange basis at 0)
    coeff = []
    for e in range(D + 1):
        others = [k for k in range(D + 1) if k != e]
        denom = 1
        for k in others:
            denom *= e - k
        num = sum(np.prod([-k for k in others if k != j], dtype=object) for j in others)
        coeff.append(Fraction(int(num), int(denom)))
    derivative = sum(c * val for c, val in zip(coeff, values))
    J = jacobian(arch, w, X[None], Field())
    assert J.shape == (widths[-1] * tokens, arch.parameters)
    assert list(J.dot(v)) == list(derivative)
    p = 65521
    fast = jacobian(arch, gfp.centred(w.astype(np.int64), p), gfp.centred(X[None].astype(np.int64), p), ModP(p))
    assert (gfp.residues(fast, p) == np.vectorize(lambda x: int(x) % p)(J).astype(np.int64)).all()


# ---------------------------------------------------------------- the engine


def old_route_rank(arch, p, seed):
    """The previous engine: int64 Jacobian with at least 2P + 8 rows, rank by flint."""
    rng = np.random.default_rng(seed)
    w = rng.integers(0, p, arch.parameters)
    samples = -(-(2 * arch.parameters + 8) // (arch.widths[-1] * arch.tokens))
    X = rng.integers(0, p, (samples, arch.widths[0], arch.tokens))
    return flint_rank(jacobian(arch, w, X, Field(p)), p)


@pytest.mark.parametrize(
    "arch",
    [
        Architecture((2, 2), (1,), 2),
        Architecture((3, 3, 3), (2, 2), 2),
        Architecture((2, 2, 2, 2), (2, 2, 2), 2),
        Architecture((4, 4, 4), (2, 3), 3),
        Architecture((3, 2, 3), (2, 2), 2),
        Architecture((6, 6, 6), (2, 2), 3),
        Architecture((3, 3), (2,), 1),
    ],
    ids=str,
)
def test_engine_equals_old_route_and_theory(arch):
    p = primes.DEFAULT_PRIME
    new = modp.rank_at_random_point(arch, p, 0)[0]
    assert new == old_route_rank(arch, p, 0)
    predicted = predict_dimension(arch).value
    if predicted is not None:
        assert new == predicted


def test_samples_are_drawn_until_the_rank_stops_growing():
    """(12,12), a = 4, t = 3: P + 8 rows give rank 206, the closed form says 223. The engine keeps
    drawing token matrices and reaches 223; the old 2P + 8 rows happen to reach it too."""
    arch = Architecture((12, 12), (4,), 3)
    p = primes.DEFAULT_PRIME
    rng = np.random.default_rng(0)
    w = rng.integers(0, p, arch.parameters)
    X = rng.integers(0, p, (modp.default_samples(arch), 12, 3))
    short = flint_rank(jacobian(arch, w, X, Field(p)), p)
    rank, rows = modp.rank_at_random_point(arch, p, 0)
    assert short < rank == predict_dimension(arch).value == old_route_rank(arch, p, 0)
    assert rows > arch.parameters + 8


def test_dimension_reports_an_honest_failure_bound():
    arch = Architecture((3, 3, 3), (2, 2), 2)
    res = dimension(arch, method="modp", seed=4)
    assert res.primes == (primes.DEFAULT_PRIME, primes.previous_prime(primes.DEFAULT_PRIME))
    expected = (23 * (12 - 1) + (23 + 1) * (9 + 1)) / min(res.primes)  # weights, and 3^L + 1 per block
    assert res.dimension == 23 and res.failure_bound == pytest.approx(expected) and res.failure_bound < 1e-3


def test_largest_prime_and_small_primes_give_the_dimension():
    """The engine is exact at any prime below its bound; the API refuses primes whose stated failure
    bound is not below 1e-3 (options.resolve), so small primes are checked on the backend itself."""
    from lightning_cas.backends.modp import dimension_modp
    from lightning_cas.errors import InputError

    arch = Architecture((3, 3, 3), (2, 2), 2)
    assert dimension(arch, method="modp", prime=LARGEST).dimension == 23
    assert dimension_modp(arch, prime=65521).dimension == 23
    with pytest.raises(InputError, match="too small"):
        dimension(arch, method="modp", prime=65521)
    small = Architecture((2, 2), (1,), 2)
    assert primes.second_primes(3, 2) == [3, 5]
    assert all(0 < modp.rank_at_random_point(small, q, 0)[0] <= 6 for q in (3, 5))
    with pytest.raises(LightningError, match="failure bound"):  # a bound of 1 guarantees nothing: no result states it
        dimension_modp(small, prime=3)


def test_size_guard_refuses_what_does_not_fit_with_the_figure():
    arch = Architecture((256,) * 9, (256,) * 8, 2)
    need = modp.working_bytes(arch, modp.needs_extension(arch))  # over GF(p^2) at this degree: 16 bytes an entry
    assert need > modp.available_bytes()
    with pytest.raises(TooLargeError, match=f"{need / 2**30:.1f} GiB"):
        dimension(arch, method="modp")
    assert modp.working_bytes(Architecture((32,) * 5, (8,) * 4, 3)) < 2**30  # the 6144-weight case fits
