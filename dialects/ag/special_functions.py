"""The special functions of `ag.TABLE` (erf ... i1), each written once as scalar code.

An algorithm here is a function of an emitter `e` and its operands: it computes with
`e.add`, `e.mul`, `e.div`, `e.select`, `e.cmp`, `e.math("ExpOp", x)`, `e.libm("erfc",
x)`, `e.loop(trips, values, body)` (an `scf.for` carrying `values`), ... and never branches
in Python on a value. Two emitters run it:

- `arignote.lowering.loops.ag_scalar.TableEmitter` builds the `arith`/`math` ops (and libm
  calls) of one element: the native code;
- `ArrayEmitter` below applies the same operations to whole NumPy arrays: the
  interpreter's reference (no SciPy needed).

Every function computes in f64 (an f32 operand is widened and the result rounded once),
with branch-free selects between the regions of its algorithm. NaN in gives NaN out, and
the other special values (infinities, zeros, poles, outside the domain) are SciPy's.

The algorithms (all classic):

- `erf`, `erfc`, `gamma`, `gammaln`, `j0`, `j1`: C's libm (`erf`, `erfc`, `tgamma`,
  `lgamma`, `j0`, `j1`), with SciPy's special values where C's differ;
- `erfcx(x) = exp(x**2) erfc(x)`: `exp(x**2)` with `x**2` split exactly in two doubles
  (Dekker), times libm's `erfc` below 26, the asymptotic series
  `1 / (x sqrt(pi)) (1 - 1/(2x**2) + 3/(2x**2)**2 - ...)` (9 terms) above; for
  `x < 0`, `2 exp(x**2) - erfcx(-x)`;
- `erfinv`, `erfcinv`: Giles' single-precision `erfinv` polynomial ("Approximating the
  erfinv function", GPU Computing Gems, 2011) as the first guess for `|x| <= 1/2`,
  refined by two Newton steps on libm's `erf`; in the tails (`erfc(t) = q`, `q < 1/2`),
  the asymptotic guess `t**2 = L - log(pi L)/2` (`L = -log q`) refined by four Newton
  steps on `log(erfc(t)) = log(erfcx(t)) - t**2`, which is nearly linear in `t`;
- `psi` (digamma) and `tri_gamma`: the recurrence `psi(x) = psi(x + 1) - 1/x` up to
  `x >= 10`, then the asymptotic (Bernoulli-number) series, as Cephes' `psi`;
  reflection for `x < 0` with the argument reduced to `x - rint(x)` before `tan`/`sin`
  (near the zeros of `psi` below 0 the error is small only in absolute terms);
  below 3.01, where the recurrence cancels, a Taylor series about the positive zero of
  `psi` (1.4616..., coefficients from mpmath) on [0.91, 2.01], shifted by one step;
- `gammainc`, `gammaincc` (`P`, `Q`), `gammal`, `gammau` (times `gamma(k)`): Cephes'
  `igam` series where `x <= max(1, k)` and `igamc` continued fraction elsewhere (the
  other one as `1 - ...`), `10 sqrt(k + x) + 40` terms (at most 20000, an `scf.for`),
  times `exp(k log x - x - lgamma(k))`, whose rounding (about `k |log x|` eps) bounds
  the relative error for large `k`;
- `i0`, `i1`: the power series `sum (x**2/4)**k / (k! (k+n)!)` (48 terms) for
  `|x| <= 30`, Hankel's asymptotic expansion (24 terms) above, `exp(x)` applied as
  `exp(x/2)**2` so that the result overflows only where the function does.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np

SQRT_PI = math.sqrt(math.pi)
TWO_OVER_SQRT_PI = 2.0 / SQRT_PI

# --- helpers -------------------------------------------------------------------------------


def _c(e: Any, value: float, like: Any) -> Any:
    return e.const(value, like)


def _poly(e: Any, x: Any, coefficients: tuple[float, ...]) -> Any:
    """Horner's scheme, highest degree first."""
    acc = _c(e, coefficients[0], x)
    for c in coefficients[1:]:
        acc = e.add(e.mul(acc, x), _c(e, c, x))
    return acc


def _min(e: Any, x: Any, bound: float) -> Any:
    """`min(x, bound)`; NaN becomes `bound` (callers restore NaN at the end)."""
    b = _c(e, bound, x)
    return e.select(e.cmp("lt", x, b), x, b)


def _square_parts(e: Any, x: Any) -> tuple[Any, Any]:
    """`x * x` as `hi + lo` exactly (Veltkamp's split of `x`, Dekker's product); `|x|`
    must stay below about 1e150."""
    hi = e.mul(x, x)
    c = e.mul(_c(e, 134217729.0, x), x)  # 2**27 + 1
    xh = e.sub(c, e.sub(c, x))
    xl = e.sub(x, xh)
    lo = e.add(e.sub(e.mul(xh, xh), hi), e.mul(_c(e, 2.0, x), e.mul(xh, xl)))
    return hi, e.add(lo, e.mul(xl, xl))


def _exp_square(e: Any, x: Any) -> Any:
    """`exp(x**2)` without the rounding error of `x**2` (which `exp` would multiply by
    `x**2`); `|x|` is clamped to 27, where it already overflows."""
    hi, lo = _square_parts(e, _min(e, e.math("AbsFOp", x), 27.0))
    return e.mul(e.math("ExpOp", hi), e.add(_c(e, 1.0, x), lo))


def _keep_nan(e: Any, x: Any, result: Any) -> Any:
    return e.select(e.cmp("uno", x, x), x, result)


def _negate_if(e: Any, cond: Any, x: Any) -> Any:
    return e.select(cond, e.neg(x), x)


def _is_integer(e: Any, x: Any) -> Any:
    return e.cmp("eq", e.math("FloorOp", x), x)


# --- erf, erfc, erfcx ----------------------------------------------------------------------


def erf(e: Any, x: Any) -> Any:
    return e.math("ErfOp", x)


def erfc(e: Any, x: Any) -> Any:
    return e.libm("erfc", x)


def _erfcx_asymptotic(e: Any, a: Any) -> Any:
    """`erfcx(a)` for `a >= 26`: `1/(a sqrt(pi)) sum (-1)**k (2k-1)!! / (2a**2)**k`; the
    ninth term is below 1e-19 there."""
    z = e.div(_c(e, 0.5, a), e.mul(a, a))
    coefficients = (2027025.0, -135135.0, 10395.0, -945.0, 105.0, -15.0, 3.0, -1.0, 1.0)
    return e.div(e.mul(_poly(e, z, coefficients), _c(e, 1.0 / SQRT_PI, a)), a)


def _erfcx_nonnegative(e: Any, a: Any) -> Any:
    small = e.mul(_exp_square(e, _min(e, a, 26.0)), erfc(e, a))
    return e.select(e.cmp("lt", a, _c(e, 26.0, a)), small, _erfcx_asymptotic(e, a))


def erfcx(e: Any, x: Any) -> Any:
    negative = e.sub(e.mul(_c(e, 2.0, x), _exp_square(e, x)), _erfcx_nonnegative(e, e.neg(x)))
    result = e.select(e.cmp("ge", x, _c(e, 0.0, x)), _erfcx_nonnegative(e, x), negative)
    return _keep_nan(e, x, result)


# --- erfinv, erfcinv -----------------------------------------------------------------------

_GILES_CENTRAL = (
    2.81022636e-08,
    3.43273939e-07,
    -3.5233877e-06,
    -4.39150654e-06,
    0.00021858087,
    -0.00125372503,
    -0.00417768164,
    0.246640727,
    1.50140941,
)
"""Giles' single-precision `erfinv(x) / x` as a polynomial of `w - 2.5`, `w < 5`."""


def _erfinv_central(e: Any, x: Any) -> Any:
    """`erfinv(x)` for `|x| <= 1/2`: Giles' guess (relative error below 4e-7), then two
    Newton steps on `erf` (quadratic: below 1e-16)."""
    one = _c(e, 1.0, x)
    w = e.neg(e.math("LogOp", e.mul(e.sub(one, x), e.add(one, x))))
    t = e.mul(_poly(e, e.sub(w, _c(e, 2.5, x)), _GILES_CENTRAL), x)
    for _ in range(2):
        residual = e.sub(erf(e, t), x)
        t = e.sub(t, e.mul(e.mul(residual, _c(e, SQRT_PI / 2, x)), _exp_square(e, t)))
    return t


def _erfc_tail(e: Any, q: Any) -> Any:
    """The `t > 0` with `erfc(t) = q`, for `0 < q <= 1/2` (`t` in (0.47, 27.3))."""
    big_l = e.neg(e.math("LogOp", q))
    log_pi_l = e.math("LogOp", e.mul(_c(e, math.pi, q), big_l))
    t = e.math("SqrtOp", e.sub(big_l, e.mul(_c(e, 0.5, q), log_pi_l)))

    def newton(e: Any, carried: list[Any]) -> list[Any]:
        (t,) = carried
        ratio = _erfcx_nonnegative(e, t)
        hi, lo = _square_parts(e, t)
        g = e.sub(e.sub(e.add(e.math("LogOp", ratio), big_l), hi), lo)
        return [e.add(t, e.mul(e.mul(g, ratio), _c(e, SQRT_PI / 2, t)))]

    return e.loop(_c(e, 4.0, q), [t], newton)[0]


def erfinv(e: Any, x: Any) -> Any:
    a = e.math("AbsFOp", x)
    half = _c(e, 0.5, x)
    negative = e.cmp("lt", x, _c(e, 0.0, x))
    tail = _negate_if(e, negative, _erfc_tail(e, e.sub(_c(e, 1.0, x), a)))
    central = _erfinv_central(e, e.select(e.cmp("le", a, half), x, half))
    result = e.select(e.cmp("le", a, half), central, tail)
    pole = _negate_if(e, negative, _c(e, math.inf, x))
    result = e.select(e.cmp("eq", a, _c(e, 1.0, x)), pole, result)
    result = e.select(e.cmp("gt", a, _c(e, 1.0, x)), _c(e, math.nan, x), result)
    result = e.select(e.cmp("eq", x, _c(e, 0.0, x)), _c(e, 0.0, x), result)  # SciPy: +0
    return _keep_nan(e, x, result)


def erfcinv(e: Any, y: Any) -> Any:
    one, half = _c(e, 1.0, y), _c(e, 0.5, y)
    centered = e.sub(one, y)  # exact for y in [1/2, 2] (Sterbenz)
    mid = e.select(e.cmp("le", e.math("AbsFOp", centered), half), centered, half)
    low = _erfc_tail(e, e.select(e.cmp("lt", y, half), y, half))
    high_q = e.sub(_c(e, 2.0, y), y)
    high = e.neg(_erfc_tail(e, e.select(e.cmp("lt", high_q, half), high_q, half)))
    result = e.select(e.cmp("lt", y, half), low, _erfinv_central(e, mid))
    result = e.select(e.cmp("gt", y, _c(e, 1.5, y)), high, result)
    result = e.select(e.cmp("eq", y, one), _c(e, -0.0, y), result)  # SciPy: -0
    result = e.select(e.cmp("eq", y, _c(e, 0.0, y)), _c(e, math.inf, y), result)
    result = e.select(e.cmp("eq", y, _c(e, 2.0, y)), _c(e, -math.inf, y), result)
    outside = e.bitwise("or", e.cmp("lt", y, _c(e, 0.0, y)), e.cmp("gt", y, _c(e, 2.0, y)))
    result = e.select(outside, _c(e, math.nan, y), result)
    return _keep_nan(e, y, result)


# --- gamma, gammaln, psi, tri_gamma --------------------------------------------------------


def gamma(e: Any, x: Any) -> Any:
    return e.libm("tgamma", x)  # C's special values are SciPy's (nan at poles < 0)


def gammaln(e: Any, x: Any) -> Any:
    minus_inf = _c(e, -math.inf, x)
    return e.select(e.cmp("eq", x, minus_inf), minus_inf, e.libm("lgamma", x))  # SciPy


_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798)
"""B_2, B_4, ..., B_18."""


def _shift_up(e: Any, x: Any, term: Callable[[Any, Any], Any]) -> tuple[Any, Any]:
    """(`w`, `sum of term(e, x + k)` for the k with `x + k < 10`), `w >= 10` the first
    `x + k` not below 10 (`x > 0`: ten steps suffice)."""

    def step(e: Any, carried: list[Any]) -> list[Any]:
        w, total = carried
        below = e.cmp("lt", w, _c(e, 10.0, w))
        total = e.add(total, e.select(below, term(e, w), _c(e, 0.0, w)))
        return [e.select(below, e.add(w, _c(e, 1.0, w)), w), total]

    w, total = e.loop(_c(e, 10.0, x), [x, _c(e, 0.0, x)], step)
    return w, total


def _inverse(e: Any, v: Any) -> Any:
    return e.div(_c(e, 1.0, v), v)


def _inverse_square(e: Any, v: Any) -> Any:
    return e.div(_c(e, 1.0, v), e.mul(v, v))


def _reduced(e: Any, x: Any) -> Any:
    """`x - rint(x)` in [-1/2, 1/2]: `tan(pi x)` and `sin(pi x)` from it are accurate."""
    return e.mul(_c(e, math.pi, x), e.sub(x, e.math("RoundEvenOp", x)))


_PSI_SERIES = tuple(b / (2 * k) for k, b in reversed(list(enumerate(_BERNOULLI, 1))))
"""B_2k / 2k, highest k first: `psi(w) ~ log(w) - 1/2w - sum B_2k / (2k w**2k)`."""


_PSI_ROOT = (1.4616321449683622, 9.549995429965697e-17)
"""The positive zero of `psi` as a sum of two doubles (mpmath, 50 digits)."""
_PSI_ROOT_TAYLOR = (
    -8.165115189488409e-08,
    1.1934394829830244e-07,
    -1.7443695117727745e-07,
    2.549626552021554e-07,
    -3.7266161283438227e-07,
    5.446941930669446e-07,
    -7.96142543124197e-07,
    1.1636675363548843e-06,
    -1.7008538854332607e-06,
    2.486022733129538e-06,
    -3.6336507898010456e-06,
    5.3110609208898636e-06,
    -7.762817668462094e-06,
    1.134638458466385e-05,
    -1.6584242271854135e-05,
    2.424006611860132e-05,
    -3.5430070947659604e-05,
    5.178575795222081e-05,
    -7.569179582195066e-05,
    0.0001106337276874741,
    -0.00016170622091974803,
    0.00023635601564027053,
    -0.0003454680251063077,
    0.000504953265834602,
    -0.0007380709389960052,
    0.0010788252019162967,
    -0.0015769367714301972,
    0.002305126326734928,
    -0.003369801655439328,
    0.004926781395729853,
    -0.007204534386356869,
    0.010538791616612175,
    -0.01542476590494896,
    0.022597648232218104,
    -0.03316112647484736,
    0.04880428816414311,
    -0.07219956125645471,
    0.10782405069126237,
    -0.16394270544240652,
    0.258499760955651,
    -0.4427631689835921,
    0.9676722454476212,
)
"""`psi(k)(x0) / k!` for k = 42 ... 1 (mpmath, 60 digits): `psi(x0 + h)` for
`|h| <= 0.55`, where the recurrence would cancel (the last term is below 1e-17 of the
first there)."""


def _pi_cot(e: Any, x: Any) -> Any:
    """`pi / tan(pi x)`: `1 / tan(pi r)` for `r = x - rint(x)` in [-1/4, 1/4], else
    `tan(pi (1/2 - |r|))` with the sign of `r` (`1/2 - |r|` exact: 0 at the half-integers,
    where `tan` of the rounded `pi/2` would not vanish)."""
    r = e.sub(x, e.math("RoundEvenOp", x))
    a = e.math("AbsFOp", r)
    pi = _c(e, math.pi, x)
    near = e.div(pi, e.math("TanOp", e.mul(pi, r)))
    far = e.mul(pi, e.math("TanOp", e.mul(pi, e.sub(_c(e, 0.5, x), a))))
    far = _negate_if(e, e.cmp("lt", r, _c(e, 0.0, x)), far)
    return e.select(e.cmp("le", a, _c(e, 0.25, x)), near, far)


def _psi_near_root(e: Any, x: Any) -> Any:
    h = e.sub(e.sub(x, _c(e, _PSI_ROOT[0], x)), _c(e, _PSI_ROOT[1], x))
    return e.mul(_poly(e, h, _PSI_ROOT_TAYLOR), h)


def _psi_taylor(e: Any, x: Any) -> Any:
    """`psi(x)` for `0 < x < 3.01` from the Taylor series on [0.91, 2.01], shifted by one
    step of the recurrence below and above (no cancellation: `psi` there is at least
    0.42 in magnitude, or dominated by `-1/x`)."""
    one = _c(e, 1.0, x)
    low, high = e.cmp("lt", x, _c(e, 0.91, x)), e.cmp("gt", x, _c(e, 2.01, x))
    w = e.select(low, e.add(x, one), e.select(high, e.sub(x, one), x))
    value = _psi_near_root(e, w)
    below = e.sub(value, e.div(one, x))
    above = e.add(value, e.div(one, w))
    return e.select(low, below, e.select(high, above, value))


def _psi_positive(e: Any, x: Any) -> Any:
    w, total = _shift_up(e, x, _inverse)
    z = e.div(_c(e, 1.0, w), e.mul(w, w))
    series = e.mul(z, _poly(e, z, _PSI_SERIES))
    asymptotic = e.sub(e.sub(e.math("LogOp", w), e.div(_c(e, 0.5, w), w)), series)
    near = e.cmp("lt", x, _c(e, 3.01, x))
    return e.select(
        near, _psi_taylor(e, e.select(near, x, _c(e, 1.0, x))), e.sub(asymptotic, total)
    )


def psi(e: Any, x: Any) -> Any:
    positive = e.cmp("gt", x, _c(e, 0.0, x))
    w = e.select(positive, x, e.sub(_c(e, 1.0, x), x))
    value = _psi_positive(e, w)
    reflected = e.sub(value, _pi_cot(e, x))
    poles = e.bitwise("and", _is_integer(e, x), e.cmp("le", x, _c(e, 0.0, x)))
    result = e.select(poles, _c(e, math.nan, x), reflected)  # SciPy: nan at the poles
    result = e.select(positive, value, result)
    zero = e.cmp("eq", x, _c(e, 0.0, x))
    result = e.select(zero, e.neg(e.div(_c(e, 1.0, x), x)), result)  # -inf at +0, +inf at -0
    return _keep_nan(e, x, result)


def _trigamma_positive(e: Any, x: Any) -> Any:
    w, total = _shift_up(e, x, _inverse_square)
    inverse = e.div(_c(e, 1.0, w), w)
    z = e.mul(inverse, inverse)
    series = e.mul(z, _poly(e, z, tuple(reversed(_BERNOULLI))))
    inner = e.add(e.add(_c(e, 1.0, w), e.mul(_c(e, 0.5, w), inverse)), series)
    return e.add(e.mul(inverse, inner), total)


def tri_gamma(e: Any, x: Any) -> Any:
    positive = e.cmp("gt", x, _c(e, 0.0, x))
    value = _trigamma_positive(e, e.select(positive, x, e.sub(_c(e, 1.0, x), x)))
    sine = e.math("SinOp", _reduced(e, x))
    reflected = e.sub(e.div(_c(e, math.pi**2, x), e.mul(sine, sine)), value)
    result = e.select(positive, value, reflected)
    inf = _c(e, math.inf, x)
    poles = e.bitwise("or", _is_integer(e, x), e.cmp("eq", x, e.neg(inf)))  # SciPy: inf
    not_positive = e.cmp("le", x, _c(e, 0.0, x))
    result = e.select(e.bitwise("and", poles, not_positive), inf, result)
    return _keep_nan(e, x, result)


# --- incomplete gamma functions -----------------------------------------------------------

_MAX_TERMS = 20000.0
"""The most terms of the series or continued fraction (enough for `a` up to about 4e6)."""
_BIG = 4503599627370496.0  # 2**52: the continued fraction's rescaling threshold (Cephes)


def _trips(e: Any, count: Any) -> Any:
    """A loop's trip count: `count` capped at `_MAX_TERMS`, 0 for NaN."""
    capped = _min(e, count, _MAX_TERMS)
    return e.select(e.cmp("uno", count, count), _c(e, 0.0, count), capped)


def _terms_needed(e: Any, v: Any) -> Any:
    """`10 sqrt(v) + 40`: the terms after which both expansions have converged for
    arguments up to `v` (the series' terms fall like `exp(-n**2 / 2a)` once `n > x - a`)."""
    return e.add(e.mul(_c(e, 10.0, v), e.math("SqrtOp", v)), _c(e, 40.0, v))


def _igam_series(e: Any, a: Any, x: Any) -> Any:
    """`sum x**n / ((a+1)...(a+n))` (Cephes' `igam` series; `P = sum * prefactor / a`)."""

    def step(e: Any, carried: list[Any]) -> list[Any]:
        r, c, total = carried
        r = e.add(r, _c(e, 1.0, r))
        c = e.mul(c, e.div(x, r))
        return [r, c, e.add(total, c)]

    one = _c(e, 1.0, a)
    trips = _trips(e, _terms_needed(e, e.add(a, x)))
    return e.loop(trips, [a, one, one], step)[2]


def _igamc_fraction(e: Any, a: Any, x: Any) -> Any:
    """Legendre's continued fraction of `Q` (Cephes' `igamc`; `Q = value * prefactor`),
    for `x > 1`, `x > a`."""
    one = _c(e, 1.0, a)
    y = e.sub(one, a)
    z = e.add(e.add(x, y), one)
    start = [y, z, _c(e, 0.0, a), one, x, e.add(x, one), e.mul(z, x)]
    start.append(e.div(start[5], start[6]))

    def step(e: Any, carried: list[Any]) -> list[Any]:
        y, z, c, pkm2, qkm2, pkm1, qkm1, ans = carried
        c, y = e.add(c, _c(e, 1.0, c)), e.add(y, _c(e, 1.0, y))
        z = e.add(z, _c(e, 2.0, z))
        yc = e.mul(y, c)
        pk = e.sub(e.mul(pkm1, z), e.mul(pkm2, yc))
        qk = e.sub(e.mul(qkm1, z), e.mul(qkm2, yc))
        ans = e.select(e.cmp("ne", qk, _c(e, 0.0, qk)), e.div(pk, qk), ans)
        big = e.cmp("gt", e.math("AbsFOp", pk), _c(e, _BIG, pk))
        scale = e.select(big, _c(e, 1.0 / _BIG, pk), _c(e, 1.0, pk))
        pkm2, pkm1 = e.mul(pkm1, scale), e.mul(pk, scale)
        qkm2, qkm1 = e.mul(qkm1, scale), e.mul(qk, scale)
        return [y, z, c, pkm2, qkm2, pkm1, qkm1, ans]

    trips = _trips(e, _terms_needed(e, x))
    return e.loop(trips, start, step)[7]


def _regularized_gammas(e: Any, a: Any, x: Any) -> tuple[Any, Any]:
    """(`P(a, x)`, `Q(a, x)`): the series where `x <= max(1, a)`, else the continued
    fraction (each evaluated only on a harmless stand-in argument elsewhere), times
    `exp(a log x - x - lgamma(a))`; then SciPy's special values."""
    one, zero, inf = _c(e, 1.0, a), _c(e, 0.0, a), _c(e, math.inf, a)
    ordinary = e.bitwise("and", e.cmp("gt", a, zero), e.cmp("gt", x, zero))
    ordinary = e.bitwise("and", ordinary, e.cmp("lt", e.add(a, x), inf))
    a_in, x_in = a, x
    a, x = e.select(ordinary, a, one), e.select(ordinary, x, one)  # no long loops elsewhere
    fraction = e.bitwise("and", e.cmp("gt", x, one), e.cmp("gt", x, a))
    series_x = e.select(fraction, zero, x)
    fraction_x = e.select(fraction, x, e.add(a, _c(e, 2.0, a)))
    fraction_a = e.select(fraction, a, one)
    log_factor = e.sub(e.sub(e.mul(a, e.math("LogOp", x)), x), gammaln(e, a))
    factor = e.math("ExpOp", log_factor)
    series = e.div(e.mul(_igam_series(e, a, series_x), factor), a)
    tail = e.mul(_igamc_fraction(e, fraction_a, fraction_x), factor)
    p = e.select(fraction, e.sub(one, tail), series)
    q = e.select(fraction, tail, e.sub(one, series))
    return _incomplete_special_values(e, a_in, x_in, p, q)


def _incomplete_special_values(e: Any, a: Any, x: Any, p: Any, q: Any) -> tuple[Any, Any]:
    """SciPy's: `P = 0, Q = 1` at `x = 0` or `a = inf`; `P = 1, Q = 0` at `x = inf` or
    `a = 0`; NaN for a negative argument, `a = x = 0` and `a = x = inf`."""
    zero, one, inf = _c(e, 0.0, a), _c(e, 1.0, a), _c(e, math.inf, a)
    low = e.bitwise("or", e.cmp("eq", x, zero), e.cmp("eq", a, inf))
    high = e.bitwise("or", e.cmp("eq", x, inf), e.cmp("eq", a, zero))
    p, q = e.select(low, zero, p), e.select(low, one, q)
    p, q = e.select(high, one, p), e.select(high, zero, q)
    negative = e.bitwise("or", e.cmp("lt", a, zero), e.cmp("lt", x, zero))
    both = e.bitwise("and", low, high)
    invalid = e.bitwise("or", e.bitwise("or", negative, both), e.cmp("uno", a, x))
    nan = _c(e, math.nan, a)
    return e.select(invalid, nan, p), e.select(invalid, nan, q)


def gammainc(e: Any, k: Any, x: Any) -> Any:
    return _regularized_gammas(e, k, x)[0]


def gammaincc(e: Any, k: Any, x: Any) -> Any:
    return _regularized_gammas(e, k, x)[1]


def gammal(e: Any, k: Any, x: Any) -> Any:
    """The lower incomplete gamma function `gammainc(k, x) gamma(k)` (Theano's formula)."""
    return e.mul(gammainc(e, k, x), gamma(e, k))


def gammau(e: Any, k: Any, x: Any) -> Any:
    """The upper incomplete gamma function `gammaincc(k, x) gamma(k)` (Theano's formula)."""
    return e.mul(gammaincc(e, k, x), gamma(e, k))


# --- Bessel functions ----------------------------------------------------------------------


def _bessel_nan_at_inf(e: Any, x: Any, result: Any) -> Any:
    """SciPy's `j0`, `j1`, `i0`, `i1` give NaN at both infinities."""
    infinite = e.cmp("eq", e.math("AbsFOp", x), _c(e, math.inf, x))
    return _keep_nan(e, x, e.select(infinite, _c(e, math.nan, x), result))


def j0(e: Any, x: Any) -> Any:
    return _bessel_nan_at_inf(e, x, e.libm("j0", x))


def j1(e: Any, x: Any) -> Any:
    return _bessel_nan_at_inf(e, x, e.libm("j1", x))


_SERIES_TERMS = 48
_HANKEL_TERMS = 24
_SERIES_LIMIT = 30.0


def _i_series(e: Any, a: Any, order: int) -> Any:
    """`sum (a**2/4)**k / (k! (k+order)!)` (times `a/2` for order 1); `a <= 30`."""
    q = e.mul(_c(e, 0.25, a), e.mul(a, a))

    def step(e: Any, carried: list[Any]) -> list[Any]:
        k, term, total = carried
        k = e.add(k, _c(e, 1.0, k))
        term = e.mul(term, e.div(q, e.mul(k, e.add(k, _c(e, float(order), k)))))
        return [k, term, e.add(total, term)]

    one = _c(e, 1.0, a)
    total = e.loop(_c(e, _SERIES_TERMS - 1.0, a), [_c(e, 0.0, a), one, one], step)[2]
    return e.mul(total, e.mul(_c(e, 0.5, a), a)) if order else total


def _i_hankel(e: Any, a: Any, order: int) -> Any:
    """`exp(a) / sqrt(2 pi a) sum_k prod_j ((2j-1)**2 - 4 order**2) / (8 a j)`, `a > 30`."""
    mu = 4.0 * order * order
    eight_a = e.mul(_c(e, 8.0, a), a)

    def step(e: Any, carried: list[Any]) -> list[Any]:
        j, term, total = carried
        j = e.add(j, _c(e, 1.0, j))
        odd = e.sub(e.add(j, j), _c(e, 1.0, j))
        ratio = e.div(e.sub(e.mul(odd, odd), _c(e, mu, j)), e.mul(eight_a, j))
        term = e.mul(term, ratio)
        return [j, term, e.add(total, term)]

    one = _c(e, 1.0, a)
    total = e.loop(_c(e, _HANKEL_TERMS - 1.0, a), [_c(e, 0.0, a), one, one], step)[2]
    half = e.math("ExpOp", e.mul(_c(e, 0.5, a), a))
    scale = e.div(half, e.math("SqrtOp", e.mul(_c(e, 2.0 * math.pi, a), a)))
    return e.mul(e.mul(total, scale), half)


def _modified_bessel(e: Any, x: Any, order: int) -> Any:
    a = e.math("AbsFOp", x)
    limit = _c(e, _SERIES_LIMIT, x)
    small = e.cmp("le", a, limit)
    series = _i_series(e, e.select(small, a, limit), order)
    hankel = _i_hankel(e, e.select(small, limit, a), order)
    result = e.select(small, series, hankel)
    if order:  # odd: I1(-x) = -I1(x), with +0 at -0 (SciPy)
        result = _negate_if(e, e.cmp("lt", x, _c(e, 0.0, x)), result)
    return _bessel_nan_at_inf(e, x, result)


def i0(e: Any, x: Any) -> Any:
    return _modified_bessel(e, x, 0)


def i1(e: Any, x: Any) -> Any:
    return _modified_bessel(e, x, 1)


# --- running an algorithm on NumPy arrays --------------------------------------------------

_NUMPY_MATH: dict[str, Callable[..., Any]] = {
    "ExpOp": np.exp,
    "LogOp": np.log,
    "SqrtOp": np.sqrt,
    "AbsFOp": np.abs,
    "FloorOp": np.floor,
    "RoundEvenOp": np.rint,
    "TanOp": np.tan,
    "SinOp": np.sin,
}
_COMPARISONS: dict[str, Callable[..., Any]] = {
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "eq": np.equal,
    "ne": np.not_equal,
}
_BITWISE: dict[str, Callable[..., Any]] = {
    "and": np.logical_and,
    "or": np.logical_or,
    "xor": np.logical_xor,
}


@cache
def _libm_function(name: str) -> Callable[..., Any]:
    """C's `double name(double)` from the C math library, as a NumPy ufunc."""
    path = ctypes.util.find_library("m") or "libm.so.6"
    function = getattr(ctypes.CDLL(path), name)
    function.restype, function.argtypes = ctypes.c_double, [ctypes.c_double]
    ufunc = np.frompyfunc(function, 1, 1)

    def run(x: np.ndarray) -> np.ndarray:
        return np.asarray(ufunc(x), dtype=np.float64)

    return run


class ArrayEmitter:
    """The emitter protocol of `arignote.lowering.loops.ag_scalar.TableEmitter` on float64
    NumPy arrays (bools for conditions): what the interpreter runs."""

    def const(self, value: float, like: Any) -> np.ndarray:
        return np.full(np.shape(like), value, dtype=np.float64)

    def add(self, x: Any, y: Any) -> Any:
        return np.add(x, y)

    def sub(self, x: Any, y: Any) -> Any:
        return np.subtract(x, y)

    def mul(self, x: Any, y: Any) -> Any:
        return np.multiply(x, y)

    def div(self, x: Any, y: Any) -> Any:
        return np.divide(x, y)

    def neg(self, x: Any) -> Any:
        return np.negative(x)

    def select(self, cond: Any, x: Any, y: Any) -> Any:
        return np.where(cond, x, y)

    def cmp(self, predicate: str, x: Any, y: Any) -> Any:
        if predicate == "uno":
            return np.isnan(x) | np.isnan(y)
        return _COMPARISONS[predicate](x, y)

    def bitwise(self, name: str, x: Any, y: Any) -> Any:
        return _BITWISE[name](x, y)

    def math(self, op_name: str, x: Any) -> Any:
        if op_name == "ErfOp":
            return _libm_function("erf")(x)
        return _NUMPY_MATH[op_name](x)

    def libm(self, name: str, x: Any) -> Any:
        return _libm_function(name)(x)

    def loop(self, trips: Any, carried: list[Any], body: Callable[..., list[Any]]) -> list[Any]:
        """`body` applied `trips` times (a float count per element, as `scf.for`)."""
        count = np.trunc(np.asarray(trips))
        carried = list(np.broadcast_arrays(*carried))
        for k in range(int(count.max(initial=0.0))):
            updated = body(self, carried)
            active = k < count
            carried = [np.where(active, n, o) for n, o in zip(updated, carried, strict=True)]
        return carried


def numpy_reference(algorithm: Callable[..., Any]) -> Callable[..., np.ndarray]:
    """`algorithm` on arrays: computed in float64, the result in the operands' float type
    (float64 for other types)."""

    def reference(*arrays: Any) -> np.ndarray:
        values = [np.asarray(a) for a in arrays]
        dtype = values[0].dtype if values[0].dtype == np.float32 else np.dtype(np.float64)
        with np.errstate(all="ignore"):
            result = algorithm(ArrayEmitter(), *(v.astype(np.float64) for v in values))
        return np.asarray(result, dtype=dtype)

    reference.__name__ = algorithm.__name__
    return reference


def in_float64(algorithm: Callable[..., Any]) -> Callable[..., Any]:
    """The lowering of `algorithm`: operands widened to f64, the result rounded back."""

    def lower(e: Any, *xs: Any) -> Any:
        return e.narrow(algorithm(e, *(e.widen(x) for x in xs)), xs[0])

    lower.__name__ = algorithm.__name__
    return lower
