"""The report script's table: every outcome a column, every family a row, the draws all counted, and
the exit status says whether any draw was wrong or an error."""

from __future__ import annotations

from tests.oracle import report
from tests.oracle.check import OUTCOMES
from tests.oracle.networks import FAMILIES


def test_the_table_counts_every_draw_once(capsys):
    status = report.main(["--draws", str(len(FAMILIES)), "--seed", "2"])
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert all(k in lines[0] for k in OUTCOMES)
    rows = {line.split()[0]: [int(v) for v in line.split()[1:]] for line in lines[2 : 3 + len(FAMILIES)]}
    assert set(rows) == set(FAMILIES) | {"all"}
    assert all(row[-1] == 1 for name, row in rows.items() if name != "all")
    assert rows["all"][-1] == len(FAMILIES) == sum(rows["all"][:-1])
    bad = rows["all"][OUTCOMES.index("wrong")] + rows["all"][OUTCOMES.index("error")]
    assert status == (1 if bad else 0) and out.count("\nwrong: ") + out.count("\nerror: ") == bad
