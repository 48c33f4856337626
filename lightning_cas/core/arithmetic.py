"""The arithmetic protocol: the one set of operations the forward definition of a network runs on.

``core.forward`` writes every block once, in terms of these operations on numpy arrays (batched
over a leading axis); the arithmetic decides what an entry is:

* ``ModP(p)``: GF(p) as centred float64 residues on BLAS with delayed reduction (``core.gfp``):
  the exact engine of ``modp`` (default) and of ranks at given weights;
* ``ModP2(p)``: GF(p^2), p = 3 mod 4, as complex128 pairs on the same kernels: random points from p^2
  values per coordinate, so one run's failure bound is that of a prime near p^2;
* ``IntegersModP(p)``: GF(p) on int64 (slower, an independent check of ``ModP``);
* ``Float64()``: the float baseline and the softmax backend's fast path;
* ``Balls(dps)``: python-flint ``arb`` balls at ``dps`` digits (object arrays): softmax at high
  precision, with enclosures that certify a minor is nonzero;
* ``Rationals()``: python-flint ``fmpq`` (object arrays): exact over QQ at small sizes;
* ``Polynomials(ring)``: sympy ring elements (object arrays): the symbolic parametrization.

Only the real arithmetics (``Float64``, ``Balls``) have ``softmax`` and the analytic functions (tanh, GELU,
the inverse square root of LayerNorm); the others refuse them. ReLU needs only signs: ``Rationals`` and the
real arithmetics decide them, ``ModP`` and ``Polynomials`` take them from an exact pass (``core.forward``).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from lightning_cas.core import activations, gfp
from lightning_cas.errors import UnsupportedError


class Arithmetic:
    """What ``core.forward`` needs; every method takes and returns arrays of this arithmetic."""

    name = "arithmetic"
    exact = True
    real = False  # has an order and exp: softmax is defined

    def array(self, values) -> np.ndarray:
        """Values (integers, Fractions, floats as the subclass allows) as an array of this arithmetic."""
        raise NotImplementedError

    def zeros(self, shape) -> np.ndarray:
        raise NotImplementedError

    def ones(self, shape) -> np.ndarray:
        return self.array(np.ones(shape, dtype=np.int64))

    def matmul(self, A, B):
        return np.matmul(A, B)

    def add(self, A, B):
        return A + B

    def sub(self, A, B):
        return A - B

    def mul(self, A, B):
        """Entrywise product (broadcasting)."""
        return A * B

    def scale(self, A, c: int):
        """c A for a small integer c."""
        return A * c

    def power(self, A, r: int):
        """Entrywise A^r, r >= 1 (by repeated products, so every arithmetic stays exact)."""
        out = A
        for _ in range(r - 1):
            out = self.mul(out, A)
        return out

    def sum(self, A, axis: int, keepdims: bool = False):
        return A.sum(axis=axis, keepdims=keepdims)

    def softmax(self, S, mask):
        """Column-wise softmax of S (..., t, t) over the key axis -2, restricted to mask (1 kept, 0 not)."""
        raise UnsupportedError(f"softmax is not defined over {self.name}: it is not polynomial.")

    def signs(self, A) -> np.ndarray:
        """The signs (-1, 0, 1, int array) of A's entries: what ReLU needs."""
        raise UnsupportedError(
            f"ReLU needs the signs of its inputs, which {self.name} has not: they come from an exact pass over QQ."
        )

    def analytic(self, name: str, A):
        """(f(A), f'(A)) entrywise for f = tanh or gelu (x Phi(x), Phi the normal distribution), or
        (A^(-1/2), None) for "rsqrt"."""
        raise UnsupportedError(f"{name} is not defined over {self.name}: it is not polynomial.")

    def random(self, rng: np.random.Generator, shape) -> np.ndarray:
        raise NotImplementedError


def _object_signs(A, sign) -> np.ndarray:
    flat = np.asarray(A, dtype=object).reshape(-1)
    return np.fromiter((sign(v) for v in flat), dtype=np.int64, count=flat.size).reshape(np.shape(A))


class ModP(Arithmetic):
    """GF(p), p < 2^26, on centred float64 residues (``core.gfp``): the exact fast engine."""

    exact = True

    def __init__(self, prime: int):
        self.prime = gfp.check_modulus(prime)
        self.name = f"GF({prime})"

    def array(self, values) -> np.ndarray:
        """Integers or Fractions (any representatives; a denominator must be invertible mod p)."""
        arr = np.asarray(values)
        if arr.dtype == object:
            p = self.prime
            flat = [_residue(v, p) for v in arr.reshape(-1)]
            return gfp.centred(np.array(flat, dtype=np.int64).reshape(arr.shape), p)
        if arr.dtype.kind == "f":
            if arr.size and not np.all(arr == np.rint(arr)):
                raise ValueError("ModP.array takes integers or Fractions; convert floats exactly first")
            arr = arr.astype(np.int64)
        return gfp.centred(arr, self.prime)

    def zeros(self, shape):
        return np.zeros(shape)

    def matmul(self, A, B):
        return gfp.matmul(A, B, self.prime)

    def add(self, A, B):
        """A + B, in A's storage when it can (the forward pass hands over fresh arrays)."""
        if A.shape == np.broadcast_shapes(A.shape, B.shape) and A.flags.writeable:
            A += B
            return gfp.reduce(A, self.prime)
        return gfp.reduce(A + B, self.prime)

    def sub(self, A, B):
        return gfp.reduce(A - B, self.prime)

    def mul(self, A, B):
        return gfp.reduce(A * B, self.prime)

    def scale(self, A, c: int):
        return gfp.reduce(A * float(c % self.prime), self.prime)

    def sum(self, A, axis, keepdims=False):
        # |x| <= p / 2 + 3 < 2^25: a sum over fewer than 2^27 terms stays exact before the reduction
        return gfp.reduce(A.sum(axis=axis, keepdims=keepdims), self.prime)

    def random(self, rng, shape):
        """Uniform residues (the same draws as ``IntegersModP(p).random``), centred."""
        return gfp.centred(rng.integers(0, self.prime, size=shape, dtype=np.int64), self.prime)

    def residues(self, A) -> np.ndarray:
        """As int64 in [0, p)."""
        return gfp.residues(A, self.prime)


class ModP2(ModP):
    """GF(p^2) = GF(p)[i], i^2 = -1, for a prime p = 3 mod 4 (-1 is then not a square), on complex128 centred
    residues (``core.gfp``). GF(p) sits inside as the real numbers, so integer and rational data enter as they
    do in ``ModP``; only random draws use the imaginary part."""

    def __init__(self, prime: int):
        super().__init__(prime)
        if prime % 4 != 3:
            raise ValueError(f"GF(p^2) as GF(p)[i] needs p = 3 mod 4, got {prime}")
        self.name = f"GF({prime}^2)"

    def array(self, values) -> np.ndarray:
        arr = np.asarray(values)
        if arr.dtype.kind == "c":
            return gfp.reduce(np.array(arr, dtype=np.complex128), self.prime)
        return super().array(values).astype(np.complex128)

    def zeros(self, shape):
        return np.zeros(shape, dtype=np.complex128)

    def random(self, rng, shape):
        out = super().random(rng, shape).astype(np.complex128)
        out.imag = super().random(rng, shape)
        return out

    def inverse(self, z: complex) -> complex:
        return gfp.inverse(z, self.prime)


class IntegersModP(Arithmetic):
    """GF(p), p < 2^31, on int64 residues in [0, p): slower than ModP, and independent of its float tricks."""

    def __init__(self, prime: int):
        self.prime = prime
        self.name = f"GF({prime}) (int64)"

    def array(self, values):
        arr = np.asarray(values)
        if arr.dtype == object:
            return np.array([_residue(v, self.prime) for v in arr.reshape(-1)], dtype=np.int64).reshape(arr.shape)
        return arr.astype(np.int64) % self.prime

    def zeros(self, shape):
        return np.zeros(shape, dtype=np.int64)

    def matmul(self, A, B):
        p = self.prime
        # entries < p < 2^31: split B into 16-bit halves so each partial product is < 2^47 and a sum
        # over fewer than 2^16 terms stays below 2^63
        hi = np.matmul(A, B >> 16) % p
        lo = np.matmul(A, B & 0xFFFF) % p
        return ((hi << 16) + lo) % p

    def add(self, A, B):
        return (A + B) % self.prime

    def sub(self, A, B):
        return (A - B) % self.prime

    def mul(self, A, B):
        return (A * B) % self.prime

    def scale(self, A, c: int):
        return (A * (c % self.prime)) % self.prime

    def sum(self, A, axis, keepdims=False):
        return A.sum(axis=axis, keepdims=keepdims) % self.prime

    def random(self, rng, shape):
        return rng.integers(0, self.prime, size=shape, dtype=np.int64)


class Float64(Arithmetic):
    """IEEE doubles: the float baseline and the softmax fast path."""

    name = "float64"
    exact = False
    real = True

    def array(self, values):
        return np.asarray(values, dtype=np.float64)

    def zeros(self, shape):
        return np.zeros(shape)

    def softmax(self, S, mask):
        """Shifted by the column maximum of the kept entries, so exp never overflows."""
        keep = mask.astype(bool)
        shift = np.where(keep, S, -np.inf).max(axis=-2, keepdims=True)
        E = np.where(keep, np.exp(np.where(keep, S - shift, 0.0)), 0.0)
        return E / E.sum(axis=-2, keepdims=True)

    def signs(self, A):
        return np.sign(A).astype(np.int64)

    def analytic(self, name, A):
        if name in activations.FLOAT:
            return activations.FLOAT[name](A)
        if name == "rsqrt":
            return 1.0 / np.sqrt(A), None
        return super().analytic(name, A)

    def random(self, rng, shape):
        return rng.standard_normal(shape)


def _object_array(values, convert) -> np.ndarray:
    arr = np.asarray(values, dtype=object)
    out = np.empty(arr.shape, dtype=object)
    flat = out.reshape(-1)
    for k, v in enumerate(arr.reshape(-1)):
        flat[k] = convert(v)
    return out


class Balls(Arithmetic):
    """python-flint arb balls (object arrays); the caller sets the precision (``flint.ctx.workdps``).

    A float enters exactly (a double is a dyadic rational), so every ball encloses the exact value
    of the computation at the given point."""

    exact = False
    real = True

    def __init__(self, dps: int):
        import flint

        self.flint = flint
        self.dps = dps
        self.name = f"arb {dps} digits"

    def array(self, values):
        flint = self.flint

        def ball(v):
            if isinstance(v, Fraction):
                return flint.arb(flint.fmpq(v.numerator, v.denominator))
            if isinstance(v, flint.arb):
                return v
            if isinstance(v, (int, np.integer)):
                return flint.arb(int(v))
            return flint.arb(float(v))

        return _object_array(values, ball)

    def zeros(self, shape):
        out = np.empty(shape, dtype=object)
        out.fill(self.flint.arb(0))
        return out

    def softmax(self, S, mask):
        """No shift: arb's exponent range is unbounded (and comparing overlapping balls is undecided)."""
        keep = np.asarray(mask, dtype=bool)
        zero = self.flint.arb(0)
        E = np.empty(S.shape, dtype=object)
        flat_e, flat_s = E.reshape(-1), S.reshape(-1)
        flat_k = np.broadcast_to(keep, S.shape).reshape(-1)
        for k in range(flat_s.size):
            flat_e[k] = flat_s[k].exp() if flat_k[k] else zero
        return E / E.sum(axis=-2, keepdims=True)

    def signs(self, A):
        """Decided only where the ball excludes 0 (else one line: more digits are needed)."""

        def sign(v):
            if v > 0:
                return 1
            if v < 0:
                return -1
            raise UnsupportedError(
                f"a ReLU input's ball {v.str(5, radius=True)} contains 0 at {self.dps} digits: "
                "its side of the kink is not decided."
            )

        return _object_signs(A, sign)

    def analytic(self, name, A):
        flint = self.flint
        flat = np.asarray(A, dtype=object).reshape(-1)
        F, dF = np.empty(flat.size, dtype=object), np.empty(flat.size, dtype=object)
        if name in activations.BALLS:
            f = activations.BALLS[name](flint)
            for k, x in enumerate(flat):
                F[k], dF[k] = f(x)
        elif name == "rsqrt":
            for k, x in enumerate(flat):
                F[k] = 1 / x.sqrt()
            return F.reshape(np.shape(A)), None
        else:
            return super().analytic(name, A)
        return F.reshape(np.shape(A)), dF.reshape(np.shape(A))

    def random(self, rng, shape):
        return self.array(rng.standard_normal(shape))


class Rationals(Arithmetic):
    """python-flint fmpq (object arrays): exact over QQ; floats enter as the binary rationals they are."""

    name = "QQ"

    def __init__(self):
        import flint

        self.flint = flint

    def array(self, values):
        flint = self.flint

        def rational(v):
            if isinstance(v, flint.fmpq):
                return v
            if isinstance(v, (float, np.floating)):
                v = Fraction(float(v))
            v = Fraction(v)
            return flint.fmpq(v.numerator, v.denominator)

        return _object_array(values, rational)

    def zeros(self, shape):
        out = np.empty(shape, dtype=object)
        out.fill(self.flint.fmpq(0))
        return out

    def signs(self, A):
        zero = self.flint.fmpq(0)
        return _object_signs(A, lambda v: (v > zero) - (v < zero))

    def random(self, rng, shape):
        return self.array(rng.integers(-1000, 1001, size=shape))


class Polynomials(Arithmetic):
    """Elements of a sympy polynomial ring (``sympy.polys.rings``; object arrays): the symbolic network."""

    def __init__(self, ring):
        self.ring = ring
        self.name = f"polynomial ring {ring}"

    def array(self, values):
        ring = self.ring
        return _object_array(values, lambda v: v if isinstance(v, type(ring.zero)) else ring(v))

    def zeros(self, shape):
        out = np.empty(shape, dtype=object)
        out.fill(self.ring.zero)
        return out


def _residue(v, p: int) -> int:
    """An integer or rational as a residue mod p (a denominator divisible by p is refused)."""
    q = Fraction(v)
    if q.denominator % p == 0:
        raise ZeroDivisionError(f"the denominator of {q} is divisible by {p}")
    return q.numerator % p * pow(q.denominator, -1, p) % p
