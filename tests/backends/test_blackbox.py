"""The black-box route (Wiedemann over GF(p^2), products J v only) against the dense route on every block kind,
its proved lower bound, its arithmetic and its refusals; ``auto``'s choice between them."""

import flint
import numpy as np
import pytest

from lightning_cas import dimension
from lightning_cas.backends import blackbox
from lightning_cas.backends.blackbox import Benes, check_blackbox_prime, dimension_blackbox, krylov_rank
from lightning_cas.backends.modp import default_primes, dimension_modp, needs_extension
from lightning_cas.core import rank_modp
from lightning_cas.core.arithmetic import ModP2
from lightning_cas.core.blocks import MLP, Attention, Linear, Position, Power
from lightning_cas.core.forward import jacobian
from lightning_cas.core.network import Network
from lightning_cas.errors import InputError

P = blackbox.EXTENSION_PRIME

# every kind of polynomial block, full-rank and defective cases, residual groups, ambient-limited ones
NETWORKS = {
    "mlp 3 -> 4 -> 2, x^2": Network(3, 1, (MLP(4, degree=2, out=2),)),
    "shallow, one output (AH)": Network(3, 1, (MLP(5, degree=2, out=1),)),
    "two heads": Network(3, 3, (Attention(2, heads=2), Linear(2))),
    "value, bias, residual": Network(3, 2, (Attention(2, value=2, bias=True, residual=1), MLP(3, residual=1))),
    "causal, power": Network(2, 3, (Attention(2, causal=True), Power(2), Linear(2, bias=True))),
    "position, mlp, attention": Network(2, 3, (Position(), MLP(3, out=2), Attention(1, bias=True))),
    "x^3 stack": Network(3, 1, (MLP(5, degree=3, out=4), MLP(4, degree=3, out=2))),
    "x^6 stack 3,8,8,3": Network(3, 1, (Linear(8), Power(6), Linear(8), Power(6), Linear(3))),
}


@pytest.mark.parametrize("name", sorted(NETWORKS))
def test_both_routes_agree(name):
    net = NETWORKS[name]
    bb, dense = dimension_blackbox(net, seed=2), dimension_modp(net, seed=2)
    assert bb.dimension == dense.dimension
    assert bb.method == "blackbox" and bb.certainty == "probabilistic"
    assert 0 < bb.failure_bound < 1e-3
    assert all(run["rank"] <= bb.dimension for run in bb.runs)


def test_a_short_sequence_still_gives_a_lower_bound():
    """Berlekamp-Massey on too few terms may under-count, never over-count: every prefix's L - 1 <= rank."""
    net = NETWORKS["x^3 stack"]
    ar, rng = ModP2(P), np.random.default_rng(0)
    w, X = ar.random(rng, net.parameters), ar.random(rng, (blackbox.samples_for(net), net.input, net.tokens))
    true = dimension_modp(net, seed=0).dimension
    found = [krylov_rank(net, ar, w, X, np.random.default_rng(s), bound)[0] for s in range(3) for bound in (3, 10, 40)]
    assert max(found) <= true
    assert krylov_rank(net, ar, w, X, np.random.default_rng(9), net.parameters)[0] == true


def test_gfp2_products_are_exact():
    """Complex float64 products with delayed reduction against Python integers in GF(p)[i]."""
    ar, rng = ModP2(P), np.random.default_rng(1)
    A, B = ar.random(rng, (5, 300)), ar.random(rng, (300, 4))
    got = ar.matmul(A, B)
    a = [[(int(z.real), int(z.imag)) for z in row] for row in A]
    b = [[(int(z.real), int(z.imag)) for z in row] for row in B]
    for i in range(5):
        for j in range(4):
            re = sum(a[i][k][0] * b[k][j][0] - a[i][k][1] * b[k][j][1] for k in range(300)) % P
            im = sum(a[i][k][0] * b[k][j][1] + a[i][k][1] * b[k][j][0] for k in range(300)) % P
            assert (int(got[i, j].real) % P, int(got[i, j].imag) % P) == (re, im)
    z = ar.random(rng, 1)[0]
    assert ar.mul(np.array([z]), np.array([ar.inverse(z)]))[0] == 1


def test_benes_network_is_invertible():
    """Switches of determinant 1: the preconditioner never loses rank (the lower bound does not need it, the
    equality does); checked over GF(p) with the switches' real parts."""
    ar, rng = ModP2(P), np.random.default_rng(4)
    net = Benes(ar, rng, 16)
    real = Benes.__new__(Benes)
    real.ar, real.n, real.levels = ar, 16, net.levels
    real.switches = [s.real.astype(np.complex128) for s in net.switches]
    R = np.stack([real.apply(np.eye(16, dtype=np.complex128)[k]).real for k in range(16)]).astype(np.int64) % P
    assert flint.nmod_mat(16, 16, R.reshape(-1).tolist(), P).rank() == 16


def test_jacobian_of_the_route_is_the_dense_one():
    """The operator's J is the dense route's Jacobian at the same point (a rank of J by flint equals the route's)."""
    net = NETWORKS["two heads"]
    ar, rng = ModP2(P), np.random.default_rng(3)
    w = ar.random(rng, net.parameters).real.astype(np.complex128)  # a point of GF(p) inside GF(p^2)
    X = ar.random(rng, (blackbox.samples_for(net) + 4, net.input, net.tokens)).real.astype(np.complex128)
    J = jacobian(net, ar, w, X).real.astype(np.int64) % P
    want = flint.nmod_mat(J.shape[0], J.shape[1], J.reshape(-1).tolist(), P).rank()
    assert krylov_rank(net, ar, w, X, np.random.default_rng(5), net.parameters)[0] == want


@pytest.mark.parametrize("p", [16_777_213, 2**26 + 15, 4])
def test_refuses_primes_it_cannot_use(p):
    with pytest.raises(InputError):
        check_blackbox_prime(p)


def test_auto_says_which_route_and_why():
    net = NETWORKS["x^6 stack 3,8,8,3"]
    result = dimension(net)
    assert any(note.startswith("auto chose modp: it fits") for note in result.notes)
    assert result.method == "modp"
    method, why = blackbox.choose(net, free_bytes=1)
    assert method == "modp" and "neither route fits" in why
    est = blackbox.estimates(net)
    assert est["modp"]["bytes"] > est["blackbox"]["bytes"]
    method, why = blackbox.choose(net, free_bytes=est["blackbox"]["bytes"])
    assert method == "blackbox" and "by one timed pass" in why


def test_echelon_over_gfp2_finds_a_known_rank():
    ar, rng = ModP2(P), np.random.default_rng(6)
    for m, n, r in [(40, 30, 12), (25, 25, 25), (60, 20, 0)]:
        A = ar.matmul(ar.random(rng, (m, r)), ar.random(rng, (r, n))) if r else ar.zeros((m, n))
        ech = rank_modp.RowEchelon(n, P, dtype=np.complex128)
        for s in range(0, m, 7):
            ech.add(A[s : s + 7])
        assert ech.rank == r
        again = rank_modp.RowEchelon(n, P, dtype=np.complex128)  # the kept rows span A's rows
        again.add(ech.basis())
        assert again.rank == r and again.add(A) == 0


@pytest.mark.parametrize("name", ["x^6 stack 3,8,8,3", "value, bias, residual"])
def test_dense_route_over_gfp2_is_one_run_that_agrees(name):
    net = NETWORKS[name]
    one = dimension_modp(net, seed=1, extension=True)
    assert len(one.runs) == 1 and one.runs[0]["field"] == "p^2" and one.primes == (P,)
    assert one.dimension == dimension_modp(net, seed=1, extension=False).dimension
    assert one.failure_bound < 1e-6


def test_high_degree_chooses_the_extension_field():
    """x^6 after four layers: no GF(p) prime keeps the promise within five runs; GF(p^2) does in one."""
    deep = Network(3, 1, (Linear(24), Power(6)) * 4 + (Linear(3),))
    assert needs_extension(deep) and len(default_primes(deep)) > 5
    assert not needs_extension(NETWORKS["x^3 stack"])
