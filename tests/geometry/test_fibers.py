"""Fibers (docs/mathematics.md §3) with the real Macaulay2: the fiber ideal's components against the orbit of
the named symmetries, computed independently (exact rank of the infinitesimal action in Python),
with witnesses re-checked by exact evaluation and dimensions cross-checked against modp."""

from __future__ import annotations

import json
import time
from fractions import Fraction

import numpy as np
import pytest
import sympy
from click.testing import CliRunner

from lightning_cas.api import dimension
from lightning_cas.backends.modp import default_samples
from lightning_cas.cli import main
from lightning_cas.core.architecture import Architecture
from lightning_cas.core.primes import DEFAULT_PRIME
from lightning_cas.core.theory import predict_fiber_dimension
from lightning_cas.core.weights import flat, point_from_dict, random_point
from lightning_cas.errors import InputError, UnsupportedError
from lightning_cas.geometry.fibers.fiber import fiber, orbit_tangents, same_function
from lightning_cas.results.fibers import (
    VERDICT_COMPONENTS,
    VERDICT_DIMENSION_ONLY,
    VERDICT_DIMENSIONS,
    VERDICT_ORBIT,
    FiberResult,
)
from lightning_cas.system.points import save_point
from tests.support import Field, jacobian


def _pt(layers):
    """Point from per-layer (Q, K, V) lists of ints."""
    return tuple(tuple(tuple(tuple(Fraction(v) for v in row) for row in M) for M in layer) for layer in layers)


def _on_component(result: FiberResult, index: int, point_dict: dict) -> bool:
    """Does the point satisfy every generator of component `index` (exact, sympy)?"""
    arch = result.architecture
    values = flat(point_from_dict(arch, json.loads(json.dumps(point_dict, default=list))))
    names = [
        f"{n}_({i},{r + 1},{c + 1})"
        for i, (a, d, e) in enumerate(arch.paper.layer_shapes, 1)
        for n, rows in (("q", a), ("k", a), ("v", e))
        for r in range(rows)
        for c in range(d)
    ]
    subs = {sympy.Symbol(n): sympy.Rational(v.numerator, v.denominator) for n, v in zip(names, values)}
    return all(g.subs(subs) == 0 for g in result.component_ideal(index))


# ---------------------------------------------------------------- one layer


@pytest.mark.parametrize("widths,a", [((2, 2), 1), ((2, 2), 2), ((3, 2), 2)])
def test_single_layer_generic_fiber_is_orbit_of_dimension_a2_plus_1(m2, widths, a):
    arch = Architecture(widths, (a,), tokens=2)
    r = fiber(arch, seed=3, m2=m2)
    assert r.method == "m2" and r.certainty == "exact" and r.field == "QQ"
    assert r.fiber_dimension == a * a + 1
    assert len(r.components) == 1 and r.components[0].contains_point
    assert r.symmetry_orbit_dimension == a * a + 1
    assert r.verdict == VERDICT_ORBIT
    # three ways to the same number: M2 decomposition, modp rank, theory
    assert r.generic_fiber_dimension == r.fiber_dimension == predict_fiber_dimension(arch).value


def test_key_value_swap_gives_two_components_when_output_and_attention_are_one(m2):
    arch = Architecture((2, 1), (1,), tokens=2)
    r = fiber(arch, seed=1, m2=m2)
    assert r.verdict == VERDICT_COMPONENTS
    assert r.fiber_dimension == 2 and [c.dimension for c in r.components] == [2, 2]
    mine = [i for i, c in enumerate(r.components) if c.contains_point]
    other = [i for i, c in enumerate(r.components) if not c.contains_point]
    assert len(mine) == 1 and len(other) == 1
    witness = r.components[other[0]].witness
    assert witness is not None
    wpoint = point_from_dict(arch, json.loads(json.dumps(witness)))
    W = point_from_dict(arch, json.loads(json.dumps(r.point)))
    assert same_function(arch, wpoint, W, seed=11)  # exact, independent of M2
    assert _on_component(r, other[0], witness) and not _on_component(r, mine[0], witness)
    # the swap: the witness's key is parallel to W's value and its value to W's key
    ((Q, K, V),) = W
    ((Q2, K2, V2),) = wpoint
    assert sympy.Matrix([K2[0], V[0]]).rank() == 1 and sympy.Matrix([V2[0], K[0]]).rank() == 1


def test_rank_one_exception_adds_a_branch_only_at_the_special_point(m2):
    """(d, d', a) = (2, 2, 1): generically one component (previous test); with rank V = 1 the
    branch swapping V's row direction with A's column direction appears (docs/mathematics.md §3)."""
    arch = Architecture((2, 2), (1,), tokens=2)
    special = _pt([([[2, -1]], [[1, 3]], [[3, -1], [6, -2]])])  # V = (1, 2)^T (3, -1): rank 1
    r = fiber(arch, point=special, m2=m2)
    assert r.verdict == VERDICT_COMPONENTS and len(r.components) == 2
    assert [c.dimension for c in r.components] == [2, 2]
    other = next(c for c in r.components if not c.contains_point)
    wpoint = point_from_dict(arch, json.loads(json.dumps(other.witness)))
    assert same_function(arch, wpoint, special, seed=5)
    ((Q2, K2, V2),) = wpoint
    # A = K^T Q has column direction k = (1, 3); V's row direction is (3, -1): they trade places
    assert sympy.Matrix([list(K2[0]), [3, -1]]).rank() == 1
    assert sympy.Matrix([list(V2[0]), [1, 3]]).rank() == 1 and sympy.Matrix(V2).rank() == 1
    generic = fiber(arch, seed=3, m2=m2)
    assert len(generic.components) == 1


# ---------------------------------------------------------------- depth two


def test_depth_two_named_group_fills_the_fiber(m2):
    r = fiber(Architecture((1, 1, 1), (1, 1), tokens=2), seed=0, m2=m2)
    assert r.method == "m2" and r.verdict == VERDICT_ORBIT
    assert r.fiber_dimension == r.symmetry_orbit_dimension == r.symmetry_group_dimension == 5


def test_depth_two_fast_path_group_fills_when_widths_do_not_increase():
    arch = Architecture((3, 3, 3), (2, 2), tokens=2)
    r = fiber(arch, seed=0)
    assert r.method == "modp" and r.certainty == "probabilistic" and r.components == ()
    assert any("size guard" in n for n in r.notes)
    assert r.fiber_dimension == predict_fiber_dimension(arch).value == 42 - 23
    assert r.symmetry_orbit_dimension == r.fiber_dimension and r.verdict == VERDICT_DIMENSION_ONLY


def test_wider_hidden_layer_adds_fiber_dimensions_m2(m2):
    r = fiber(Architecture((1, 2, 1), (1, 1), tokens=2), seed=0, m2=m2)
    assert r.method == "m2" and r.verdict == VERDICT_DIMENSIONS
    assert r.fiber_dimension == 9 and r.symmetry_orbit_dimension == 8
    assert r.generic_fiber_dimension == 9


def test_wider_hidden_layer_adds_fiber_dimensions_fast_path():
    narrow = fiber(Architecture((2, 2, 2), (2, 2), tokens=2), seed=0, method="modp")
    wide = fiber(Architecture((2, 3, 2), (2, 2), tokens=2), seed=0, method="modp")
    assert narrow.verdict == VERDICT_DIMENSION_ONLY and narrow.fiber_dimension == narrow.symmetry_orbit_dimension
    assert wide.verdict == VERDICT_DIMENSIONS and wide.fiber_dimension > wide.symmetry_orbit_dimension


# ---------------------------------------------------------------- the orbit computation itself


@pytest.mark.parametrize("widths,att", [((2, 2), (2,)), ((2, 3, 2), (2, 1)), ((3, 3, 3), (2, 2))])
def test_orbit_tangents_are_tangent_to_the_fiber(widths, att):
    """Every infinitesimal symmetry is in the kernel of d phi at W (forward-mode Jacobian, mod p)."""
    arch = Architecture(widths, att, tokens=2)
    point = random_point(arch, 4)
    p = DEFAULT_PRIME
    w = np.array([int(v) % p for v in flat(point)], dtype=np.int64)
    X = Field(p).random(np.random.default_rng(0), (default_samples(arch), arch.widths[0], arch.tokens))
    J = sympy.Matrix(jacobian(arch, w, X, Field(p)).tolist())
    for vec in orbit_tangents(arch, point):
        image = J * sympy.Matrix([int(v) % p for v in vec])
        assert all(x % p == 0 for x in image)


# ---------------------------------------------------------------- points from files, CLI


def test_fiber_at_a_user_point_from_a_file(m2, tmp_path):
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"layers": [{"Q": [["3/4", -2]], "K": [[1, "5/3"]], "V": [[2, -1]]}]}))
    res = CliRunner().invoke(
        main, ["fiber", "--widths", "2,1", "--attention", "1", "--at", str(path), "--json", "--m2", m2]
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["point"] == {"layers": [{"Q": [["3/4", -2]], "K": [[1, "5/3"]], "V": [[2, -1]]}]}
    for key in ("fiber_dimension", "components", "symmetry_orbit_dimension", "verdict", "method", "seed"):
        assert key in data
    assert data["fiber_dimension"] == 2 and data["verdict"] == VERDICT_COMPONENTS
    assert {c["contains_point"] for c in data["components"]} == {True, False}
    assert all({"dimension", "degree", "generators"} <= set(c) for c in data["components"])
    r = FiberResult.from_json(res.stdout)
    assert r.to_json() == res.stdout.strip()


def test_save_point_then_at_reproduces_the_fiber(m2, tmp_path):
    saved = tmp_path / "p.json"
    runner = CliRunner()
    first = runner.invoke(
        main,
        [
            "fiber",
            "--widths",
            "2,2",
            "--attention",
            "1",
            "--seed",
            "9",
            "--save-point",
            str(saved),
            "--json",
            "--m2",
            m2,
        ],
    )
    assert first.exit_code == 0, first.output
    again = runner.invoke(
        main, ["fiber", "--widths", "2,2", "--attention", "1", "--at", str(saved), "--seed", "9", "--json", "--m2", m2]
    )
    assert again.exit_code == 0, again.output
    a, b = json.loads(first.stdout), json.loads(again.stdout)
    assert a["point"] == b["point"] == json.loads(saved.read_text())
    assert a["components"] == b["components"] and a["fiber_dimension"] == b["fiber_dimension"] == 2


@pytest.mark.parametrize(
    "content,phrase",
    [
        ('{"layers": [{"Q": [[1, 2, 3]], "K": [[1, 2]], "V": [[1, 2]]}]}', "row 1 must have 2 entries"),
        (
            '{"layers": [{"Q": [[1, 2]], "K": [[1, 2]], "V": [[1, 2]]}, {"Q": [[1]], "K": [[1]], "V": [[1]]}]}',
            "1 layer(s)",
        ),
        ('{"layers": [{"Q": [[1, "abc"]], "K": [[1, 2]], "V": [[1, 2]]}]}', "entries must be numbers"),
        ('{"layers": [{"Q": [[1, 1e400]], "K": [[1, 2]], "V": [[1, 2]]}]}', "not a finite number"),
        ('{"layers": [{"Q": [[1, 1e-320]], "K": [[1, 2]], "V": [[1, 2]]}]}', "subnormal"),
        ('{"layers": [{"Q": [[1, 2]], "K": [[1, 2]], "V": [[1, 2]]}', "not valid JSON"),
        ('{"layers": [{"Q": [[1, 2]], "K": [[1, 2]], "V": [[1, NaN]]}]}', "NaN"),
        ('{"layers": [{"Q": [[1, 2]], "K": [[1, 2]]}]}', "exactly the keys Q, K, V"),
    ],
)
def test_bad_point_files_are_refused_in_one_line(tmp_path, content, phrase):
    path = tmp_path / "bad.json"
    path.write_text(content)
    res = CliRunner().invoke(main, ["fiber", "--widths", "2,1", "--attention", "1", "--at", str(path)])
    assert res.exit_code == 2
    assert res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lightning-cas: error:") and phrase in lines[0]


def test_missing_point_file_is_refused(tmp_path):
    res = CliRunner().invoke(main, ["fiber", "--widths", "2,1", "--attention", "1", "--at", str(tmp_path / "no")])
    assert res.exit_code == 2 and len(res.stderr.strip().splitlines()) == 1 and "cannot read" in res.stderr


# ---------------------------------------------------------------- options and faults


def test_timeout_in_auto_falls_back_to_the_fast_path(m2):
    # the timeout bounds the whole call: the decomposition (about 5 s) gets what the Python part left, minus
    # a reserve for the fast-path answer
    arch = Architecture((2, 2, 2), (1, 1), tokens=2)
    start = time.monotonic()
    r = fiber(arch, seed=0, timeout=4, m2=m2)
    assert r.method == "modp" and any("fell back" in n for n in r.notes)
    assert r.fiber_dimension == arch.parameters - dimension(arch).dimension
    assert time.monotonic() - start < 4 + 1.5


def test_decomposition_over_a_prime_field_agrees_with_qq(m2):
    arch = Architecture((2, 1), (1,), tokens=2)
    over_p = fiber(arch, seed=2, m2=m2, method="m2", prime=32003)
    over_q = fiber(arch, seed=2, m2=m2, method="m2")
    assert over_p.field == "ZZ/32003" and over_p.certainty == "probabilistic"
    assert sorted((c.dimension, c.degree) for c in over_p.components) == sorted(
        (c.dimension, c.degree) for c in over_q.components
    )


def test_bad_requests_are_refused():
    with pytest.raises(UnsupportedError):
        fiber(Architecture((2, 2), (1,), normalization="softmax"))
    with pytest.raises(InputError):
        fiber(Architecture((2, 2), (1,)), method="magic")
    with pytest.raises(InputError):
        fiber(Architecture((2, 2), (1,)), seed=-1)
    with pytest.raises(InputError):
        fiber(Architecture((2, 2), (1,)), method="m2", prime=32004)


def test_random_point_is_reproducible_and_has_no_zero_entries():
    arch = Architecture((3, 3, 3), (2, 2))
    assert random_point(arch, 5) == random_point(arch, 5) != random_point(arch, 6)
    assert all(v != 0 for v in flat(random_point(arch, 5)))


def test_save_point_writes_the_point(tmp_path):
    arch = Architecture((2, 2), (1,))
    save_point(random_point(arch, 1), tmp_path / "x.json")
    assert point_from_dict(arch, json.loads((tmp_path / "x.json").read_text())) == random_point(arch, 1)


def test_finding_token_collapse_gives_an_extra_component_at_depth_two(m2):
    """FINDING vs docs/mathematics.md §3 ("the named group fills the native fiber when widths do not
    increase"): for widths (2, 2, 2), a = (1, 1) the widths do not increase, the fiber has the
    orbit's dimension, yet it has a second component. With a_1 = 1 all tokens collapse onto a line
    u after layer 1, so layer 2 only sees u^T K_2^T Q_2 u, which is symmetric in Q_2 <-> K_2: the
    swapped point gives the same function (checked exactly here) and lies on the other component.
    Decomposed over QQ (about 40 s): at depth two no prime below 2^15, where Macaulay2's arithmetic is
    fastest, makes the failure bound of the weights small (options' one rule refuses ZZ/32003 here)."""
    arch = Architecture((2, 2, 2), (1, 1), tokens=2)
    r = fiber(arch, seed=0, m2=m2, method="m2")
    assert r.verdict == VERDICT_COMPONENTS
    assert r.fiber_dimension == r.symmetry_orbit_dimension == r.symmetry_group_dimension == 8
    assert sorted(c.contains_point for c in r.components) == [False, True]
    W = point_from_dict(arch, json.loads(json.dumps(r.point)))
    (l1, (Q2, K2, V2)) = W
    swapped = (l1, (K2, Q2, V2))
    assert same_function(arch, swapped, W, seed=3)
    values = flat(swapped)
    names = [
        f"{n}_({i},{r_ + 1},{c + 1})"
        for i, (a, d, e) in enumerate(arch.paper.layer_shapes, 1)
        for n, rows in (("q", a), ("k", a), ("v", e))
        for r_ in range(rows)
        for c in range(d)
    ]
    subs = {sympy.Symbol(n): int(v) for n, v in zip(names, values)}
    on = [all(g.subs(subs) == 0 for g in r.component_ideal(i)) for i in range(2)]
    other = [not c.contains_point for c in r.components]
    assert on == other


def test_a_point_that_vanishes_mod_the_prime_is_refused():
    """Found by review: entries 3 with --prime 3 reported a fiber of dimension 4 and 'extra dimensions' (over QQ:
    2). A prime that zeroes a nonzero weight describes another point: refused, for any prime."""
    from lightning_cas.errors import InputError
    from lightning_cas.geometry.fibers.fiber import fiber

    point = {"layers": [{"Q": [[1000003, 1]], "K": [[1, 2]], "V": [[3, 1]]}]}
    with pytest.raises(InputError, match="divides 1 nonzero entries"):
        fiber(Architecture((2, 1), (1,), 2), point, method="m2", prime=1000003)
