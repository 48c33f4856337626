"""The tables of the dimension, geometry and softmax sections, as rows of cells: report.py writes them as
Markdown and prints them with rich, bench.py's progress lines use the cells. Apart from report.py, which
writes the results file and the report around them."""

from __future__ import annotations

from benchmarks.summary import ok_time


def dim_cell(entry: dict) -> str:
    """A measurement's dimension as a table cell, or why there is none."""
    status = entry.get("status")
    if not entry:
        return "-"
    if status == "ok":
        return str(entry["dimension"])
    return {"refused (too large)": "refused", "timeout": "timeout"}.get(status, "error")


def sec(entry: dict) -> str:
    """A measurement's seconds as a table cell."""
    t = ok_time(entry)
    return f"{t:.3f}" if t is not None else "-"


def _mib(entry: dict, key: str = "peak_rss_bytes") -> str:
    v = entry.get(key)
    return f"{v / 2**20:.0f}" if v else "-"


def dimension_table(rows: list[dict]) -> tuple[list[str], list[list[str]]]:
    head = [
        "case",
        "widths",
        "a",
        "t",
        "P",
        "theory",
        "modp",
        "M2",
        "paper",
        "fast float",
        "agree",
        "modp s",
        "paper s",
        "fast float s",
        "fast float 1T s",
        "M2 s",
        "modp MiB",
        "paper MiB",
        "fast float MiB",
        "M2 MiB",
    ]
    body = []
    for r in rows:
        agree = {True: "yes", False: "**DISAGREE**", None: "-"}[r["agree"]]
        if r["theory_verdict"] == "disagree":
            agree += " / **THEORY DISAGREES**"
        body.append(
            [
                r["group"],
                ",".join(map(str, r["widths"])),
                ",".join(map(str, r["attention"])),
                str(r["tokens"]),
                str(r["parameters"]),
                str(r["theory"] if r["theory"] is not None else "n/a"),
                dim_cell(r["modp"]),
                dim_cell(r["jacobian"]),
                dim_cell(r.get("paper", {})),
                dim_cell(r["numeric"]),
                agree,
                sec(r["modp"]),
                sec(r.get("paper", {})),
                sec(r["numeric"]),
                sec(r.get("numeric_1thread", {})),
                sec(r["jacobian"]),
                _mib(r["modp"]),
                _mib(r.get("paper", {})),
                _mib(r["numeric"]),
                _mib(r["jacobian"], "m2_peak_rss_bytes"),
            ]
        )
    return head, body


def softmax_table(rows: list[dict]) -> tuple[list[str], list[list[str]]]:
    head = [
        "delta",
        "paper",
        "softmax dim",
        "agree",
        "softmax s",
        "min gap (dec)",
        "high prec.",
        "lightning float dim",
        "lightning float s",
    ]
    body = [
        [
            str(r["delta"]),
            str(r["expected_softmax"]),
            str(r["softmax_dimension"]),
            "yes" if r["agree"] else "**DISAGREE**",
            f"{r['softmax_seconds']:.3f}",
            str(r["softmax_min_gap_decades"]),
            "yes" if r["softmax_high_precision"] else "no",
            str(r["lightning_float_dimension"]),
            f"{r['lightning_float_seconds']:.3f}",
        ]
        for r in rows
    ]
    return head, body


def _geometry_detail(r: dict) -> str:
    if "certificate" in r:
        return f"boundary: {str(r.get('boundary')).lower()} ({r['certificate']})"
    return str(r.get("pieces", r.get("candidates", r.get("generator_degrees", "-"))))


def geometry_table(rows: list[dict]) -> tuple[list[str], list[list[str]]]:
    head = [
        "bench",
        "d",
        "d'",
        "a",
        "one coord.",
        "status",
        "dim",
        "theory",
        "degree",
        "#gens",
        "gen degrees / pieces / candidates / verdict",
        "s",
    ]
    body = [
        [
            r["bench"] + (f" t={r['tokens']}" if r.get("tokens", 2) != 2 else ""),
            str(r["d"]),
            str(r["d_out"]),
            str(r["a"]),
            "yes" if r["one_coordinate"] else "no",
            r["status"] if r["status"] == "ok" else f"**{r['status']}**: {r.get('error', '')}"[:120],
            str(r.get("dimension", "-")),
            str(r.get("theory", "-")),
            str(r.get("degree", "-")) + (f" (consensus {r['consensus']})" if "consensus" in r else ""),
            str(r.get("generators", "-")),
            _geometry_detail(r),
            f"{r['elapsed_s']:.1f}",
        ]
        for r in rows
    ]
    return head, body


def md_table(head, body) -> str:
    """A Markdown table; a | inside a cell is written /."""
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(c.replace("|", "/") for c in row) + " |" for row in body]
    return "\n".join(lines)
