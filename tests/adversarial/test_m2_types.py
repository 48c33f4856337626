"""The Macaulay2 package's types show as text: net, toString and print give the one short description.

That every example of the help pages runs, and shows its value with ``net`` as a help page does, is checked
by the install test of tests/macaulay2/test_package.py: ``installPackage`` runs every example line and
stops with an error on any that fails (its own printing of a value is ``net``).
"""

from __future__ import annotations

import re
import textwrap

import pytest

from lightning_cas.macaulay2.render import SEARCH_PATH_LINE, package_file
from lightning_cas.macaulay2.runner import run_script


@pytest.mark.m2
def test_every_type_shows_as_its_description(m2, tmp_path):
    """net, toString and print of NeuralNetwork, NetworkBlock and ImplicitModel: the one short text."""
    script = tmp_path / "types.m2"
    load = f'loadPackage("LightningCAS", FileName => "{package_file().as_posix()}");\n'
    script.write_text(
        SEARCH_PATH_LINE
        + "\n"
        + load
        + textwrap.dedent("""
        N = neuralNetwork(2, 2, {attentionBlock(1, Causal => true), mlpBlock(2), linearBlock 1,
            powerBlock 2});
        M = implicitModel({1,1}, {1}, 1);
        for x in {N, first N#"blocks", M} do (print x; << "@@" << toString x << "@@" << toString net x << endl);
        """)
    )
    out = run_script(script, timeout=300, m2=m2).stdout
    shown = re.findall(r"@@(.*)@@(.*)", out)
    assert [a for a, _ in shown] == [b for _, b in shown]  # toString and net agree
    assert shown[0][0].startswith("a network on 2 token(s) of width 2: attention(heads 1, attention 1, out 2, causal)")
    assert shown[0][0].endswith("(18 weights)")  # 4 + 4 (Q, K, V) + 8 (U, D) + 2 (P)
    assert shown[1][0] == "attention(heads 1, attention 1, out 2, causal)"
    assert shown[2][0].startswith("an implicit model of widths {1, 1}")
