"""What the Macaulay2 and LaTeX forms of every result share: comments, the header, rings and ideals.

Each result type writes its own body beside its fields (``m2_lines``, ``latex_lines``);
``geometry.formats`` puts the header, the package's network ``N`` and the body together (it alone
knows Macaulay2's side). Every polynomial is read back through the strict parser and written again
before it is printed (:func:`ideal`), so a result file that was tampered with cannot smuggle Macaulay2
code into the script; comments are escaped for their file.
"""

from __future__ import annotations

import re
import typing
from dataclasses import dataclass

from lightning_cas.core.names import coordinate_names, latex_name, parse_polynomial, polynomial_latex, polynomial_text
from lightning_cas.results.display import escape


@dataclass(frozen=True)
class M2Context:
    """What a Macaulay2 body may need from Macaulay2's side: the size of the package's coefficient
    Jacobian of a network, and the size beyond which Macaulay2 does not finish it."""

    jacobian_entries: typing.Callable[[object], int]
    jacobian_limit: int


def comment(text: str, mark: str = "--") -> str:
    mode = "latex" if mark == "%" else "terminal"  # a record's fields stay inert in either file
    return "\n".join(f"{mark} {escape(line, mode)}" for line in str(text).splitlines() or [""])


def header(res, mark: str = "--") -> list[str]:
    how = [res.method, res.certainty]
    if res.m2_version:
        how.append(f"Macaulay2 {res.m2_version}")
    how += [f"lightning_cas {res.lightning_cas_version}", f"seed {res.seed}"]
    return [
        comment(f"lightning_cas {type(res).__name__}: {res.architecture}", mark),
        comment("; ".join(map(str, how)), mark),
    ]


def one_layer_model(res) -> str:
    """The package's call that recomputes the variety's ideal of a one-layer result, in R's coordinates."""
    arch = res.architecture
    one = ", OneCoordinate => true" if getattr(res, "one_coordinate", False) else ""
    return (
        f"sub(implicitIdeal implicitModel({{{arch.widths[0]}, {arch.widths[1]}}}, {{{arch.attention[0]}}}, "
        f"{arch.tokens}{one}), R)"
    )


def checked_text(poly: str) -> str:
    """A polynomial text checked and rewritten (ValueError if it is not a polynomial)."""
    return polynomial_text(parse_polynomial(poly))


def ideal(gens, ring: str = "R") -> str:
    texts = [checked_text(g) for g in gens]
    if not texts:
        return f"ideal(0_{ring})"
    if any(not re.search(r"[a-z]", t) for t in texts):  # a constant: promote it into the ring, not ZZ
        return f"ideal(matrix({ring}, {{{{{', '.join(texts)}}}}}))"
    return "ideal(" + ", ".join(texts) + ")"


def ring(field: str, variables) -> str:
    return f"{field}[{', '.join(variables)}]"


def y_ring(n: int) -> str:
    return f"QQ[y_1..y_{n}]" if n > 1 else ring("QQ", coordinate_names(n))


def coordinate_comments(res, with_polynomials: bool = False) -> list[str]:
    if not res.coordinate_labels:
        return []
    lines = ["-- y_i is the coefficient of a token monomial in output row p of output token 1:"]
    for name, row, monomial, poly in res.coordinate_table():
        tail = f" = {poly}" if with_polynomials and poly else ""
        lines.append(comment(f"  {name}: row {row}, {monomial}{tail}"))
    return lines


# ---------------------------------------------------------------- LaTeX


def latex_ideal(name: str, gens, ring: str) -> str:
    polys = [polynomial_latex(parse_polynomial(g)) for g in gens] or ["0"]
    body = ",\\\\\n  & ".join(polys)
    return f"\\begin{{align*}}\n  {name} = \\langle\\, & {body} \\,\\rangle \\subseteq {ring}\n\\end{{align*}}"


def latex_ring(n: int) -> str:
    return rf"\mathbb{{Q}}[y_{{1}}, \ldots, y_{{{n}}}]" if n > 1 else r"\mathbb{Q}[y_{1}]"


def latex_coordinates(res) -> list[str]:
    if not res.coordinate_labels:
        return []
    rows = [
        f"  ${latex_name(name)}$ & {row} & ${polynomial_latex(parse_polynomial(monomial))}$ \\\\"
        for name, row, monomial, _ in res.coordinate_table()
    ]
    return [
        "% y_i is the coefficient of a token monomial in output row p of output token 1",
        "\\begin{tabular}{lll}",
        "  coordinate & output row & coefficient of \\\\",
        *rows,
        "\\end{tabular}",
    ]
