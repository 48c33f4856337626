"""The anchor's own approach, timed beside ours: a homotopy `solve` of the boundary's Lagrange system, with PHCpack's
blackbox solver (`phc -b`, Debian's phcpack) as the stand-in for the paper's HomotopyContinuation.jl call.

For each of the anchor's architectures the boundary's Lagrange system is posed as the paper poses it: in the
n input coordinates with the Euclidean metric, g(x) = f_1(x) - f_2(x) = 0 and x - u - l grad g(x) = 0, weights
drawn as in `critical_anchor` (seed 0) and divided by 1000 (so in [-1, 1], a network's usual scale), u a small
random integer point. The *same* system is solved twice: by msolve mod two primes (its exact degree, the ED degree)
and by `phc -b` in double precision (coefficients scaled per equation to at most 1, which only helps it). The table
puts phc's regular, singular, real and diverged counts beside the exact count with both times: a homotopy count
below the exact one lost paths, and nothing in a homotopy run says so.

Run: `python -m benchmarks.phc_stand_in --out bench/phc_stand_in.md` (part of `make critical`). Without a `phc`
binary on PATH it writes a table that says so and exits 0 (the benchmark is optional; `make critical` installs
phcpack through apt-get where it can)."""

from __future__ import annotations

import argparse
import random
import re
import shutil
import subprocess
import tempfile
import time
from fractions import Fraction
from pathlib import Path

from benchmarks.critical_anchor import ARCHITECTURES, READOUT, network, random_weights, write_tables
from lightning_cas.errors import LightningError
from lightning_cas.geometry.decision.system import boundary_polynomial, input_names
from lightning_cas.geometry.degree.msolve import MSOLVE_PRIMES, agreed
from lightning_cas.msolve.solve import leading_ideal

POINT_RANGE = 3  # u: integers in +-3, like a data point

COLUMNS = ["case", "unknowns", "ed_degree", "msolve_s", "phc_regular", "phc_singular", "phc_real", "phc_infinity"]
COLUMNS += ["phc_s", "verdict", "note"]
SUMMARY = {
    "phc_regular": "Number of regular solutions",
    "phc_singular": "Number of singular solutions",
    "phc_real": "Number of real solutions",
    "phc_infinity": "Number of solutions at infinity",
}


def phc_text(system: list[dict], names: list[str]) -> str:
    """The system in PHCpack's input format: its size, then one polynomial per ';', each scaled so that its largest
    coefficient is 1 in absolute value (floats in 17 digits: what a double-precision homotopy sees)."""
    lines = [f"{len(system)} {len(names)}"]
    for poly in system:
        top = max(abs(Fraction(c)) for c in poly.values())
        terms = []
        for exps, c in sorted(poly.items(), reverse=True):
            mono = "*".join(f"{v}^{e}" if e > 1 else v for v, e in zip(names, exps) if e)
            coef = f"{float(Fraction(c) / top):+.17e}"
            terms.append(f"{coef}*{mono}" if mono else coef)
        lines.append(" " + " ".join(terms) + ";")
    return "\n".join(lines) + "\n"


def read_summary(text: str) -> dict:
    """The last 'Number of ... solutions' block of a `phc -b` output file (None where it is missing)."""
    out = {}
    for key, label in SUMMARY.items():
        found = re.findall(rf"{label}\s*:\s*(\d+)", text)
        out[key] = int(found[-1]) if found else None
    return out


def phc_solve(system: list[dict], names: list[str], timeout: float, phc: str) -> tuple[dict, float, str]:
    """`phc -b` on the system in a private directory: its summary counts, the wall time, a note (time limit)."""
    with tempfile.TemporaryDirectory(prefix="lcas-phc-") as tmp:
        src, out = Path(tmp) / "system.txt", Path(tmp) / "solutions.txt"
        src.write_text(phc_text(system, names))
        start = time.perf_counter()
        try:
            subprocess.run([phc, "-b", str(src), str(out)], cwd=tmp, timeout=timeout, capture_output=True, check=False)
        except subprocess.TimeoutExpired:
            return {}, time.perf_counter() - start, f"phc -b exceeded {timeout:g} s"
        spent = time.perf_counter() - start
        text = out.read_text(errors="replace") if out.exists() else ""
    counts = read_summary(text)
    return counts, spent, "" if counts["phc_regular"] is not None else "phc -b wrote no solution summary"


def verdict(exact, regular) -> str:
    if exact is None or regular is None:
        return "not compared"
    if regular == exact:
        return "phc finds every critical point"
    if regular < exact:
        return f"phc LOST {exact - regular} of {exact}"
    return f"phc reports {regular - exact} MORE than the exact count (spurious or duplicated)"


def lagrange_in_inputs(g, u) -> list[dict]:
    """g = 0 and x_i - u_i - l dg/dx_i = 0 in (x, l): the critical points of the distance from u on g = 0."""
    n = len(u)
    lift = lambda d, e: {tuple(int(x) for x in k) + (e,): Fraction(int(c.p), int(c.q)) for k, c in d.items()}
    system = [lift(g.to_dict(), 0)]
    for i in range(n):
        eq = {k: -c for k, c in lift(g.derivative(i).to_dict(), 1).items()}
        unit = tuple(1 if a == i else 0 for a in range(n)) + (0,)
        eq[unit] = eq.get(unit, 0) + 1
        eq[(0,) * (n + 1)] = eq.get((0,) * (n + 1), 0) - u[i]
        system.append({k: v for k, v in eq.items() if v != 0})
    return system


def exact_count(system: list[dict], names: list[str]) -> tuple[int, float]:
    """The system's degree by msolve mod both primes (they must agree); its time."""
    counts, spent = [], 0.0
    for p in MSOLVE_PRIMES:
        ideal = leading_ideal(names, system, p, stem="msolve-phc-stand-in")
        counts.append(ideal.degree if ideal.dimension == 0 else None)
        spent += ideal.elapsed_s
    count, _ = agreed(counts, (1, 1), MSOLVE_PRIMES, "solutions")
    return count, spent


def row(n: int, layers, r: int, seed: int, timeout: float, phc: str | None) -> dict:
    case = f"({n},[{','.join(map(str, layers))}],{r})"
    out: dict = {"case": case, "note": ""}
    net = network(n, layers, r)
    rng = random.Random(seed)
    try:
        g, _ = boundary_polynomial(net, [v / 1000 for v in random_weights(net, seed)], READOUT)
        u = [rng.randint(-POINT_RANGE, POINT_RANGE) for _ in range(n)]
        while g(*u) == 0:
            u = [rng.randint(-POINT_RANGE, POINT_RANGE) for _ in range(n)]
        system, names = lagrange_in_inputs(g, u), [*input_names(n), "l"]
        count, msolve_s = exact_count(system, names)
    except LightningError as exc:
        return dict(out, verdict="not computed", note=f"{type(exc).__name__}: {exc}"[:200])
    out.update(unknowns=len(names), ed_degree=count, msolve_s=round(msolve_s, 2))
    if phc is None:
        return dict(out, verdict="not compared", note="no phc binary on PATH (Debian: apt-get install phcpack)")
    counts, spent, note = phc_solve(system, names, timeout, phc)
    out.update(counts, phc_s=round(spent, 1), note=note)
    out["verdict"] = verdict(out["ed_degree"], out.get("phc_regular"))
    return out


def markdown(rows: list[dict], seed: int, timeout: float, phc: str | None) -> str:
    version = "none"
    if phc:
        probe = subprocess.run([phc, "--version"], capture_output=True, text=True, timeout=30, check=False)
        version = probe.stdout.strip() or "unknown"
    head = (
        "# The anchor's homotopy approach beside the exact count (`make critical`)\n\n"
        "Written by benchmarks/phc_stand_in.py. The same Lagrange system of each decision boundary (random integer "
        f"weights in +-[1, 1000] divided by 1000, seed {seed}, readout (1, -1), u random in +-{POINT_RANGE}, posed "
        "in the n input coordinates) solved by msolve mod two "
        f"primes (the exact ED degree) and by PHCpack's blackbox `phc -b` ({version}), the stand-in for the paper's "
        f"homotopy `solve`; {timeout:g} s per phc run. Unknowns: the input coordinates and the multiplier.\n\n"
    )
    cols = COLUMNS[:-1]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        lines.append("| " + " | ".join("—" if r.get(c) is None else str(r[c]) for c in cols) + " |")
    notes = [f"- {r['case']}: {r['note']}" for r in rows if r.get("note")]
    return head + "\n".join(lines) + ("\n\nNotes:\n\n" + "\n".join(notes) if notes else "") + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("bench/phc_stand_in.md"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args(argv)
    phc = shutil.which("phc")
    rows = []
    for n, layers, r in ARCHITECTURES:
        rows.append(row(n, layers, r, args.seed, args.timeout, phc))
        print(rows[-1], flush=True)
    write_tables(args.out, markdown(rows, args.seed, args.timeout, phc), rows, COLUMNS)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
