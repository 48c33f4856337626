"""The real boundary of one layer, with the real Macaulay2.

Cross-checks: the certified verdicts against the independent signature-of-S verdict (d' = a = 1), the
critical image on slices against elimination, the boundary closure against docs/mathematics.md §5 for all five small
cases; the certificate logic on hand-made eliminants.
"""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
import sympy
from click.testing import CliRunner

from lightning_cas.cli import main
from lightning_cas.core.architecture import Architecture
from lightning_cas.core.names import parse_polynomial
from lightning_cas.geometry.one_layer import boundary as real_boundary
from lightning_cas.geometry.one_layer import claims
from lightning_cas.geometry.one_layer.certificates import WitnessBound, witness_bound
from lightning_cas.geometry.one_layer.implicit import implicit
from lightning_cas.geometry.one_layer.pointwise import boundary_verdict_d11, phi_coordinates, point_verdict, vanishes
from lightning_cas.geometry.one_layer.singular import singular_locus
from lightning_cas.geometry.one_layer.strata import candidate_record, critical_image_by_elimination, stratum_samples
from lightning_cas.macaulay2.connection import Macaulay2
from lightning_cas.results.certificates import (
    BranchCertificate,
    ConeCertificate,
    SubmersionCertificate,
    WitnessCurveCertificate,
)
from lightning_cas.results.ideals import Stratum
from lightning_cas.system.deadline import Deadline
from lightning_cas.system.points import save_point

PARALLEL, RANK11 = Stratum.PARALLEL, Stratum.RANK11
CASES = [(2, 1, 1), (2, 1, 2), (3, 1, 1), (2, 2, 1), (2, 2, 2)]


def arch_of(case):
    d, e, a = case
    return Architecture((d, e), (a,), 2)


def pt(q, k, v):
    return (
        (
            tuple(tuple(Fraction(x) for x in r) for r in q),
            tuple(tuple(Fraction(x) for x in r) for r in k),
            tuple(tuple(Fraction(x) for x in r) for r in v),
        ),
    )


# ------------------------------------------------------------ the certificate logic, no M2


def test_witness_certificate_on_hand_made_eliminants():
    # f = t^2 + s: no real t for any s > 0 (lc = 1, disc = -4 s: no root in (0, 1])
    assert witness_bound("t^2 + s") == WitnessBound(s0="1", eliminant_degree=2)
    # f = t^2 - s: real roots for s > 0: no certificate
    assert witness_bound("t^2 - s") is None
    # real roots only for s > 1/3, where the leading coefficient changes sign: s0 must shrink below 1/3
    cert = witness_bound("t^2 - 3*s*t^2 + 1")
    assert cert is not None and sympy.Rational(cert.s0) < sympy.Rational(1, 3)
    assert witness_bound(None) is None
    # in u = t^2: only roots u >= 0 count. u + s: u = -s < 0, certificate; u - s: none
    assert witness_bound("t + s", "t^2") == WitnessBound(s0="1", eliminant_degree=2)
    assert witness_bound("t - s", "t^2") is None
    # u + s - 1/2: u >= 0 once s <= 1/2; the root crosses 0 at s = 1/2, the probe at s = 1e-6 already fails
    assert witness_bound("t + s - 1/2", "t^2") is None
    # u + 1/2 - s: no root u >= 0 for s < 1/2; the crossing at s = 1/2 must bound s0
    cert = witness_bound("t + 1/2 - s", "t^2")
    assert cert is not None and sympy.Rational(cert.s0) < sympy.Rational(1, 2)


# ------------------------------------------------------------ (2, 1, 1) end to end (docs/mathematics.md §5 example)


A211 = Architecture((2, 1), (1,), 2)
INTERIOR_211 = pt([[1, 2]], [[3, -1]], [[1, 5]])  # v, k independent: S = sym(v k) indefinite
PARALLEL_211 = pt([[1, 2]], [[3, -1]], [[6, -2]])  # v = 2k: S = 4 (k.x)^2, a perfect square
VERTEX_211 = pt([[0, 0]], [[3, -1]], [[1, 5]])


@pytest.fixture(scope="module")
def boundary211(m2):
    return real_boundary.boundary(A211, PARALLEL_211, m2=m2, timeout=120)


def test_boundary_211_end_to_end(boundary211):
    res = boundary211
    assert res.boundary is True and isinstance(res.certificate, WitnessCurveCertificate) and res.in_critical_image
    assert res.certificate.is_boundary and not res.certificate.is_interior and res.certificate.kind == "witness curve"
    assert res.closure_complete is True and res.boundary_closure_dimension == 3
    assert res.critical_image_dimension == 3
    (comp,) = res.components
    assert comp.stratum is PARALLEL and comp.verdict == "boundary" and comp.degree == 4
    # the closure is {S a perfect square} (x) gamma: it holds v^2 (x) g for random v, g and not a generic S (x) g
    ideal = implicit(A211, timeout=60)
    on = pt([[2, 7]], [[3, -5]], [[6, -10]])
    assert vanishes(res.boundary_closure, phi_coordinates(ideal, on))
    assert not vanishes(res.boundary_closure, phi_coordinates(ideal, INTERIOR_211))


def test_verdicts_on_both_kinds_of_211_points_and_the_vertex(m2):
    inside = real_boundary.boundary(A211, INTERIOR_211, m2=m2, timeout=60, closure=False)
    assert inside.boundary is False and isinstance(inside.certificate, SubmersionCertificate)
    assert inside.certificate.is_interior and not inside.certificate.is_boundary
    vertex = real_boundary.boundary(A211, VERTEX_211, m2=m2, timeout=60, closure=False)
    assert vertex.boundary is True and isinstance(vertex.certificate, ConeCertificate)
    assert vertex.certificate.is_vertex and vertex.certificate.is_boundary
    assert isinstance(vertex.certificate.witness, WitnessCurveCertificate)
    assert not [n for n in inside.notes + vertex.notes if "DISAGREEMENT" in n]


@pytest.mark.parametrize("case", [(2, 1, 1), (3, 1, 1)])
def test_certified_verdicts_agree_with_the_signature_of_S(m2, case):
    """d' = a = 1: the verdict by certificates against the independent one by the signature of S."""
    arch = arch_of(case)
    points = list(claims.stratum_points(arch, seed=3).values())
    points += stratum_samples(arch, PARALLEL, 5, 2)
    for p in points:
        v = point_verdict(arch, p, Macaulay2(m2, deadline=Deadline(60)))
        if v.vertex:
            continue
        assert v.boundary is not None, v.evidence
        assert v.boundary == boundary_verdict_d11(p)[0], (p, v.evidence)


# ------------------------------------------------------------ beyond d' = a = 1


@pytest.mark.parametrize("case", [(2, 1, 2), (2, 2, 1), (2, 2, 2)])
def test_rank_one_points_are_interior_by_branches_and_parallel_ones_boundary(m2, case):
    arch = arch_of(case)
    for p in stratum_samples(arch, RANK11, 9, 2):
        v = point_verdict(arch, p, Macaulay2(m2, deadline=Deadline(60)))
        assert v.boundary is False and isinstance(v.certificate, BranchCertificate), v.evidence
        assert "singular point" in v.evidence  # interior although singular: two real branches
    for p in stratum_samples(arch, PARALLEL, 9, 2):
        v = point_verdict(arch, p, Macaulay2(m2, deadline=Deadline(60)))
        assert v.boundary is True and isinstance(v.certificate, WitnessCurveCertificate), v.evidence
        assert sympy.Rational(v.certificate.s0) > 0


@pytest.mark.parametrize("case", [(2, 1, 1), (2, 1, 2)])
def test_critical_image_on_slices_equals_elimination(m2, case):
    arch = arch_of(case)
    image = candidate_record(arch, Macaulay2(m2, deadline=Deadline(120)), singular=False).critical.critical_image
    slices = list(image.polynomials)
    elim, (component,) = critical_image_by_elimination(arch, Macaulay2(m2, deadline=Deadline(120)))  # not radical
    other = list(component.polynomials)
    ys = sorted(set().union(*(g.free_symbols for g in slices + other)), key=str)
    for mine, theirs in ((slices, other), (other, slices)):
        basis = sympy.groebner(theirs, *ys, order="grevlex")
        assert all(basis.reduce(g)[1] == 0 for g in mine)
    assert (elim.dimension, elim.degree) == (image.dimension, image.degree)


@pytest.mark.parametrize("case", CASES)
def test_boundary_closure_is_the_claimed_stratum(m2, case):
    res = real_boundary.boundary(arch_of(case), m2=m2, timeout=600)
    assert res.closure_complete is True, res.components
    boundary = [c for c in res.components if c.verdict == "boundary"]
    assert [c.stratum for c in boundary] == [PARALLEL]
    d, e, _ = case
    assert res.boundary_closure_dimension == e + 2 * d - 2 == boundary[0].dimension
    assert res.boundary_closure == boundary[0].generators
    for c in res.components:
        if c.stratum is RANK11:
            assert c.verdict == "interior" and "singular locus" in c.source


def test_cli_boundary_json_with_a_point(m2, tmp_path):
    path = tmp_path / "w.json"
    save_point(pt([[1, 2], [0, 0]], [[3, -1], [0, 0]], [[2, 1], [4, 2]]), path)  # rank V = rank A = 1
    out = CliRunner().invoke(
        main,
        ["boundary", "--widths", "2,2", "--attention", "2", "--json", "--m2", m2, "--verdict-only", "--at", str(path)],
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.output[out.output.index("{") :])
    assert data["boundary"] is False and data["certificate"]["kind"] == "branches"
    assert data["method"] == "certificate" and data["method_detail"].startswith("real verdict by certificate")
    assert data["certainty"] == "exact"  # a verdict alone, no sampled closure


def test_witness_curve_points_lie_on_the_variety(m2):
    """Independent of the M2 verdict block: rebuild q(s0) = phi_W - s0 phi(delta) from the certificate
    in sympy and check it satisfies the implicit ideal (so the imaginary part really vanished)."""
    arch = arch_of((2, 2, 2))
    ideal = implicit(arch, m2=m2, timeout=120)
    (point,) = stratum_samples(arch, PARALLEL, 4, 1)
    res = real_boundary.boundary(arch, point, m2=m2, timeout=120, closure=False)
    cert = res.certificate
    assert res.boundary is True and isinstance(cert, WitnessCurveCertificate) and cert.blocks == "V,A"
    (V, A), delta = (
        [[[Fraction(x) for x in row] for row in m] for m in cert.preimage_V_A],
        [Fraction(x) for x in cert.direction],
    )
    as_point = lambda V, A: ((tuple(map(tuple, A)), ((1, 0), (0, 1)), tuple(map(tuple, V))),)  # K = I: A = Q
    p = phi_coordinates(ideal, as_point(V, A))
    assert p == phi_coordinates(ideal, point)  # the certificate's preimage is one of phi_W
    dV, dA = [delta[0:2], delta[2:4]], [delta[4:6], delta[6:8]]
    w = phi_coordinates(ideal, as_point(dV, dA))
    s0 = sympy.Rational(cert.s0)
    q = [pi - s0 * wi for pi, wi in zip(p, w)]
    assert vanishes(ideal.generators, q) and q != p
    # and it is not the trivial direction: phi(delta) is not a multiple of phi_W
    assert sympy.Matrix([p, w]).rank() == 2


def test_one_token_211_boundary_is_the_discriminant_of_binary_cubics(m2):
    """t = 1: phi_W(x) = S(x) g(x) is a binary cubic, X is all of them, M the cubics with three real roots
    (S indefinite), so the boundary closure is the discriminant hypersurface (degree 4) and X is smooth."""
    arch = Architecture((2, 1), (1,), 1)
    sing = singular_locus(arch, m2=m2, timeout=120)
    assert sing.variety.to_dict() == {"dimension": 4, "codimension": 0, "degree": 1} and sing.singular_dimension == -1
    res = real_boundary.boundary(arch, m2=m2, timeout=300)
    assert res.closure_complete and res.boundary_closure_dimension == 3 and len(res.boundary_closure) == 1
    disc = sympy.Poly(parse_polynomial(res.boundary_closure[0]))
    assert disc.total_degree() == 4
    # y are the coefficients of the cubic in some basis: x^3 + ... with a double root lies on it
    ideal = implicit(arch, m2=m2, timeout=60)
    double_root = pt([[1, 2]], [[3, -1]], [[6, -2]])  # S = 4 (3x - y)^2, g = x + 2y: a double root
    three_roots = pt([[1, 2]], [[3, -1]], [[1, 5]])
    assert vanishes(res.boundary_closure, phi_coordinates(ideal, double_root))
    assert not vanishes(res.boundary_closure, phi_coordinates(ideal, three_roots))


def test_one_time_limit_for_the_whole_command(m2):
    from lightning_cas.errors import TimeLimitError
    from lightning_cas.system.deadline import Deadline

    assert Deadline(None).left() is None
    with pytest.raises(TimeLimitError):  # system.deadline bounds Python work too
        Deadline(0.0).left()
    # (2,2,2): the slices run alone takes about a minute, so 3 s stop it, cleanly, with one line
    out = CliRunner().invoke(main, ["boundary", "--widths", "2,2", "--attention", "2", "--timeout", "3", "--m2", m2])
    assert out.exit_code != 0 and "Traceback" not in out.output and "time limit" in out.output
