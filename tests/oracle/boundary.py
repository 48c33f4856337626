"""The oracle's own look at a decision boundary B = {X : <w, f_W(X)> = 0}: points of B on lines through X0.

On the line X0 + s u the boundary function is a polynomial in s of degree at most the network's degree in
the tokens, so its values at that many points and one more (the oracle's own forward pass, in mpmath)
determine it; its real roots are points of B at distance |s| |u| from X0. No point found this way may be
nearer than a certified robustness radius: the radius is the distance to the nearest real point of B.
"""

from __future__ import annotations

import random

import mpmath
from mpmath import mp

from tests.oracle.forward import forward, number


def boundary_value(net, weights, readout, X) -> mpmath.mpf:
    """<w, f_W(X)> with the oracle's forward pass (X: d_0 x t nested rows)."""
    Y = forward(net, weights, X)
    return mp.fsum(number(readout[i][j]) * Y[i, j] for i in range(Y.rows) for j in range(Y.cols))


def nearest_on_lines(
    net, weights, readout, x0, degree: int, lines: int = 200, seed: int = 0, digits: int = 60
) -> float:
    """The smallest distance from X0 to a real point of B found on ``lines`` random lines through X0."""
    rng = random.Random(seed)
    d, t = net.input, net.tokens
    best = mp.inf
    with mp.workdps(digits):
        base = [[number(x0[i][j]) for j in range(t)] for i in range(d)]
        for _ in range(lines):
            u = [[mp.mpf(rng.gauss(0, 1)) for _ in range(t)] for _ in range(d)]
            norm = mp.sqrt(mp.fsum(x * x for row in u for x in row))
            nodes = [mp.mpf(k) - mp.mpf(degree) / 2 for k in range(degree + 1)]
            values = [
                boundary_value(net, weights, readout, [[base[i][j] + s * u[i][j] for j in range(t)] for i in range(d)])
                for s in nodes
            ]
            V = mp.matrix([[s**k for k in range(degree + 1)] for s in nodes])
            coeffs = mp.lu_solve(V, mp.matrix(values))  # constant term first
            poly = [coeffs[k] for k in range(degree, -1, -1)]
            while poly and abs(poly[0]) < mp.mpf(10) ** (-digits // 2) * max(abs(c) for c in poly):
                poly = poly[1:]
            if len(poly) < 2:
                continue
            for root in mpmath.polyroots(poly, maxsteps=200, extraprec=2 * digits):
                if abs(mpmath.im(root)) < mp.mpf(10) ** (-digits // 3):
                    best = min(best, abs(mpmath.re(root)) * norm)
    return float(best)
