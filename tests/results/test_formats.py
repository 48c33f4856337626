"""`--format m2` and `--format latex` against the real Macaulay2: the printed script loads the package and
defines the network N, the ring R and, under their own names, the variety's ideal I, the singular locus S,
the boundary's closure B and the fiber's ideal F; `M2 --script` of it followed by `dim I, degree I` (and
so on) gives the numbers the command printed; the ideals are equal, in Macaulay2, to the ones the package
computes on its own (implicitIdeal, singularLocus, singularStrata, weightStrata, fiberIdeal): the round
trip goes through our parser and printer and back. `dim --format m2` and `verify --format m2` of networks
of blocks, pasted into one Macaulay2 session, give the same dimension through `neurovarietyDimension N`.

Also the text output that explains itself: which coefficient each y_i is, and the failure bound.
"""

from __future__ import annotations

import json
import re
import subprocess
from fractions import Fraction
from pathlib import Path

import pytest
from click.testing import CliRunner

from lightning_cas.cli import main
from lightning_cas.core.architecture import Architecture
from lightning_cas.macaulay2.render import package_file
from lightning_cas.system.points import save_point

ONE_LAYER = {"211": ["--widths", "2,1", "--attention", "1"], "212": ["--widths", "2,1", "--attention", "2"]}


def cli(*args):
    runner = CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()
    return runner.invoke(main, list(args))


def m2_values(m2, tmp_path, script: str, tail: str) -> list:
    """Paste the script into a fresh Macaulay2 with the package loaded (as a user of it would), then run
    ``tail`` (which prints one JSON-like line); its values as a list."""
    path = tmp_path / "pasted.m2"
    path.write_text(load_package() + script + tail)
    out = subprocess.run([m2, "--script", str(path)], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    line = out.stdout.strip().splitlines()[-1]
    return json.loads(line.replace("true", "1").replace("false", "0").replace("{", "[").replace("}", "]"))


def load_package() -> str:
    return f'needsPackage("LightningCAS", FileName => "{package_file().as_posix()}");\n'


def test_scripts_take_no_name_of_macaulay2_or_the_package():
    """An assignment to a name the package exports (criticalImage is one) fails, or breaks the package."""
    from lightning_cas.api import load_result
    from lightning_cas.geometry.formats import m2_script

    exported = set(re.findall(r'"(\w+)"', package_file().read_text().split("export {")[1].split("}")[0]))
    assert {"criticalImage", "implicitIdeal", "weightStrata"} <= exported
    import lightning_cas.results as results  # each result type writes its own Macaulay2 body

    source = Path(m2_script.__code__.co_filename).read_text() + "".join(
        p.read_text() for p in sorted(Path(results.__file__).parent.glob("*.py"))
    )
    legacy = Path(__file__).parent / "data" / "legacy"
    assigned = set()
    for name in ("implicit_222.json", "singular_whole_211.json", "singular_strata_212.json", "fiber_211_m2.json"):
        assigned |= set(re.findall(r"^(\w+) = ", m2_script(load_result(legacy / name)), re.M))
    assert {
        "N",
        "R",
        "I",
        "S",
        "F",
        "P",
        "phi",
        "singularComponents",
        "slicePieces",
        "fiberComponents",
        "weightPoint",
        "sliceRing",
    } <= assigned
    assigned |= {"B", "criticalImageIdeal", "boundaryCandidates", "Rphi"}  # the boundary's, and the rings
    assert all(f"\n{name} = " in source or f"{name} = " in source for name in assigned - {"R", "I", "P", "phi", "S"})
    assert not assigned & exported and not assigned & {"components", "variety", "point", "ideal", "ring"}


def command(m2, name, case, *extra):
    text = cli(name, *ONE_LAYER[case], "--m2", m2, "--timeout", "600", *extra)
    assert text.exit_code == 0, text.output
    return text.stdout


@pytest.fixture(scope="module")
def implicit_json(m2):
    return json.loads(command(m2, "implicit", "211", "--json"))


def test_implicit_m2_round_trip(m2, tmp_path, implicit_json):
    script = command(m2, "implicit", "211", "--format", "m2")
    assert "**" not in script and "R = QQ[y_1..y_6];" in script and "q_(1,1,1)" in script
    got = m2_values(
        m2,
        tmp_path,
        script,
        (
            "J = sub(implicitIdeal implicitModel({2,1}, {1}, 2), R);\n"
            "print toString {dim I, degree I, if I == J then 1 else 0, if sub(ker phi, R) == I then 1 else 0};\n"
        ),
    )
    assert got == [implicit_json["dimension"], implicit_json["degree"], 1, 1]


@pytest.mark.parametrize("arch,route", [(Architecture((2, 2), (2,), 2), "V,A"), (Architecture((2, 1), (1,), 1), "V,Z")])
def test_the_parametrization_in_the_script_is_the_one_eliminated(m2, tmp_path, arch, route):
    """P and phi: the kernel of phi is I. The route modulo the rank minors ("V,A with rank") is checked in
    test_implicit_va.py on the ideal that file computes anyway (its kernel over QQ took 47 s here)."""
    from lightning_cas.geometry.formats import m2_script
    from lightning_cas.geometry.one_layer.implicit import implicit

    res = implicit(arch, m2=m2, timeout=600)
    assert res.parametrization.startswith(route)
    got = m2_values(
        m2, tmp_path, m2_script(res), "print toString {dim I, degree I, if sub(ker phi, R) == I then 1 else 0};\n"
    )
    assert got == [res.dimension, res.degree, 1]


def test_json_is_the_alias_of_format_json(m2, implicit_json):
    again = json.loads(command(m2, "implicit", "211", "--format", "json"))
    timing = ("elapsed_s", "script", "notes")  # the notes say how long the kernel took
    assert {k: v for k, v in again.items() if k not in timing} == {
        k: v for k, v in implicit_json.items() if k not in timing
    }
    out = cli("implicit", *ONE_LAYER["211"], "--json", "--format", "m2")
    assert out.exit_code == 2 and "--json is --format json" in out.output and "Traceback" not in out.output


def test_singular_strata_m2_round_trip(m2, tmp_path):
    script = command(m2, "singular", "212", "--format", "m2")
    assert "slicePieces = {" in script and "b_(1,1)" in script
    data = json.loads(command(m2, "singular", "212", "--json"))
    got = m2_values(
        m2,
        tmp_path,
        script,
        (
            'S0 = (singularStrata implicitModel({2,1}, {2}, 2))#"singular";\n'
            'J = sub(ideal S0#"generators", R);\n'
            "print toString {dim S, if S == J then 1 else 0, #slicePieces, dim I, degree I, "
            "if isSubset(I, S) then 1 else 0};\n"
        ),
    )
    variety = data["variety"]
    assert got == [data["singular_dimension"], 1, len(data["pieces"]), variety["dimension"], variety["degree"], 1]


def test_singular_whole_ideal_m2_round_trip(m2, tmp_path):
    script = command(m2, "singular", "211", "--method", "whole-ideal", "--format", "m2")
    data = json.loads(command(m2, "singular", "211", "--method", "whole-ideal", "--json"))
    got = m2_values(
        m2,
        tmp_path,
        script,
        (
            "J = sub(singularLocus implicitModel({2,1}, {1}, 2), R);\n"
            "print toString {dim S, if S == J then 1 else 0, apply(singularComponents, dim), "
            "apply(singularComponents, degree), dim I, degree I};\n"
        ),
    )
    assert got == [
        data["singular_dimension"],
        1,
        [c["dimension"] for c in data["components"]],
        [c["degree"] for c in data["components"]],
        data["variety"]["dimension"],
        data["variety"]["degree"],
    ]


def test_boundary_m2_round_trip(m2, tmp_path, implicit_json):
    point = tmp_path / "w.json"
    save_point(
        ((((Fraction(1), Fraction(2)),), ((Fraction(3), Fraction(-1)),), ((Fraction(6), Fraction(-2)),)),), point
    )
    script = command(m2, "boundary", "211", "--at", str(point), "--format", "m2")
    assert "-- the point: boundary true" in script and "criticalImageIdeal = ideal(" in script
    got = m2_values(
        m2,
        tmp_path,
        script,
        (
            'J = sub((weightStrata implicitModel({2,1}, {1}, 2))#"parallel", R);\n'
            "print toString {dim B, degree B, if B == J then 1 else 0, dim criticalImageIdeal, #boundaryCandidates, "
            "dim I, if isSubset(I, B) then 1 else 0};\n"
        ),
    )
    assert got[:3] == [3, 4, 1] and got[3] == 3 and got[4] >= 1
    assert got[5:] == [implicit_json["dimension"], 1]
    latex = command(m2, "boundary", "211", "--format", "latex")
    assert r"I_{\partial} = \langle" in latex and "**" not in latex and "y_{1}" in latex


def test_fiber_m2_round_trip(m2, tmp_path):
    out = cli("fiber", *ONE_LAYER["211"], "--m2", m2, "--method", "m2", "--seed", "1", "--format", "m2")
    assert out.exit_code == 0, out.output
    data = json.loads(cli("fiber", *ONE_LAYER["211"], "--m2", m2, "--method", "m2", "--seed", "1", "--json").stdout)
    got = m2_values(
        m2,
        tmp_path,
        out.stdout,
        (
            "F0 = fiberIdeal({2,1}, {1}, 2, weightPoint);\n"
            "J = sub(intersect minimalPrimes F0, R);\n"
            "W = map(QQ, R, weightPoint);\n"
            "print toString {dim F, if F == J then 1 else 0, "
            "apply(fiberComponents, P -> if W P == 0 then 1 else 0)};\n"
        ),
    )
    assert got == [data["fiber_dimension"], 1, [int(c["contains_point"]) for c in data["components"]]]
    modp = cli("fiber", *ONE_LAYER["211"], "--method", "modp", "--format", "m2")
    assert modp.exit_code == 0 and "F = null; -- no decomposition" in modp.stdout


def test_formats_that_have_no_ideal_are_refused_before_any_work(tmp_path):
    point = tmp_path / "w.json"
    save_point(((((Fraction(1), Fraction(2)),), ((Fraction(3), Fraction(-1)),), ((Fraction(1), Fraction(5)),)),), point)
    for args in (["singular", "--at", str(point)], ["boundary", "--at", str(point), "--verdict-only"]):
        for fmt in ("m2", "latex"):
            out = cli(*args, *ONE_LAYER["211"], "--format", fmt, "--m2", "/nonexistent/M2")
            assert out.exit_code == 2 and "computes none" in out.output and "Traceback" not in out.output


def test_text_says_what_each_coordinate_is(m2):
    text = command(m2, "implicit", "211")
    assert "y_1  row 1  x_(1,1)^3" in text and "output token 1" in text and "**" not in text
    full = command(m2, "implicit", "211", "--coordinates")
    assert "y_1  row 1  x_(1,1)^3  = k_(1,1,1)*q_(1,1,1)*v_(1,1,1)" in full
    singular = command(m2, "singular", "212")
    assert "y_6  row 1  x_(2,1)^3" in singular and "b_(1,1)" in singular


def test_text_shows_the_failure_bound():
    out = cli("dim", *ONE_LAYER["211"])
    assert out.exit_code == 0 and "failure bound" in out.stdout
    data = json.loads(cli("dim", *ONE_LAYER["211"], "--json").stdout)
    assert f"failure bound {data['failure_bound']:.2g}" in out.stdout


# ---- dim and verify --format m2 of networks of blocks, pasted into one Macaulay2 session ----------

NETWORKS = {
    "plain": ["--widths", "2,2", "--attention", "2"],
    "causal-residual": {
        "input": 2,
        "tokens": 2,
        "blocks": [{"kind": "attention", "attention": 1, "value": 1, "out": 2, "causal": True, "residual": True}],
    },
    "linear-power-mlp": {
        "input": 2,
        "tokens": 2,
        "blocks": [
            {"kind": "linear", "out": 2},
            {"kind": "power", "degree": 2},
            {"kind": "mlp", "hidden": 2, "out": 1},
        ],
    },
}


@pytest.fixture(scope="module")
def session(m2, tmp_path_factory):
    """One Macaulay2 process for the pastes of this module, with the package loaded (as a user who ran
    `lightning-cas notebook --install-package` has it by name)."""
    from lightning_cas.macaulay2.runner import M2Session

    where = tmp_path_factory.mktemp("pastes")
    loader = where / "load.m2"
    loader.write_text(load_package())
    with M2Session(m2, timeout=300) as s:
        s.run(loader)
        yield s, where


def paste(session, name: str, script: str, tail: str) -> list:
    s, where = session
    path = where / f"{name}.m2"
    path.write_text(script + tail)
    line = [x for x in s.run(path).stdout.splitlines() if x.strip()][-1]
    return json.loads(line.replace("{", "[").replace("}", "]"))


def network_args(tmp_path, name) -> list[str]:
    given = NETWORKS[name]
    if isinstance(given, list):
        return given
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(given))
    return ["--arch", str(path)]


@pytest.mark.parametrize("name", list(NETWORKS))
def test_dim_m2_builds_the_same_network(session, tmp_path, name):
    """The pasted N is the input network: the package counts the same weights and, by its own Jacobian
    over ZZ/p, finds the dimension the Python mod-p backend printed (two independent computations)."""
    args = network_args(tmp_path, name)
    data = json.loads(cli("dim", *args, "--json").stdout)
    out = cli("dim", *args, "--format", "m2")
    assert out.exit_code == 0, out.output
    script = out.stdout
    assert 'needsPackage("LightningCAS", FileName => "' in script and "\nN = neuralNetwork(" in script
    assert f"the dimension of the neurovariety: {data['dimension']}" in script
    got = paste(session, f"dim-{name}", script, 'print toString {neurovarietyDimension N, N#"parameters"};\n')
    assert got == [data["dimension"], data["parameters"]]


def test_verify_and_predict_m2_and_what_has_no_m2_form(session, tmp_path):
    args = network_args(tmp_path, "causal-residual")
    out = cli("verify", *args, "--format", "m2")
    assert out.exit_code == 0, out.output
    assert "-- verdict: " in out.stdout and "N = neuralNetwork(2, 2, {{0, 1, 1, 1, 2, 1, 1}});" in out.stdout
    computed = json.loads(cli("verify", *args, "--json").stdout)["computed"]
    assert paste(session, "verify", out.stdout, "print toString {neurovarietyDimension N};\n") == [
        computed["dimension"]
    ]
    theory = cli("predict", *args, "--format", "m2")
    assert theory.exit_code == 0 and "-- parameters: predicted " in theory.stdout
    weights = json.loads(cli("predict", *args, "--json").stdout)["parameters"]["value"]
    assert paste(session, "predict", theory.stdout, 'print toString {N#"parameters"};\n') == [weights]
    # softmax cannot be built in Macaulay2, and dim has no ideal to typeset: refused before any work
    soft = cli("dim", "--widths", "2,2", "--attention", "1", "--normalization", "softmax", "--format", "m2")
    assert soft.exit_code == 2 and "softmax" in soft.output and "Traceback" not in soft.output
    latex = cli("verify", *args, "--format", "latex")
    assert latex.exit_code == 2 and "computes none" in latex.output
