"""docs/macaulay2.md against the package: one table row per exported symbol (a new export without a row, or a
row for a symbol the package no longer exports, fails here), and the typed-results example runs as printed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lightning_cas.macaulay2.render import package_file
from lightning_cas.macaulay2.runner import run_script

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "macaulay2.md"


def exports() -> list[str]:
    """The symbols of the `export {...}` list of m2/LightningCAS.m2, in order (comments skipped)."""
    text = (REPO / "m2" / "LightningCAS.m2").read_text()
    body = text[text.index("export {") :]
    body = body[: body.index("}")]
    return re.findall(r'"(\w+)"', "\n".join(line.split("--")[0] for line in body.splitlines()))


def section(title: str) -> str:
    text = DOC.read_text()
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def table_rows() -> list[tuple[str, str]]:
    """(symbol, description) for every body row of the tables under "Every exported symbol"."""
    rows = []
    for line in section("Every exported symbol").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or set(cells[0]) <= set("-") or cells[0] in ("type", "function", "option"):
            continue
        rows.append((cells[0], cells[1] if len(cells) > 1 else ""))
    return rows


def test_the_export_list_is_read():
    names = exports()
    assert len(names) == len(set(names)) >= 70
    assert {"NeuralNetwork", "neurovariety", "mapDimension", "edDegree", "trainingRecord", "MaxPaths"} <= set(names)


def test_every_exported_symbol_has_one_row_with_a_description():
    rows = table_rows()
    cells = [name for name, _ in rows]
    assert all(re.fullmatch(r"`\w+`", c) for c in cells), [c for c in cells if not re.fullmatch(r"`\w+`", c)]
    names = [c.strip("`") for c in cells]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    assert not duplicated, duplicated
    missing = sorted(set(exports()) - set(names))
    assert not missing, f"exported but without a row in docs/macaulay2.md: {missing}"
    stale = sorted(set(names) - set(exports()))
    assert not stale, f"a row in docs/macaulay2.md for a symbol the package does not export: {stale}"
    assert all(len(d.split()) >= 3 for _, d in rows), [r for r in rows if len(r[1].split()) < 3]


def test_a_new_export_without_a_row_would_fail():
    """The check above can fail: an export list with one more symbol is not matched by the tables."""
    names = {c.strip("`") for c, _ in table_rows()}
    assert set(exports() + ["someNewFunction"]) - names == {"someNewFunction"}


@pytest.mark.m2
def test_the_typed_results_example_runs_as_printed(m2, tmp_path):
    """The m2 block under "Typed results and your own maps", with each `-- number` comment checked."""
    block = re.search(r"```m2\n(.*?)```", section("Typed results and your own maps"), re.S).group(1)
    lines = [f'loadPackage("LightningCAS", FileName => "{package_file().as_posix()}");']
    expected = []
    for line in block.splitlines():
        code, _, comment = line.partition("--")
        first = re.match(r"\s*(\d+)", comment)
        if first and comment.strip()[0].isdigit():
            *setup, last = code.strip().rstrip(";").split(";  ")
            lines += [s + ";" for s in setup] + [f'print("@@VALUE@@ " | toString({last.strip()}));']
            expected.append(first.group(1))
        else:
            lines.append(code.rstrip() + ";")
    path = tmp_path / "typed.m2"
    path.write_text("\n".join(lines) + "\n")
    out = run_script(path, timeout=300, m2=m2).stdout
    values = re.findall(r"@@VALUE@@ (.*)", out)
    assert len(values) == len(expected) == 4, (values, expected)
    assert values == expected
    shown = tmp_path / "net.m2"
    shown.write_text(lines[0] + "\nsetRandomSeed 0;\nprint net neurovariety({3,3,3}, {2,2}, 2);\n")
    summary = run_script(shown, timeout=300, m2=m2).stdout
    assert re.search(r"dimension\s+23", summary) and re.search(r"fiber dimension\s+19", summary)
