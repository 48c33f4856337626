"""The anchor table's code: the paper's networks built as it describes them, its quadratic example's weights
in the package's order (the ED degree its code states, 4, by the real Macaulay2), the table's words for a
disagreement, msolve's count beside Macaulay2's on the same weights, and a benchmark shape's certified radius."""

from __future__ import annotations

from benchmarks import bench_critical, critical_anchor
from benchmarks.critical_anchor import EXAMPLES, _verdict, example_weights, markdown, network, radius_row, row


def test_the_papers_architecture_as_blocks():
    net = network(3, (3, 2), 3)
    assert (net.input, net.tokens, net.output, net.degree) == (3, 1, 2, 9)  # degree r^s, two outputs
    assert net.parameters == (3 * 3 + 3) + (2 * 3 + 2) + (2 * 2 + 2)  # every affine map has its bias


def test_the_quadratic_example_has_the_ed_degree_the_papers_code_states(m2):
    name, W1, b1, W2, b2, stated = EXAMPLES[0]
    out = row(name, network(2, (2,), 2), example_weights(W1, b1, W2, b2), stated, 0, 120, "both")
    assert (out["ed_degree"], out["exact_mod_p"], out["msolve"], out["verdict"]) == (4, 4, 4, "agrees")
    assert "| quadratic example 1 | given | 4 | 4 | 4 |" in markdown([out], [], [0], 120)


def test_a_disagreement_is_reported_not_adjusted():
    assert _verdict(5, 4) == "DISAGREES (paper 4, ours 5)" and _verdict(4, None) == "paper's number not found"


def test_the_verdict_blames_the_homotopy_not_the_exact_routes():
    """A homotopy that lost paths is not a disagreement of Macaulay2 mod p with msolve."""
    agree = {"exact_mod_p": 36, "msolve": 36, "ed_degree": 36, "homotopy": "0", "routes_disagree": False}
    assert critical_anchor.cross_check([agree, agree]) == (
        "; Macaulay2 and msolve agree; the homotopy finds only 0 0 (a lower bound: it lost paths)"
    )
    split = dict(agree, msolve=35, homotopy="36", routes_disagree=True)
    assert critical_anchor.cross_check([agree, split]).startswith("; Macaulay2 and msolve DISAGREE;")
    assert critical_anchor.cross_check([dict(agree, homotopy="36")]) == "; Macaulay2 and msolve agree"


def test_msolve_alone_counts_a_conic_boundary():
    net = network(2, (1,), 2)
    out = row("x", net, critical_anchor.random_weights(net, 0), None, 0, 60, "msolve")
    assert out["exact_mod_p"] is None and out["msolve"] == out["ed_degree"] is not None
    assert out["generic_bound"] == 4  # a generic conic: 2 * (1 + 1)


def test_a_benchmark_shape_gets_a_certified_radius_by_msolve():
    out = radius_row(8, (4,), 2, 0, 120)
    assert out["ed_degree"] is not None and out["unknowns"] == 4  # the 4 hidden units are the bottleneck
    assert out["certified"] is True and out["real_critical_points"] >= 1
    lower, upper = (float(v) for v in out["radius"].strip("[]").split(","))
    assert 0 <= lower <= upper


def test_the_symmetric_rank_degrees_are_the_known_ones():
    """Veronese v_2(P^(k-1)) has degree 2^(k-1); the determinant's hypersurface k."""
    assert [bench_critical.symmetric_rank_degree(k, 1) for k in (2, 3, 4, 5)] == [2, 4, 8, 16]
    assert [bench_critical.symmetric_rank_degree(k, k - 1) for k in (3, 4, 5)] == [3, 4, 5]
    assert critical_anchor.PAPER.keys() == set(critical_anchor.ARCHITECTURES)


def test_the_random_weights_are_nonzero_integers_of_the_wide_range():
    net = network(3, (3, 2), 2)
    w = critical_anchor.random_weights(net, 0)
    assert len(w) == net.parameters and all(v.denominator == 1 and 1 <= abs(v) <= 1000 for v in w)
    assert len(set(w)) > net.parameters // 2 and w == critical_anchor.random_weights(net, 0)
