"""One output door for text from outside: file names, record fields and Macaulay2's strings pass through
``core.display.escape`` for terminals, CSV, HTML/Markdown and LaTeX."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from click.testing import CliRunner

from lightning_cas.batch.tables import cell, to_csv
from lightning_cas.cli import main
from lightning_cas.core.network import Attention, Network
from lightning_cas.results.display import MODES, escape, html_value, printable

HOSTILE = "\x1b]0;pwned\x07\x1b[2J\rfake line\u202eevil\x00"


@pytest.mark.parametrize("mode", MODES)
def test_no_control_or_format_character_survives_any_mode(mode):
    out = escape(HOSTILE, mode)
    assert not any(c in out for c in "\x1b\x07\r\x00\u202e")
    assert "x1b" in out and "u202e" in out  # shown (as \\x1b; in LaTeX its backslash escaped too), not dropped


def test_newlines_are_kept_only_when_asked():
    assert escape("a\nb", "terminal") == "a\\x0ab" and escape("a\nb\tc", "terminal", "\n\t") == "a\nb\tc"
    assert printable("a\nb", keep_newlines=True) == "a\nb"


@pytest.mark.parametrize("value", ['=HYPERLINK("http://x")', "+1+1", "-2+3", "@SUM(A1)", "\t=1", "\r=1"])
def test_a_csv_cell_never_starts_a_formula(value):
    out = escape(value, "csv")  # a tab or CR is first shown as \\x09 or \\x0d, which starts no formula either
    assert not out.startswith(("=", "+", "-", "@", "\t", "\r")) and out.lstrip("'").endswith(value[1:])


def test_numbers_in_csv_are_untouched_and_a_record_host_is_inert():
    assert [cell(v) for v in (-3, 2.5, [2, 2], None, "vm")] == ["-3", "2.500", "2-2", "", "vm"]
    text = to_csv([{"label": "x", "host": "=cmd|' /C calc'!A0", "message": "-1 failed"}], ("label", "host", "message"))
    row = list(csv.DictReader(io.StringIO(text)))[0]
    assert row["host"] == "'=cmd|' /C calc'!A0" and row["message"] == "'-1 failed"


def test_html_markdown_and_latex_are_inert():
    assert escape("<script>&", "html") == "&lt;script&gt;&amp;"
    assert html_value("<b>x</b>") == "&lt;b&gt;x&lt;/b&gt;"
    assert escape("a|b`c<i>", "markdown") == "a\\|b'c&lt;i&gt;"
    assert (
        escape(r"\input{/etc/passwd} $x$ 50% a_b ^ ~ # &", "latex")
        == r"\textbackslash{}input\{/etc/passwd\} \$x\$ 50\% a\_b \^{} \~{} \# \&"
    )


def test_a_hostile_file_name_is_shown_escaped_by_every_command_that_echoes_it(tmp_path):
    net = Network(2, 1, (Attention(1),))
    arch = tmp_path / "net.json"
    arch.write_text(json.dumps(net.to_dict()))
    name = tmp_path / "w\x1b]0;pwned\x07\x1b[2J.npz"
    np.savez(name, weights=np.arange(1, net.parameters + 1, dtype=float))
    inputs = tmp_path / "in\x1b[31m\u202e.npy"
    np.save(inputs, np.arange(1, 9, dtype=float).reshape(4, 2, 1))
    for args in (
        ["dim", "--arch", arch, "--at", name],
        ["dim", "--arch", arch, "--inputs", inputs],
        ["fiber", "--arch", arch, "--at", name],
        ["dim", "--arch", tmp_path / "gone\x1b[2J.json"],
    ):
        res = CliRunner().invoke(main, [str(a) for a in args] + ["--quiet"], catch_exceptions=True)
        text = res.stdout + res.stderr
        assert res.exit_code in (0, 2, 3), (res.exit_code, text)
        assert not any(c in text for c in "\x1b\x07\u202e"), text
        assert "\\x1b" in text, text  # the name is there, escaped
