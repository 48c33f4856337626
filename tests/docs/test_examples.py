"""The Python examples of README.md and docs/ run as written: each file's ```python blocks in order, in a
fresh interpreter in an empty directory, and a line ``expression  # literal`` must give that literal (a
comment that is not a whole Python literal stays a comment). A renamed function or a changed number in an
example fails here, not for the user who pastes it. They use Macaulay2 (dimension by jacobian, implicit)."""

from __future__ import annotations

import ast
import doctest
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"```python\n(.*?)```", re.S)
FILES = [p for p in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))] if BLOCK.search(p.read_text())]

pytestmark = pytest.mark.m2


def checked(code: str) -> str:
    """Each top-level ``expression  # literal`` line becomes an assertion that the expression equals it."""
    out = []
    for line in code.splitlines():
        expr, sep, comment = line.partition("  #")
        if sep and expr.strip() and not line.startswith((" ", "\t")):
            try:
                value = ast.literal_eval(comment.strip())
                ast.parse(expr.strip(), mode="eval")
            except (ValueError, SyntaxError):
                pass
            else:
                line = f"assert ({expr.strip()}) == {value!r}, ({expr.strip()!r}, {expr.strip()})"
        out.append(line)
    return "\n".join(out)


def test_the_examples_are_found():
    assert {p.name for p in FILES} >= {"README.md", "api.md", "networks.md", "critical.md"}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_python_examples_run_as_written(path, tmp_path, m2):
    blocks = BLOCK.findall(path.read_text())
    if all(b.lstrip().startswith(">>>") for b in blocks):  # a doctest
        test = doctest.DocTestParser().get_doctest("\n".join(blocks), {}, path.name, str(path), 0)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        runner.run(test)
        assert runner.failures == 0 and test.examples
        return
    code = checked("\n".join(blocks))
    assert "assert (" in code or path.name == "README.md"  # the examples state values to check
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env={"PATH": str(Path(m2).parent) + ":/usr/bin:/bin", "PYTHONPATH": str(REPO), "HOME": str(tmp_path)},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
