"""Every kernel vector a mechanism offers is in the kernel of the Jacobian, for the block as it really is
(biases, softmax, causal, residual, value projections, activation functions, LayerNorm): checked exactly over
QQ where the network is polynomial and in balls at 80 digits where it is not, on random networks. And the
check itself drops a vector that is not in the kernel."""

from __future__ import annotations

import os
from fractions import Fraction

import flint
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lightning_cas.core.arithmetic import Balls, Rationals
from lightning_cas.core.forward import jacobian
from lightning_cas.core.kernel_proof import Candidates, ball_images, bound, candidates, exact_images
from lightning_cas.core.network import MLP, Activation, Attention, LayerNorm, Linear, Network
from tests.support import CI

EXAMPLES = int(os.environ.get("KERNEL_EXAMPLES", 60 if CI else 20))


@st.composite
def blocks(draw, width: int, polynomial: bool):
    """One block on ``width`` features and the width after it."""
    kinds = ["attention", "mlp", "linear"] + ([] if polynomial else ["activation", "layernorm"])
    kind = draw(st.sampled_from(kinds))
    bias = draw(st.booleans())
    if kind == "linear":
        out = draw(st.integers(1, 3))
        return Linear(out, bias=bias), out
    if kind == "activation":
        return Activation(draw(st.sampled_from(["gelu", "tanh"]))), width
    if kind == "layernorm":
        if width < 2:
            return Linear(2, bias=bias), 2
        affine = draw(st.booleans())
        return LayerNorm(affine=affine, bias=affine and bias), width
    residual = draw(st.booleans())
    out = width if residual else draw(st.integers(1, 3))
    if kind == "mlp":
        activation = "power" if polynomial else draw(st.sampled_from(["power", "gelu", "tanh"]))
        degree = draw(st.integers(1, 2)) if activation == "power" else 2
        return MLP(
            draw(st.integers(1, 3)), degree=degree, out=out, residual=residual, bias=bias, activation=activation
        ), out
    value = draw(st.sampled_from([None, 1, 2]))
    normalization = "none" if polynomial else draw(st.sampled_from(["none", "softmax"]))
    return Attention(
        draw(st.integers(1, 2)),
        heads=draw(st.integers(1, 2)),
        value=value,
        out=out,
        causal=draw(st.booleans()),
        residual=residual,
        normalization=normalization,
        bias=bias,
    ), out


@st.composite
def networks(draw, polynomial: bool):
    width = draw(st.integers(1, 3))
    tokens = draw(st.integers(1, 3))
    out, w = [], width
    for _ in range(draw(st.integers(1, 3))):
        b, w = draw(blocks(w, polynomial))
        out.append(b)
    if all(isinstance(b, Activation) or (isinstance(b, LayerNorm) and not b.affine) for b in out):
        out.append(Linear(1, bias=draw(st.booleans())))
    net = Network(width, tokens, tuple(out))
    if not polynomial and not net.functions:
        net = Network(width, tokens, tuple(out) + (Activation("tanh"),))
    return net


def _point(net: Network, seed: int):
    """Dyadic weights (eighths) and integer inputs, enough rows for the rank of the differential."""
    rng = np.random.default_rng(seed)
    w = [Fraction(int(x), 8) for x in rng.integers(-12, 13, net.parameters)]
    n = max(2, -(-(net.parameters + 4) // net.rows_per_sample))
    X = np.array([Fraction(int(x)) for x in rng.integers(-3, 4, n * net.input * net.tokens)], dtype=object).reshape(
        n, net.input, net.tokens
    )
    return w, X


@settings(max_examples=EXAMPLES)
@given(networks(polynomial=True), st.integers(0, 2**16))
def test_every_vector_offered_for_a_polynomial_network_is_exactly_in_the_kernel(net, seed):
    w, X = _point(net, seed)
    cands = candidates(net, w)
    ar = Rationals()
    J = jacobian(net, ar, ar.array(w), ar.array(X))
    M = flint.fmpq_mat(J.shape[0], J.shape[1], list(J.reshape(-1)))
    failed = [name for (name, _), ok in zip(cands.vectors, exact_images(M, [v for _, v in cands.vectors])) if not ok]
    assert not failed, f"{net}: not in the kernel: {failed}"


@settings(max_examples=EXAMPLES)
@given(networks(polynomial=False), st.integers(0, 2**16))
def test_every_vector_offered_for_a_network_with_functions_is_in_the_kernel_in_balls(net, seed):
    w, X = _point(net, seed)
    cands = candidates(net, w)
    digits = 80
    with flint.ctx.workdps(digits):
        ar = Balls(digits)
        J = jacobian(net, ar, ar.array(w), ar.array(X))
        M = flint.arb_mat([list(r) for r in J])
    passed = ball_images(M, [v for _, v in cands.vectors], digits)
    failed = [name for (name, _), ok in zip(cands.vectors, passed) if not ok]
    assert not failed, f"{net}: not in the kernel: {failed}"


def test_a_vector_outside_the_kernel_is_dropped_exactly_and_in_balls():
    net = Network(2, 2, (Attention(1, bias=True), Linear(1, bias=True)))
    w, X = _point(net, 3)
    cands = candidates(net, w)
    good = [v for _, v in cands.vectors]
    assert good, "the named group offers vectors here"
    wrong = [flint.fmpq(0)] * net.parameters
    wrong[0] = flint.fmpq(1)  # Q moved alone: the function changes
    mixed = Candidates(cands.vectors + (("a wrong mechanism", wrong),))
    ar = Rationals()
    J = jacobian(net, ar, ar.array(w), ar.array(X))
    exact = exact_images(flint.fmpq_mat(J.shape[0], J.shape[1], list(J.reshape(-1))), [v for _, v in mixed.vectors])
    assert exact == [True] * len(good) + [False]
    with flint.ctx.workdps(30):
        bl = Balls(30)
        Jb = jacobian(net, bl, bl.array(w), bl.array(X))
        balls = ball_images(flint.arb_mat([list(r) for r in Jb]), [v for _, v in mixed.vectors], 30)
    assert balls == exact
    proof = bound(net.parameters, mixed, exact)
    assert proof.dropped == (("a wrong mechanism", 1),)
    assert proof.count == bound(net.parameters, cands, [True] * len(good)).count
    assert "dropped as not in the kernel: 1 a wrong mechanism" in proof.upper_by()


@pytest.mark.parametrize("normalization, offered", [("none", False), ("softmax", True)])
def test_a_value_bias_shifts_the_output_only_under_softmax(normalization, offered):
    """(V Y + b_v 1^T) A moves by b_v (1^T A): a constant shift only when the columns of A sum to 1."""
    net = Network(
        2, 2, (Attention(1, bias=True, normalization=normalization), Linear(2, bias=True), Activation("tanh"))
    )
    w, _ = _point(net, 5)
    names = {name for name, _ in candidates(net, w).vectors}
    assert ("bias shift" in names) == offered


@st.composite
def relu_networks(draw):
    """Linear/ReLU stacks, ReLU mlps and lightning heads, with biases or not, one token or a few."""
    width, tokens = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    out, w = [], width
    for _ in range(draw(st.integers(1, 2))):
        kind = draw(st.sampled_from(["linear-relu", "mlp", "attention"]))
        if kind == "linear-relu":
            hidden = draw(st.integers(1, 4))
            out += [Linear(hidden, bias=draw(st.booleans())), Activation("relu")]
            w = hidden
        elif kind == "attention":  # a lightning head before or after the ReLUs (polynomial given the patterns)
            residual = draw(st.booleans())
            new = w if residual else draw(st.integers(1, 3))
            out.append(
                Attention(
                    1,
                    value=draw(st.sampled_from([None, 1])),
                    out=new,
                    residual=residual,
                    causal=draw(st.booleans()),
                    bias=draw(st.booleans()),
                )
            )
            w = new
        else:
            residual = draw(st.booleans())
            new = w if residual else draw(st.integers(1, 3))
            out.append(
                MLP(draw(st.integers(1, 4)), out=new, residual=residual, bias=draw(st.booleans()), activation="relu")
            )
            w = new
    out.append(Linear(draw(st.integers(1, 2)), bias=draw(st.booleans())))
    return Network(width, tokens, tuple(out))


@settings(max_examples=EXAMPLES)
@given(relu_networks(), st.integers(0, 2**16), st.booleans())
def test_every_vector_offered_for_a_relu_network_is_exactly_in_the_kernel(net, seed, given_inputs):
    """With the inputs' own patterns (dead units, blind spots, unit kernels hold on these inputs) or without."""
    from hypothesis import assume

    from lightning_cas.backends.relu import _patterns
    from lightning_cas.core.forward import Kink

    w, X = _point(net, seed)
    try:
        patterns, streams = _patterns(net, w, X)
    except Kink:
        assume(False)
    cands = candidates(net, w, patterns if given_inputs else None, streams if given_inputs else None)
    ar = Rationals()
    J = jacobian(net, ar, ar.array(w), ar.array(X), None, dict(patterns))
    M = flint.fmpq_mat(J.shape[0], J.shape[1], list(J.reshape(-1)))
    failed = [name for (name, _), ok in zip(cands.vectors, exact_images(M, [v for _, v in cands.vectors])) if not ok]
    assert not failed, f"{net}: not in the kernel: {failed}"


@settings(max_examples=EXAMPLES // 2)
@given(relu_networks(), st.integers(0, 2**16))
def test_the_proof_from_residues_agrees_with_the_jacobian_over_qq(net, seed):
    """The route for large Jacobians (D (J v) an integer of bounded size, zero mod enough primes) decides every
    vector as J over QQ does, a wrong one included; float weights (53-bit mantissas) make D large."""
    from hypothesis import assume

    from lightning_cas.backends.local import _primes_for
    from lightning_cas.backends.relu import _patterns, _proved_by_residues
    from lightning_cas.core.forward import Kink

    rng = np.random.default_rng(seed)
    w = [Fraction(float(x)) for x in rng.standard_normal(net.parameters)]
    n = max(2, -(-(net.parameters + 4) // net.rows_per_sample))
    X = np.array([Fraction(float(x)) for x in rng.standard_normal(n * net.input * net.tokens)], dtype=object).reshape(
        n, net.input, net.tokens
    )
    try:
        patterns, streams = _patterns(net, w, X)
    except Kink:
        assume(False)
    wrong = [flint.fmpq(0)] * net.parameters
    wrong[int(rng.integers(net.parameters))] = flint.fmpq(1)
    vectors = [v for _, v in candidates(net, w, patterns, streams).vectors] + [wrong]
    ar = Rationals()
    J = jacobian(net, ar, ar.array(w), ar.array(X), None, dict(patterns))
    exact = exact_images(flint.fmpq_mat(J.shape[0], J.shape[1], list(J.reshape(-1))), vectors)
    primes = _primes_for(w, None)
    from lightning_cas.core.arithmetic import ModP
    from lightning_cas.core.exact_qq import _integer_rows

    ints = np.array([[int(x) for x in r] for r in _integer_rows(vectors)], dtype=object)
    residue_ok = [True] * len(vectors)  # the caller passes only vectors that vanish mod its primes
    for q in primes:
        m = ModP(q)
        Jq = jacobian(net, m, m.array(w), m.array(X), None, dict(patterns))
        images = m.residues(m.matmul(Jq, m.array(ints).T))
        residue_ok = [ok and not np.any(images[:, i]) for i, ok in enumerate(residue_ok)]
    survivors = [v for v, ok in zip(vectors, residue_ok) if ok]
    proved, note = _proved_by_residues(net, w, X, patterns, survivors, primes)
    assert note is None
    it = iter(proved)
    assert [next(it) if ok else False for ok in residue_ok] == exact
