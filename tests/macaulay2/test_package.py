"""The Macaulay2 package m2/LightningCAS.m2: its own TESTs, its documentation, what it computes
(checked against the Python model and the modp backend), and the JSON records it sends back."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest
import sympy

from lightning_cas.backends.modp import dimension_modp
from lightning_cas.core.architecture import Architecture
from lightning_cas.core.model import flat_weight_symbols, network_output
from lightning_cas.errors import M2ParseError
from lightning_cas.geometry.fibers import fiber as fibers
from lightning_cas.macaulay2.connection import Macaulay2
from lightning_cas.macaulay2.parse import (
    JSON_MARK,
    json_bool,
    json_int,
    json_int_list,
    json_polynomials,
    json_rationals,
    json_record,
    json_str,
    records,
)
from lightning_cas.macaulay2.render import SEARCH_PATH_LINE, package_file, render
from lightning_cas.macaulay2.runner import run_script

REPO = Path(__file__).resolve().parents[2]


def load_line() -> str:
    return f'loadPackage("LightningCAS", FileName => "{package_file().as_posix()}");\n'


def run_m2(tmp_path, body: str, m2: str, name: str = "run.m2", timeout: float = 600):
    path = tmp_path / name
    path.write_text(load_line() + body)
    return run_script(path, timeout=timeout, m2=m2)


# ---- the package on its own (no Python in the computation) --------------------------------------


@pytest.mark.m2
@pytest.mark.slow
def test_the_package_tests_pass_under_check(m2, tmp_path):
    """`check "LightningCAS"` runs every TEST block; a failing one makes M2 exit non-zero."""
    out = run_m2(tmp_path, 'check "LightningCAS";\nprint "LCAS-CHECK-PASSED";\n', m2)
    assert "LCAS-CHECK-PASSED" in out.stdout
    ran = (out.stdout + out.stderr).count("check(")
    assert ran >= 8, out.stdout + out.stderr


@pytest.mark.m2
def test_a_failing_package_test_is_seen(m2, tmp_path):
    """The check above can fail: the same machinery on a package with a false TEST exits non-zero."""
    import shutil

    from lightning_cas.errors import M2Error

    copy = tmp_path / "m2"
    shutil.copytree(package_file().parent, copy)
    tests = copy / "LightningCAS" / "Tests.m2"
    text = tests.read_text().replace(
        "assert(neurovarietyDimension({3,1}, {1}, 1) == 7)", "assert(neurovarietyDimension({3,1}, {1}, 1) == 8)"
    )
    assert "== 8)" in text
    tests.write_text(text)
    broken = copy / "LightningCAS.m2"
    script = tmp_path / "check.m2"
    script.write_text(
        f'loadPackage("LightningCAS", FileName => "{broken.as_posix()}");\n'
        'check(4, "LightningCAS");\nprint "LCAS-CHECK-PASSED";\n'
    )
    with pytest.raises(M2Error) as err:
        run_script(script, timeout=600, m2=m2)
    assert "LCAS-CHECK-PASSED" not in (err.value.output or "")


@pytest.mark.m2
def test_neurovariety_dimension_333_22_2_is_23_in_plain_m2(m2, tmp_path):
    """The done-when line: an M2 user's script prints 23; modp agrees (a second, independent way)."""
    out = run_m2(tmp_path, "print neurovarietyDimension({3,3,3},{2,2},2);\n", m2)
    assert out.stdout.strip().splitlines()[-1] == "23"
    assert dimension_modp(Architecture((3, 3, 3), (2, 2), 2)).dimension == 23


def examples() -> list[tuple[str, str]]:
    """(doc file, statement) for every statement of every Example section of the package's docs; an
    indented line continues the statement above it."""
    out = []
    for path in sorted((REPO / "m2" / "LightningCAS").glob("*Documentation.m2")):
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            if line.strip() != "Example":
                continue
            base = None
            for body in lines[i + 1 :]:
                if not body.strip():
                    continue
                indent = len(body) - len(body.lstrip())
                if indent <= len(line) - len(line.lstrip()) or body.strip() == "///":
                    break
                base = indent if base is None else base
                if indent > base:
                    out[-1] = (out[-1][0], out[-1][1] + "\n" + body.strip())
                else:
                    out.append((path.name, body.strip()))
    return out


def test_the_examples_are_found():
    found = examples()
    assert len(found) >= 30
    assert any("neuralNetwork(4, 3" in s and "powerBlock 2" in s for _, s in found)  # a two-line statement


def docs_recipe() -> tuple[str, str]:
    """The two Macaulay2 blocks under "Installing it" in docs/macaulay2.md: install, then load by name."""
    text = (REPO / "docs" / "macaulay2.md").read_text()
    section = text[text.index("## Installing it") : text.index("## The files")]
    blocks = re.findall(r"```m2\n(.*?)```", section, re.S)
    assert len(blocks) == 2, blocks
    return blocks[0], blocks[1]


@pytest.mark.m2
@pytest.mark.slow
def test_the_install_recipe_of_the_docs_works_as_written(m2, tmp_path):
    """The docs' installPackage line (into a temp prefix) runs every example and checks every doc node;
    then a fresh Macaulay2 with the docs' path line loads the package by name and finds its help."""
    prefix = tmp_path / "prefix"
    install, load = (
        block.replace("/path/to/lightning_cas/m2/LightningCAS.m2", package_file().as_posix()).replace(
            "/some/dir/", f"{prefix.as_posix()}/"
        )
        for block in docs_recipe()
    )
    script = tmp_path / "install.m2"
    script.write_text(install.rstrip() + ';\nprint "LCAS-INSTALLED";\n')
    out = run_script(script, timeout=900, m2=m2)
    both = out.stdout + out.stderr
    assert "LCAS-INSTALLED" in out.stdout
    assert "warning" not in both.lower() and "error" not in both.lower(), both[-2000:]
    outputs = list(prefix.rglob("LightningCAS/example-output/*.out"))
    assert len(outputs) >= 10, outputs
    # every statement of every Example section ran (installPackage stops on the first that fails, and shows
    # each value with net, as a help page does): its first line is an input line of some output file
    shown = "\n".join(p.read_text() for p in outputs)
    missing = [(f, s) for f, s in examples() if f" : {s.splitlines()[0]}" not in shown]
    assert not missing, missing[:5]
    fresh = tmp_path / "fresh.m2"
    fresh.write_text(
        load.replace("help LightningCAS", "h = toString help LightningCAS;")
        + textwrap.dedent("""
        << "@@LCAS@@ source " << LightningCAS#"source file" << endl;
        << "@@LCAS@@ dimension " << neurovarietyDimension({3,3,3}, {2,2}, 2) << endl;
        << "@@LCAS@@ cites " << toString match("2408.17221", h) << endl;
        """)
    )
    recs = records(run_script(fresh, timeout=300, m2=m2).stdout)
    assert recs["source"].startswith(prefix.as_posix()) and recs["dimension"] == "23" and recs["cites"] == "true"


# ---- what it computes, against Python ----------------------------------------------------------


def _m2_entries(tmp_path, m2, call: str) -> list[sympy.Expr]:
    out = run_m2(tmp_path, f'printRecord new HashTable from {{"entries" => flatten entries {call}}};\n', m2)
    return json_polynomials(json_record(out.stdout), "entries")


@pytest.mark.m2
def test_lightning_network_equals_the_python_model(m2, tmp_path):
    """Same polynomials from M2 (package) and sympy (core/model.py), two layers, two tokens."""
    arch = Architecture((2, 1, 1), (1, 1), 2)
    ours = _m2_entries(tmp_path, m2, "lightningNetwork({2,1,1}, {1,1}, 2)")
    theirs = [e for row in network_output(arch).tolist() for e in row]
    assert len(ours) == len(theirs) == 2
    for a, b in zip(ours, theirs):
        assert sympy.expand(a - b) == 0


@pytest.mark.m2
def test_two_heads_are_the_sum_of_two_single_head_layers(m2, tmp_path):
    """Heads => {2}: the package's output is the hand-written sum over heads, weights head by head."""
    out = run_m2(
        tmp_path,
        'printRecord new HashTable from {"w" => apply(lightningWeights({2,1}, {1}, Heads => {2}), toString)};\n',
        m2,
    )
    names = json.loads(out.stdout.split(JSON_MARK)[1])["w"]
    assert names == [f"{m}_(1,{h},1,{c})" for h in (1, 2) for m in "qkv" for c in (1, 2)]
    assert names == [str(s) for s in flat_weight_symbols(Architecture((2, 1), (1,), 2, heads=(2,)))]
    ours = _m2_entries(tmp_path, m2, "lightningNetwork({2,1}, {1}, 2, Heads => {2})")
    X = sympy.Matrix(2, 2, lambda r, j: sympy.Symbol(f"x_({r + 1},{j + 1})"))
    total = sympy.zeros(1, 2)
    for h in (1, 2):
        Q, K, V = (sympy.Matrix(1, 2, lambda r, c, m=m: sympy.Symbol(f"{m}_(1,{h},1,{c + 1})")) for m in "qkv")
        total += V * X * (X.T * K.T * Q * X)
    assert [sympy.expand(a - b) for a, b in zip(ours, total)] == [0, 0]


# ---- JSON records: the contract between the package and Python ----------------------------------

GOOD = JSON_MARK + json.dumps(
    {
        "rank": 3,
        "ok": True,
        "v": "1.21",
        "degs": [1, 2],
        "gens": ["q_(1,1,1)^2-3*y_2"],
        "w": ["3", "-3/8"],
        "none": None,
    }
)


def test_a_good_record_reads_back():
    rec = json_record("noise\n" + GOOD + "\nmore noise\n")
    assert json_int(rec, "rank") == 3 and json_bool(rec, "ok") is True and json_str(rec, "v") == "1.21"
    assert json_int_list(rec, "degs") == [1, 2]
    assert json_polynomials(rec, "gens") == [sympy.Symbol("q_(1,1,1)") ** 2 - 3 * sympy.Symbol("y_2")]
    assert json_rationals(rec, "w") == [3, sympy.Rational(-3, 8)] and json_rationals(rec, "none") is None


@pytest.mark.parametrize(
    "output",
    [
        "",
        "no record here\n",
        GOOD + "\n" + GOOD + "\n",
        JSON_MARK + '{"rank": 3\n',
        JSON_MARK + "[1, 2]\n",
        JSON_MARK + '{"rank": .75}\n',
        JSON_MARK + '{"rank": 0.75}\n',
        JSON_MARK + '{"rank": NaN}\n',
        JSON_MARK + '{"rank": Infinity}\n',
        JSON_MARK + '{"rank": 1' + "0" * 5000 + "}\n",
        JSON_MARK + "[" * 100000 + "]" * 100000 + "\n",
    ],
)
def test_malformed_records_are_refused(output):
    with pytest.raises(M2ParseError):
        json_record(output, "script.m2")


@pytest.mark.parametrize(
    "getter,value",
    [
        (json_int, True),
        (json_int, "3"),
        (json_int, None),
        (json_int, [3]),
        (json_bool, 1),
        (json_str, 3),
        (json_int_list, [1, True]),
        (json_int_list, "{1, 2}"),
        (json_polynomials, ["__import__('os')"]),
        (json_polynomials, [3]),
        (json_polynomials, "x"),
        (json_rationals, ["1/0"]),
        (json_rationals, ["1.5"]),
        (json_rationals, [True]),
        (json_rationals, [0.5]),
        (json_rationals, "3/4"),
        (json_rationals, ["1" * 5000]),
    ],
)
def test_wrong_types_are_refused(getter, value):
    with pytest.raises(M2ParseError) as err:
        getter({"key": value}, "key", "script.m2")
    assert "script.m2" in str(err.value)


def test_a_missing_key_is_named():
    with pytest.raises(M2ParseError, match="lacks the key 'rank'"):
        json_int({"rows": 1}, "rank")


@pytest.mark.m2
def test_what_real_m2_gets_wrong_is_refused(m2, tmp_path):
    """JSON's own toJSON rounds rationals to floats, and writes .75 (not JSON): both refused."""
    out = run_m2(
        tmp_path, f'needsPackage "JSON";\nprint("{JSON_MARK}" | toJSON(new HashTable from {{"w" => {{3/4}}}}));\n', m2
    )
    with pytest.raises(M2ParseError, match="malformed JSON"):
        json_record(out.stdout)
    out = run_m2(tmp_path, 'printRecord new HashTable from {"w" => {3/4, 2}};\n', m2, "ok.m2")
    assert json_rationals(json_record(out.stdout), "w") == [sympy.Rational(3, 4), 2]


@pytest.mark.m2
def test_a_doctored_fiber_record_is_refused(m2, monkeypatch):
    """A real fiber record with its dimension changed, or a witness for another function, is refused."""
    arch = Architecture((2, 1), (1,), 2)
    real = Macaulay2.run

    def doctor(change):
        def run(self, template, params):
            script, rec = real(self, template, params)
            change(rec)
            return script, rec

        return run

    point = fibers.unflatten(arch, [1, 2, 3, -1, 1, 1])
    res = fibers.fiber(arch, point, seed=0, method="m2", m2=m2)
    assert res.fiber_dimension == 2 and any(c.witness for c in res.components)
    monkeypatch.setattr(Macaulay2, "run", doctor(lambda rec: rec.update(fiber_dimension=3)))
    with pytest.raises(M2ParseError, match="fiber dimension 3"):
        fibers.fiber(arch, point, seed=0, method="m2", m2=m2)

    def bad_witness(rec):
        for comp in rec["components"]:
            if comp["witness"] is not None:
                comp["witness"] = ["1"] * arch.parameters

    monkeypatch.setattr(Macaulay2, "run", doctor(bad_witness))
    with pytest.raises(M2ParseError, match="witness of component"):
        fibers.fiber(arch, point, seed=0, method="m2", m2=m2)
    monkeypatch.setattr(Macaulay2, "run", doctor(lambda rec: rec["components"][0].update(contains_point=1)))
    with pytest.raises(M2ParseError, match="true/false"):
        fibers.fiber(arch, point, seed=0, method="m2", m2=m2)


# ---- rendering: numbers, the package path, one call -------------------------------------------


def test_package_scripts_are_numbers_then_the_package_path_then_one_call():
    from lightning_cas.macaulay2.network import package_params

    arch = Architecture((3, 3, 3), (2, 2), 2)
    text = render("dimension_jacobian", **package_params(arch), charP=101, seed=0, columns=1)
    lines = text.splitlines()
    assert lines[1] == SEARCH_PATH_LINE
    assert lines[2:5] == ["inputWidth = 3;", "tokens = 2;", "blocks = {{0, 1, 2, 0, 3, 0, 0}, {0, 1, 2, 0, 3, 0, 0}};"]
    assert f'lcasPackage = "{package_file().as_posix()}";' in lines
    assert "lcasNetwork" not in text and "printRecord dimensionRecord(" in text


@pytest.mark.parametrize(
    "bad", ['/opt/we"ird/m2/LightningCAS.m2', "/opt/back\\slash/LightningCAS.m2", "/opt/new\nline/LightningCAS.m2"]
)
def test_a_package_path_that_cannot_be_quoted_is_refused(bad, monkeypatch):
    from pathlib import PurePosixPath

    from lightning_cas.macaulay2 import render as render_module

    monkeypatch.setattr(render_module, "package_file", lambda: PurePosixPath(bad))
    with pytest.raises(ValueError, match="cannot be quoted"):
        render_module.render("fiber", widths=[2, 1])


@pytest.mark.m2
def test_multi_head_dimension_m2_package_equals_modp(m2):
    """Heads go from Python into the package: M2's Jacobian rank equals the modp engine's, and the
    hand count for two heads on (2,1), a=1, t=2 (linear forms times quadratic forms: 2 * 3 = 6)."""
    from lightning_cas.backends.m2 import dimension_jacobian

    for heads, expected in (((1,), 4), ((2,), 6)):
        arch = Architecture((2, 1), (1,), 2, heads=heads)
        assert dimension_jacobian(arch, Macaulay2(m2)).dimension == dimension_modp(arch).dimension == expected
    mixed = Architecture((2, 2, 1), (1, 1), 2, heads=(2, 1))
    assert dimension_jacobian(mixed, Macaulay2(m2)).dimension == dimension_modp(mixed).dimension
