"""The smooth activations and their derivatives, (f(x), f'(x)), in float64 and in arb balls: one place per
function, so a new activation is one row in each table (core.arithmetic's Float64 and Balls read them)."""

from __future__ import annotations

import math

import numpy as np

# the cubic coefficient of the tanh form of GELU (PyTorch's kKappa), as float and as the exact decimal arb reads
GELU_TANH_KAPPA = 0.044715
GELU_TANH_KAPPA_TEXT = "0.044715"


def _tanh(A):
    T = np.tanh(A)
    return T, 1.0 - T * T


def _gelu(A):  # x Phi(x), Phi the normal distribution (PyTorch's default GELU)
    Phi = 0.5 * (1.0 + np.vectorize(math.erf, otypes=[float])(A / math.sqrt(2.0)))
    return A * Phi, Phi + A * np.exp(-0.5 * A * A) / math.sqrt(2.0 * math.pi)


def _silu(A):  # x sigma(x), PyTorch's SiLU
    S = 1.0 / (1.0 + np.exp(-A))
    return A * S, S * (1.0 + A * (1.0 - S))


def _gelu_tanh(A):  # PyTorch's GELU(approximate="tanh")
    c = math.sqrt(2.0 / math.pi)
    T = np.tanh(c * (A + GELU_TANH_KAPPA * A**3))
    return 0.5 * A * (1.0 + T), 0.5 * (1.0 + T) + 0.5 * A * (1.0 - T * T) * c * (1.0 + 3.0 * GELU_TANH_KAPPA * A * A)


FLOAT = {"tanh": _tanh, "gelu": _gelu, "silu": _silu, "gelu_tanh": _gelu_tanh}


def _ball_tanh(flint):
    def f(x):
        t = x.tanh()
        return t, 1 - t * t

    return f


def _ball_gelu(flint):
    root2, root2pi = flint.arb(2).sqrt(), (2 * flint.arb.pi()).sqrt()

    def f(x):
        phi = (1 + (x / root2).erf()) / 2
        return x * phi, phi + x * (-(x * x) / 2).exp() / root2pi

    return f


def _ball_silu(flint):
    def f(x):
        s = 1 / (1 + (-x).exp())
        return x * s, s * (1 + x * (1 - s))

    return f


def _ball_gelu_tanh(flint):
    c, kappa = (2 / flint.arb.pi()).sqrt(), flint.arb(GELU_TANH_KAPPA_TEXT)

    def f(x):
        t = (c * (x + kappa * x**3)).tanh()
        return x * (1 + t) / 2, (1 + t) / 2 + x * (1 - t * t) * c * (1 + 3 * kappa * x * x) / 2

    return f


# name -> (flint module -> (x -> (f(x), f'(x)))): the constants are made once per call, at its precision
BALLS = {"tanh": _ball_tanh, "gelu": _ball_gelu, "silu": _ball_silu, "gelu_tanh": _ball_gelu_tanh}
