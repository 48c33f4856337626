"""The Macaulay2 package's types show as text, and every example of its help pages runs without an error.

``installPackage`` runs the examples too (the slow install test), but only here is each one checked on
its own: the value of every example line is shown with ``net`` (as a help page shows it), so a type
whose ``net`` fails is caught even when the line itself succeeds.
"""

from __future__ import annotations

import re
import textwrap

import pytest

from lightning_cas.macaulay2.render import SEARCH_PATH_LINE, package_file
from lightning_cas.macaulay2.runner import run_script
from tests.macaulay2.test_package import REPO

ERROR_MARK = "@@LCAS-EXAMPLE-ERROR@@"


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
            for body in lines[i + 1:]:
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


@pytest.mark.m2
@pytest.mark.slow
def test_every_example_runs_and_shows(m2, tmp_path):
    """Each statement in try; its value through net (print N of a NeuralNetwork was an error); ``oo``
    (the previous value) is the previous statement's."""
    body = [SEARCH_PATH_LINE, f'loadPackage("LightningCAS", FileName => "{package_file().as_posix()}");',
            "lcasValue = null;"]
    for n, (_, statement) in enumerate(examples()):
        statement = re.sub(r"\boo\b", "lcasPrevious", statement)
        body.append("lcasPrevious = lcasValue;")
        body.append(f'lcasValue = try ({statement}) else (<< "{ERROR_MARK} {n}" << endl; null);')
        body.append(f'try (net lcasValue; toString lcasValue) else << "{ERROR_MARK} {n} (shown)" << endl;')
    script = tmp_path / "examples.m2"
    script.write_text("\n".join(body) + '\n<< "@@LCAS-DONE@@" << endl;\n')
    out = run_script(script, timeout=600, m2=m2)
    assert "@@LCAS-DONE@@" in out.stdout, out.stderr[-2000:]
    failed = sorted({int(m) for m in re.findall(re.escape(ERROR_MARK) + r" (\d+)", out.stdout)})
    listing = examples()
    assert not failed, "\n".join(f"{listing[i][0]}: {textwrap.shorten(listing[i][1], 120)}" for i in failed)


@pytest.mark.m2
def test_every_type_shows_as_its_description(m2, tmp_path):
    """net, toString and print of NeuralNetwork, NetworkBlock and ImplicitModel: the one short text."""
    script = tmp_path / "types.m2"
    load = f'loadPackage("LightningCAS", FileName => "{package_file().as_posix()}");\n'
    script.write_text(SEARCH_PATH_LINE + "\n" + load + textwrap.dedent('''
        N = neuralNetwork(2, 2, {attentionBlock(1, Causal => true), mlpBlock(2), linearBlock 1,
            powerBlock 2});
        M = implicitModel({1,1}, {1}, 1);
        for x in {N, first N#"blocks", M} do (print x; << "@@" << toString x << "@@" << toString net x << endl);
        '''))
    out = run_script(script, timeout=300, m2=m2).stdout
    shown = re.findall(r"@@(.*)@@(.*)", out)
    assert [a for a, _ in shown] == [b for _, b in shown]  # toString and net agree
    assert shown[0][0].startswith("a network on 2 token(s) of width 2: attention(heads 1, attention 1, out 2, causal)")
    assert shown[0][0].endswith("(18 weights)")  # 4 + 4 (Q, K, V) + 8 (U, D) + 2 (P)
    assert shown[1][0] == "attention(heads 1, attention 1, out 2, causal)"
    assert shown[2][0].startswith("an implicit model of widths {1, 1}")
