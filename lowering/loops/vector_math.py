"""Branch-free elementary functions on f32/f64 as `llvm`-dialect ops: `exp`, `log`,
`log1p`, `expm1`, `tanh`, `sin`, `cos`, `tan`, `arctan`, `arcsin`, `arccos`, `arctan2`,
`sinh`, `cosh`, `arcsinh`, `arccosh`, `arctanh`, `exp2`, `log2`, `log10`, `hypot`.

LLVM turns `llvm.exp`/`llvm.sin` and calls of `tanhf`/`atan2`/... into scalar libm
calls, which keep a loop from being vectorised. `convert-math-to-llvm` therefore expands
these `math` ops inline with the builders below: straight-line `llvm.fadd`/`fmul`/`fdiv`,
`llvm.fmuladd` (fused where the CPU has FMA), integer bit manipulation of the IEEE
representation and `llvm.select` for the special cases, all of which LLVM's loop
vectoriser widens to `<8 x float>` / `<16 x float>` (AVX2 / AVX-512).

The algorithms are the classic ones of fdlibm/musl and Cephes, made branch-free:

- `exp`: `x = k ln2 + r` (Cody-Waite: `ln2` split in a high part with trailing zero bits
  and a low part), `k` rounded with the `1.5 * 2**mantissa` trick (no `fptosi`), `e**r`
  as `1 + r + r**2 P(r)` (Cephes' minimax polynomial for f32, Taylor to degree 13 for
  f64), scaled by `2**k` as two exact power-of-two factors so that results near
  overflow and in the subnormal range round once;
- `expm1`: the same reduction, `expm1(x) = 2 * ((2**(k-1) - 1/2) + 2**(k-1) expm1(r))`
  (exact for `k = 0`, one rounding of a dominant term otherwise), the rounding error of
  `r` added back to first order;
- `log`: `x = 2**k m` with `m` in `[sqrt(1/2), sqrt(2))` found by integer arithmetic on
  the bits (subnormals pre-scaled by `2**(mantissa+2)`), `log(m) = log1p(f)` by fdlibm's
  `s = f / (2 + f)` series (`Lg1..Lg7`, musl's 4-term set for f32);
- `log1p`: the same core applied to `u = 1 + x` with fdlibm's correction term
  `c = (x - (u - 1)) / u` (or `(1 - (u - x)) / u`), and `f = x` itself when `u` needs
  no reduction;
- `tanh`: an odd polynomial `x + x**3 P(x**2)` (a Chebyshev fit) below `log(3)/2`,
  `1 - 2 / (expm1(2|x|) + 2)` with the sign of `x` above.

The other functions are computed in f64 for f32 arguments too (widened, computed,
rounded once: `<8 x float>` loads and stores, `<8 x double>` arithmetic), which makes
the f32 results correctly rounded but in rare near-ties and spares separate f32
algorithms:

- `sin`, `cos`, `tan`: `x = n pi/2 + y`, `n` rounded with the same trick, `y` by a
  Cody-Waite reduction with pi/2 in five 26-bit parts and a 53-bit tail (f64; every
  `n * part` exact for |n| < 2**27, each subtraction's rounding error carried by TwoSum,
  `y` a double-double) or musl's 25 + 53-bit split (f32); fdlibm's `__kernel_sin` and
  `__kernel_cos` on the double-double (musl's `__sindf`/`__cosdf` for f32), the one of
  the quadrant chosen by `select` and its sign flipped in the bits; `tan = s / c` or
  `-c / s`. Accurate for |x| below `TRIG_BOUND` (2**27 pi/2 = 2.1e8 for f64, 2**28 pi/2
  = 4.2e8 for f32). Beyond, the reduction is not exact (libm's Payne-Hanek reduction has
  no branch-free vector form here): the absolute error grows as |x| 2**-52 (tested below
  2**45: about 2e-3 at 1e13), the values are meaningless past 2**50, and `sin`/`cos`
  stay within [-1, 1] (the reduced argument is clamped);
- `arctan`: fdlibm's five intervals (reduction about atan(0), atan(1/2), atan(1),
  atan(3/2), atan(inf), with the constants' low parts), picked by `select`, and its
  degree-22 odd polynomial; `arctan2(y, x)`, `arcsin`, `arccos`: the angle of a point
  `(a, b)`: `t = atan(min(a, b) / max(a, b))` and `t`, `pi/2 - t`, `pi/2 + t` or
  `pi - t` by the octant (`cos = sqrt((1 - x)(1 + x))` for `arcsin`/`arccos`), C99's
  atan2 table for zeros and infinities;
- `sinh`, `cosh`: fdlibm's formulas from `t = expm1(|x|)` (`(2t - t**2/(t + 1)) / 2`,
  `(t + t/(t + 1)) / 2`, `1 + t**2 / (2 (1 + t))`, `(e + 1/e) / 2`), and `exp(|x|) / 2`
  with the halving in the final power of two from |x| = 22 on (no overflow before the
  result does); `arcsinh`, `arccosh`: `log1p` of fdlibm's arguments below 2, `log` of
  `2|x| + ...` above, `log(|x|) + ln 2` from 2**28; `arctanh`: `log1p(2a + 2a**2 /
  (1 - a)) / 2` or `log1p(2a / (1 - a)) / 2`;
- `exp2`: `k = round(x)`, `2**(x - k) = e**((x - k) ln 2)` by the `exp` polynomial;
  `log2`, `log10`: FreeBSD's: `log1p(f)` split so that its high part times the high
  part of `1/ln 2` (`1/ln 10`) is exact, `k` (or `k log10(2)`) added in double-double
  (`log2(2**k) = k` and `log10(10) = 1` exactly);
- `hypot` (for the `ag` lowering's `func.call @hypot`): f32 as `sqrt(x**2 + y**2)` in
  f64 (squares exact, one rounding of the sum); f64 with both operands scaled by 2**-+600
  where the larger is beyond 2**+-500, then one Newton step on the residual
  `x**2 + y**2 - h**2` computed exactly with `llvm.fma` (within 1 ulp);
  `hypot(±inf, nan) = inf`.

Special values follow C99/NumPy: NaN in gives NaN, `exp(±inf) = inf, 0`,
`log(0) = -inf`, `log(x < 0) = NaN`, `log1p(-1) = -inf`, `expm1(-inf) = -1`,
`tanh(±inf) = ±1`, `sin(±inf) = NaN`, `arcsin(±1) = ±pi/2`, `arcsin(|x| > 1) = NaN`,
`arccosh(1) = 0`, `arctanh(±1) = ±inf`, `exp2(-inf) = 0`, `log2(0) = -inf`, and `-0.0`
and subnormal inputs keep their value where the function is the identity to first
order (`log1p`, `expm1`, `tanh`, `sin`, `tan`, `arctan`, `arcsin`, `sinh`, `arcsinh`,
`arctanh`). Accuracy (`test/lowering/test_vector_math.py` measures it on dense sweeps):
the first five within 2 ulp of NumPy; the others, f32: within 1 ulp of the float64
result rounded (0 ulp on nearly every point; NumPy's own float32 SIMD functions are up
to 2-3 ulp off); f64: within 2 ulp of the long-double result rounded (arctan, arcsinh,
exp2, log2, log10 and within `TRIG_BOUND` sin and cos: 1 ulp; tan, arcsin, arccos,
sinh, arccosh, arctanh: 2 ulp on a few points in 10**4; NumPy: 1 ulp).

Each builder appends ops to a list and returns the result value, like the other helpers
of `llvm_utils`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import llvm
from xdsl.dialects.builtin import AnyFloat, Float32Type, IntegerType, f64, i64
from xdsl.ir import Operation, SSAValue

from arignote.lowering.llvm.llvm_utils import append, float_attr, integer_attr, llvm_constant
from arignote.lowering.op_builder import build

# --- per-type constants --------------------------------------------------------------------


@dataclass(frozen=True)
class _Format:
    """The IEEE format of f32 or f64 and the coefficients each function uses for it."""

    width: int
    mantissa: int
    bias: int
    sqrt_half_bits: int
    """Bit pattern of the largest float below sqrt(1/2) (the log reduction's pivot)."""
    exp_lo: float
    """`exp` clamps its argument to [exp_lo, exp_hi]: beyond, the result is 0 or inf."""
    exp_hi: float
    exp_ln2: tuple[float, float]
    """Cody-Waite split of ln 2 for `exp`/`expm1`: k * high is exact for |k| < 2**11."""
    expm1_poly: tuple[float, ...]
    """`expm1(r) ~ r + r**2 * poly(r)` on |r| <= ln(2)/2, lowest degree first."""
    log_ln2: tuple[float, float]
    """Split of ln 2 for `log`/`log1p` (fdlibm's `ln2_hi`, `ln2_lo`)."""
    log_poly: tuple[float, ...]
    """fdlibm's `Lg1, Lg2, ...`: `R(z) = Lg1 z + Lg2 z**2 + ...`, `z = s**2`."""
    tanh_poly: tuple[float, ...]
    """`tanh(x) ~ x + x**3 * poly(x**2)` for |x| < log(3)/2, lowest degree first."""
    tiny: float
    """Below this magnitude, `log1p(x) = expm1(x) = tanh(x) = x` in this format."""
    log1p_no_correction: int
    """From this exponent of `1 + x` up, `log1p` drops the correction term."""

    @property
    def magic(self) -> float:
        """`1.5 * 2**mantissa`: adding and subtracting it rounds to an integer."""
        return 1.5 * 2.0**self.mantissa

    @property
    def magic_bits(self) -> int:
        return (self.bias + self.mantissa) << self.mantissa | 1 << (self.mantissa - 1)

    @property
    def min_normal(self) -> float:
        return 2.0 ** (1 - self.bias)


_F32 = _Format(
    width=32,
    mantissa=23,
    bias=127,
    sqrt_half_bits=0x3F3504F3,
    exp_lo=-110.0,
    exp_hi=89.0,
    exp_ln2=(0.693359375, -2.12194440e-4),
    expm1_poly=(  # Cephes expf
        5.0000001201e-1,
        1.6666665459e-1,
        4.1665795894e-2,
        8.3334519073e-3,
        1.3981999507e-3,
        1.9875691500e-4,
    ),
    log_ln2=(6.9313812256e-01, 9.0580006145e-06),
    log_poly=tuple(
        float.fromhex(h)
        for h in ("0xaaaaaa.0p-24", "0xccce13.0p-25", "0x91e9ee.0p-25", "0xf89e26.0p-26")
    ),
    tanh_poly=(  # Chebyshev fit (mpmath.chebyfit), |error| 3.7e-10 on x**2 <= 0.302
        -0.33333333295569734866,
        0.13333324306946072835,
        -0.053964733251845687821,
        0.021818794812260574436,
        -0.0085277982698805881026,
        0.0025285392816694864686,
    ),
    tiny=2.0**-25,
    log1p_no_correction=25,
)

_F64 = _Format(
    width=64,
    mantissa=52,
    bias=1023,
    sqrt_half_bits=0x3FE6A09E00000000,
    exp_lo=-750.0,
    exp_hi=710.0,
    exp_ln2=(6.93147180369123816490e-01, 1.90821492927058770002e-10),
    expm1_poly=tuple(
        1.0 / _factorial
        for _factorial in (
            2.0,
            6.0,
            24.0,
            120.0,
            720.0,
            5040.0,
            40320.0,
            362880.0,
            3628800.0,
            39916800.0,
            479001600.0,
            6227020800.0,
        )
    ),
    log_ln2=(6.93147180369123816490e-01, 1.90821492927058770002e-10),
    log_poly=(
        6.666666666666735130e-01,
        3.999999999940941908e-01,
        2.857142874366239149e-01,
        2.222219843214978396e-01,
        1.818357216161805012e-01,
        1.531383769920937332e-01,
        1.479819860511658591e-01,
    ),
    tanh_poly=(  # Chebyshev fit (mpmath.chebyfit), |error| 2.2e-19 on x**2 <= 0.302
        -0.33333333333333333312,
        0.13333333333333312607,
        -0.053968253968221156541,
        0.021869488534117238068,
        -0.0088632354643723564025,
        0.0035921267901011517369,
        -0.0014558193026988887025,
        0.00058990663989364891634,
        -0.00023847834475104048618,
        0.000094565895742306395876,
        -0.000033742082890106307011,
        7.8876734103334954527e-6,
    ),
    tiny=2.0**-54,
    log1p_no_correction=54,
)


# --- an op-list builder on one float type ----------------------------------------------------


class _Emitter:
    """Appends `llvm` ops on scalars of float type `t` (and the integer of its width)."""

    def __init__(self, ops: list[Operation], t: AnyFloat) -> None:
        self.ops = ops
        self.t = t
        self.fmt = _F32 if isinstance(t, Float32Type) else _F64
        self.it = IntegerType(self.fmt.width)
        self.suffix = f"f{self.fmt.width}"

    def c(self, value: float) -> SSAValue:
        return llvm_constant(float_attr(value, self.t), self.t, self.ops)

    def ic(self, value: int) -> SSAValue:
        return llvm_constant(integer_attr(value, self.it), self.it, self.ops)

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return append(self.ops, build(llvm.FAddOp, a, b))

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return append(self.ops, build(llvm.FSubOp, a, b))

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return append(self.ops, build(llvm.FMulOp, a, b))

    def div(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return append(self.ops, build(llvm.FDivOp, a, b))

    def muladd(self, a: SSAValue, b: SSAValue, c: SSAValue) -> SSAValue:
        """`a * b + c`, fused where the target has FMA (`llvm.fmuladd`)."""
        name = f"llvm.fmuladd.{self.suffix}"
        return append(self.ops, build(llvm.CallIntrinsicOp, name, [a, b, c], [self.t]))

    def fma(self, a: SSAValue, b: SSAValue, c: SSAValue) -> SSAValue:
        """`a * b + c` rounded once, always (`llvm.fma`: a libm call without FMA)."""
        name = f"llvm.fma.{self.suffix}"
        return append(self.ops, build(llvm.CallIntrinsicOp, name, [a, b, c], [self.t]))

    def horner(self, x: SSAValue, coefficients: Sequence[float]) -> SSAValue:
        """`c0 + c1 x + c2 x**2 + ...` by Horner's rule."""
        acc = self.c(coefficients[-1])
        for coefficient in reversed(coefficients[:-1]):
            acc = self.muladd(acc, x, self.c(coefficient))
        return acc

    def cmp(self, a: SSAValue, predicate: str, b: SSAValue) -> SSAValue:
        return append(self.ops, build(llvm.FCmpOp, a, b, predicate))

    def select(self, cond: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return append(self.ops, build(llvm.SelectOp, cond, a, b))

    def is_nan(self, x: SSAValue) -> SSAValue:
        return self.cmp(x, "uno", x)

    # fabs and copysign as suffixed `call_intrinsic`s: xDSL's translation declares
    # `llvm.intr.fabs` as the un-suffixed `@llvm.fabs`, once per module, with the first
    # use's type, so f32 and f64 uses in one module would clash.

    def fabs(self, x: SSAValue) -> SSAValue:
        name = f"llvm.fabs.{self.suffix}"
        return append(self.ops, build(llvm.CallIntrinsicOp, name, [x], [self.t]))

    def copysign(self, magnitude: SSAValue, sign: SSAValue) -> SSAValue:
        name = f"llvm.copysign.{self.suffix}"
        return append(self.ops, build(llvm.CallIntrinsicOp, name, [magnitude, sign], [self.t]))

    def intrinsic(self, base: str, *xs: SSAValue) -> SSAValue:
        """`llvm.<base>.f32/f64(xs)` (`sqrt`, `floor`: widened by the vectoriser)."""
        name = f"llvm.{base}.{self.suffix}"
        return append(self.ops, build(llvm.CallIntrinsicOp, name, list(xs), [self.t]))

    def neg(self, x: SSAValue) -> SSAValue:
        return append(self.ops, build(llvm.FNegOp, x))

    def widened(self) -> _Emitter:
        """An emitter of f64 ops on the same op list (f32 functions computed in f64)."""
        return _Emitter(self.ops, f64)

    def fpext(self, x: SSAValue) -> SSAValue:
        return append(self.ops, build(llvm.FPExtOp, x, f64))

    def fptrunc(self, x: SSAValue, t: AnyFloat) -> SSAValue:
        return append(self.ops, build(llvm.FPTruncOp, x, t))

    def two_diff(self, a: SSAValue, b: SSAValue) -> tuple[SSAValue, SSAValue]:
        """`(s, err)` with `s = fl(a - b)` and `s + err = a - b` exactly (Knuth's TwoSum)."""
        s = self.sub(a, b)
        minus_b = self.sub(s, a)
        return s, self.sub(self.sub(a, self.sub(s, minus_b)), self.add(b, minus_b))

    def min_max(self, a: SSAValue, b: SSAValue) -> tuple[SSAValue, SSAValue]:
        """`(min, max)` of two non-NaN values (the caller handles NaN)."""
        less = self.cmp(a, "olt", b)
        return self.select(less, a, b), self.select(less, b, a)

    def signbit(self, x: SSAValue) -> SSAValue:
        """Whether the sign bit of `x` is set (true for -0.0)."""
        return self.icmp(self.bits(x), "slt", self.ic(0))

    def ixor(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return append(self.ops, build(llvm.XOrOp, a, b))

    def bits(self, x: SSAValue) -> SSAValue:
        return append(self.ops, build(llvm.BitcastOp, x, self.it))

    def from_bits(self, i: SSAValue) -> SSAValue:
        return append(self.ops, build(llvm.BitcastOp, i, self.t))

    def iadd(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return append(self.ops, build(llvm.AddOp, a, b))

    def isub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return append(self.ops, build(llvm.SubOp, a, b))

    def iand(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return append(self.ops, build(llvm.AndOp, a, b))

    def ishl(self, a: SSAValue, amount: int) -> SSAValue:
        return append(self.ops, build(llvm.ShlOp, a, self.ic(amount)))

    def iashr(self, a: SSAValue, amount: int) -> SSAValue:
        return append(self.ops, build(llvm.AShrOp, a, self.ic(amount)))

    def icmp(self, a: SSAValue, predicate: str, b: SSAValue) -> SSAValue:
        flag = llvm.ICmpPredicateFlag(predicate).to_int()
        return append(self.ops, build(llvm.ICmpOp, a, b, integer_attr(flag, i64)))

    # --- pieces shared by the functions ---

    def clamp(self, x: SSAValue, lo: float, hi: float) -> SSAValue:
        """`x` clamped to [lo, hi]; NaN becomes `lo` (the caller restores NaN)."""
        above = self.select(self.cmp(x, "ogt", self.c(lo)), x, self.c(lo))
        return self.select(self.cmp(above, "olt", self.c(hi)), above, self.c(hi))

    def round_to_int(self, x: SSAValue) -> tuple[SSAValue, SSAValue]:
        """`(k, k as integer)` for `k` the integer nearest `x` (|x| < 2**(mantissa-1))."""
        shifted = self.add(x, self.c(self.fmt.magic))
        return self.sub(shifted, self.c(self.fmt.magic)), self.isub(
            self.bits(shifted), self.ic(self.fmt.magic_bits)
        )

    def int_to_float(self, k: SSAValue) -> SSAValue:
        """Small integer `k` as a float, without `sitofp` (slow for i64 before AVX-512)."""
        shifted = self.from_bits(self.iadd(k, self.ic(self.fmt.magic_bits)))
        return self.sub(shifted, self.c(self.fmt.magic))

    def power_of_two(self, k: SSAValue) -> SSAValue:
        """`2**k` for an integer `k` in the normal exponent range."""
        return self.from_bits(self.ishl(self.iadd(k, self.ic(self.fmt.bias)), self.fmt.mantissa))

    def scale(self, y: SSAValue, k: SSAValue) -> SSAValue:
        """`y * 2**k` for |k| up to about 1.9 * bias, as two exact power-of-two factors
        (so that a result in the subnormal range or near overflow is rounded once)."""
        half = self.iashr(k, 1)
        return self.mul(self.mul(y, self.power_of_two(half)), self.power_of_two(self.isub(k, half)))

    def reduce_exp(self, x: SSAValue) -> tuple[SSAValue, SSAValue, SSAValue]:
        """`(r, c, k)` with `x = k ln2 + r + c`, |r| <= ln(2)/2 (slightly more after
        rounding) and `c` the rounding error of `r`."""
        kf, k = self.round_to_int(self.mul(x, self.c(1.4426950408889634)))
        high, low = self.fmt.exp_ln2
        r_high = self.sub(x, self.mul(kf, self.c(high)))  # exact
        k_low = self.mul(kf, self.c(low))
        r = self.sub(r_high, k_low)
        return r, self.sub(self.sub(r_high, r), k_low), k

    def expm1_kernel(self, r: SSAValue) -> SSAValue:
        """`expm1(r)` for |r| <= ln(2)/2, to a relative error below one ulp."""
        return self.muladd(self.mul(r, r), self.horner(r, self.fmt.expm1_poly), r)

    def log_kernel(self, f: SSAValue, dk: SSAValue, correction: SSAValue | None) -> SSAValue:
        """`dk ln2 + log1p(f) + correction` for `1 + f` in [sqrt(1/2), sqrt(2))."""
        hfsq, r = self.log1p_parts(f)
        high, low = self.fmt.log_ln2
        tail = self.mul(dk, self.c(low))
        if correction is not None:
            tail = self.add(tail, correction)
        y = self.add(r, tail)
        y = self.add(self.sub(y, hfsq), f)
        return self.add(y, self.mul(dk, self.c(high)))

    def log1p_parts(self, f: SSAValue) -> tuple[SSAValue, SSAValue]:
        """`(hfsq, r)` with `log1p(f) = f - hfsq + r`, `hfsq = f**2 / 2` (fdlibm's
        `k_log1p`), for `1 + f` in [sqrt(1/2), sqrt(2))."""
        s = self.div(f, self.add(self.c(2.0), f))
        z = self.mul(s, s)
        w = self.mul(z, z)
        lg = self.fmt.log_poly
        t1 = self.mul(w, self.horner(w, lg[1::2]))
        t2 = self.mul(z, self.horner(w, lg[0::2]))
        hfsq = self.mul(self.mul(self.c(0.5), f), f)
        return hfsq, self.mul(s, self.add(hfsq, self.add(t2, t1)))

    def split_mantissa(self, x_bits: SSAValue) -> tuple[SSAValue, SSAValue]:
        """`(k, f)` with `x = 2**k (1 + f)`, `1 + f` in [sqrt(1/2), sqrt(2)), for the
        bits of a positive normal `x`."""
        one_bits = self.fmt.bias << self.fmt.mantissa
        shifted = self.iadd(x_bits, self.ic(one_bits - self.fmt.sqrt_half_bits))
        k = self.isub(self.iashr(shifted, self.fmt.mantissa), self.ic(self.fmt.bias))
        mask = (1 << self.fmt.mantissa) - 1
        m_bits = self.iadd(self.iand(shifted, self.ic(mask)), self.ic(self.fmt.sqrt_half_bits))
        return k, self.sub(self.from_bits(m_bits), self.c(1.0))

    def keep_nan(self, x: SSAValue, y: SSAValue) -> SSAValue:
        """`y`, or `x` made quiet where `x` is NaN."""
        return self.select(self.is_nan(x), self.add(x, x), y)

    def keep_tiny(self, x: SSAValue, y: SSAValue) -> SSAValue:
        """`y`, or `x` itself where |x| is below `tiny` (keeps -0.0 and subnormals)."""
        return self.select(self.cmp(self.fabs(x), "olt", self.c(self.fmt.tiny)), x, y)


# --- the functions ------------------------------------------------------------------------


def _exp(e: _Emitter, x: SSAValue) -> SSAValue:
    return _half_exp(e, x, e.fmt.exp_hi, 0)


def _half_exp(e: _Emitter, x: SSAValue, hi: float, shift: int) -> SSAValue:
    """`exp(x) / 2**shift` (`shift` 0 or 1), `x` clamped to [exp_lo, hi] first: with
    `shift = 1` the result stays finite up to `hi = log(max) + log(2)`."""
    r, _, k = e.reduce_exp(e.clamp(x, e.fmt.exp_lo, hi))
    y = e.add(e.c(1.0), e.expm1_kernel(r))
    return e.keep_nan(x, e.scale(y, e.isub(k, e.ic(shift)) if shift else k))


def _expm1(e: _Emitter, x: SSAValue) -> SSAValue:
    r, c, k = e.reduce_exp(e.clamp(x, -60.0, e.fmt.exp_hi))
    p = e.expm1_kernel(r)
    p = e.muladd(c, e.add(e.c(1.0), p), p)  # expm1(r + c) = p + c * (1 + p)
    h = e.power_of_two(e.isub(k, e.ic(1)))
    y = e.add(e.sub(h, e.c(0.5)), e.mul(h, p))
    y = e.mul(y, e.c(2.0))
    return e.keep_nan(x, e.keep_tiny(x, y))


def _log(e: _Emitter, x: SSAValue) -> SSAValue:
    dk, f = _log_reduce(e, x)
    return _log_specials(e, x, e.log_kernel(f, dk, None))


def _log_reduce(e: _Emitter, x: SSAValue) -> tuple[SSAValue, SSAValue]:
    """`(k as float, f)` with `x = 2**k (1 + f)`, `1 + f` in [sqrt(1/2), sqrt(2)), for a
    positive `x` (subnormals included)."""
    subnormal = e.cmp(x, "olt", e.c(e.fmt.min_normal))
    scale = e.fmt.mantissa + 2
    scaled = e.select(subnormal, e.mul(x, e.c(2.0**scale)), x)
    k, f = e.split_mantissa(e.bits(scaled))
    k = e.isub(k, e.select(subnormal, e.ic(scale), e.ic(0)))
    return e.int_to_float(k), f


def _log_specials(e: _Emitter, x: SSAValue, y: SSAValue) -> SSAValue:
    """`y`, or a logarithm's value at `inf`, below 0, at ±0 and at NaN."""
    y = e.select(e.cmp(x, "oeq", e.c(float("inf"))), x, y)
    y = e.select(e.cmp(x, "olt", e.c(0.0)), e.c(float("nan")), y)
    y = e.select(e.cmp(x, "oeq", e.c(0.0)), e.c(float("-inf")), y)
    return e.keep_nan(x, y)


def _log1p(e: _Emitter, x: SSAValue) -> SSAValue:
    one = e.c(1.0)
    u = e.add(one, x)
    k, f_reduced = e.split_mantissa(e.bits(u))
    big = e.icmp(k, "sge", e.ic(2))
    numerator = e.select(big, e.sub(one, e.sub(u, x)), e.sub(x, e.sub(u, one)))
    correction = e.div(numerator, u)
    zero = e.c(0.0)
    exact = e.icmp(k, "sge", e.ic(e.fmt.log1p_no_correction))
    unreduced = e.icmp(k, "eq", e.ic(0))
    correction = e.select(exact, zero, e.select(unreduced, zero, correction))
    f = e.select(unreduced, x, f_reduced)
    y = e.log_kernel(f, e.int_to_float(k), correction)
    y = e.select(e.cmp(x, "oeq", e.c(float("inf"))), x, y)
    y = e.select(e.cmp(x, "olt", e.c(-1.0)), e.c(float("nan")), y)
    y = e.select(e.cmp(x, "oeq", e.c(-1.0)), e.c(float("-inf")), y)
    return e.keep_nan(x, e.keep_tiny(x, y))


_TANH_POLY_BOUND = 0.5493061443340549
"""log(3)/2: below, tanh is a polynomial; above, `1 - 2 / (expm1(2|x|) + 2)`."""


def _tanh(e: _Emitter, x: SSAValue) -> SSAValue:
    a = e.fabs(x)
    x2 = e.mul(x, x)
    small = e.muladd(e.mul(x, x2), e.horner(x2, e.fmt.tanh_poly), x)
    t = _expm1(e, e.add(a, a))
    big = e.copysign(e.sub(e.c(1.0), e.div(e.c(2.0), e.add(t, e.c(2.0)))), x)
    y = e.select(e.cmp(a, "olt", e.c(_TANH_POLY_BOUND)), small, big)
    return e.keep_tiny(x, y)


# --- f32 through f64 ----------------------------------------------------------------------


def _in_f64(fn: Callable[..., SSAValue]) -> Callable[..., SSAValue]:
    """`fn` as is on f64; on f32, `fn` computed in f64 on the widened operands and its
    result rounded once to f32 (within 1 f32 ulp where `fn` is within a few f64 ulp:
    the f32 results are then correctly rounded but in rare near-ties)."""

    def on_either(e: _Emitter, *xs: SSAValue) -> SSAValue:
        if e.fmt.width == 64:
            return fn(e, *xs)
        wide = e.widened()
        return wide.fptrunc(fn(wide, *(wide.fpext(x) for x in xs)), e.t)

    return on_either


# --- sin, cos, tan ------------------------------------------------------------------------

_TWO_OVER_PI = 6.36619772367581382433e-01
_PIO2_PARTS = tuple(
    float.fromhex(h)
    for h in (
        "0x1.921fb5p+0",
        "0x1.110b46p-26",
        "0x1.1a6263p-54",
        "0x1.8a2e03p-81",
        "0x1.c1cd128p-107",
        "0x1.024e088a67cc7p-135",
    )
)
"""pi/2 as five parts of at most 26 bits and a 53-bit tail (183 bits in all): `k * part`
is exact for |k| < 2**27, and every f64 in range is at least 2**-62 from a multiple of
pi/2, so the reduced argument keeps more than 53 correct bits."""
_PIO2_PARTS_NARROW = (float.fromhex("0x1.921fb5p+0"), float.fromhex("0x1.110b4611a6263p-26"))
"""musl's `__rem_pio2f` split of pi/2 (25 + 53 bits): enough for f32 arguments with
|k| < 2**28 (the result only needs about 30 correct bits)."""

TRIG_BOUND = {64: 2.0**27 * math.pi / 2, 32: 2.0**28 * math.pi / 2}
"""`sin`/`cos`/`tan` are accurate for |x| below this (2.1e8 for f64, 4.2e8 for f32);
beyond, the reduction is inexact: an absolute error of order |x| * 2**-52 on the reduced
argument, meaningless past 2**50, with sin and cos still in [-1, 1]."""
_PIO4_CLAMP = 0.7854
"""Just above pi/4: the reduced argument is clamped to +-this (only reached beyond the
bound, where `k * part` is no longer exact)."""

_SIN = (
    -1.66666666666666324348e-01,
    8.33333333332248946124e-03,
    -1.98412698298579493134e-04,
    2.75573137070700676789e-06,
    -2.50507602534068634195e-08,
    1.58969099521155010221e-10,
)
"""fdlibm's `__kernel_sin` S1..S6 (|error| < 2**-58 on |x| <= pi/4)."""
_COS = (
    4.16666666666666019037e-02,
    -1.38888888888741095749e-03,
    2.48015872894767294178e-05,
    -2.75573143513906633035e-07,
    2.08757232129817482790e-09,
    -1.13596475577881948265e-11,
)
"""fdlibm's `__kernel_cos` C1..C6."""
_SIN_NARROW = tuple(
    float.fromhex(h)
    for h in ("-0x15555554cbac77.0p-55", "0x111110896efbb2.0p-59", "-0x1a00f9e2cae774.0p-65")
) + (float.fromhex("0x16cd878c3b46a7.0p-71"),)
"""musl's `__sindf` (in f64, |error| < 2**-37.5 on |x| <= pi/4: for f32 results)."""
_COS_NARROW = tuple(
    float.fromhex(h)
    for h in (
        "-0x1ffffffd0c5e81.0p-54",
        "0x155553e1053a42.0p-57",
        "-0x16c087e80f1e27.0p-62",
        "0x199342e0ee5069.0p-68",
    )
)
"""musl's `__cosdf` C0..C3."""


def _reduce_pio2(e: _Emitter, x: SSAValue, narrow: bool) -> tuple[SSAValue, SSAValue, SSAValue]:
    """`(y0, y1, n)`: `x = n pi/2 + y0 + y1`, |y0| <= pi/4 (a little more after rounding),
    `y1` the low part of the double-double (0 for `narrow`), `n` an integer. Cody-Waite:
    the first subtraction is exact (Sterbenz), the others carry their rounding error."""
    limit = 2.0**50  # keeps `round_to_int` valid (beyond TRIG_BOUND the result is inexact)
    q = e.clamp(e.mul(x, e.c(_TWO_OVER_PI)), -limit, limit)
    kf, k = e.round_to_int(q)
    parts = _PIO2_PARTS_NARROW if narrow else _PIO2_PARTS
    r = e.sub(x, e.mul(kf, e.c(parts[0])))
    if narrow:
        y = e.clamp(e.sub(r, e.mul(kf, e.c(parts[1]))), -_PIO4_CLAMP, _PIO4_CLAMP)
        return y, e.c(0.0), k
    err: SSAValue | None = None
    for part in parts[1:]:
        r, d = e.two_diff(r, e.mul(kf, e.c(part)))
        err = d if err is None else e.add(err, d)
    assert err is not None
    y0 = e.add(r, err)
    y1 = e.add(e.sub(r, y0), err)
    # Inside TRIG_BOUND |y0| <= pi/4 + 2**-40 and |y1| <= ulp(y0); beyond, the clamps
    # keep the kernels in their domain, so that sin and cos stay in [-1, 1].
    return e.clamp(y0, -_PIO4_CLAMP, _PIO4_CLAMP), e.clamp(y1, -1e-15, 1e-15), k


def _sin_kernel(e: _Emitter, x: SSAValue, y: SSAValue, narrow: bool) -> SSAValue:
    """sin(x + y) for |x| <= pi/4 (fdlibm's `__kernel_sin`, musl's `__sindf` if narrow)."""
    z = e.mul(x, x)
    if narrow:
        s1, s2, s3, s4 = _SIN_NARROW
        s = e.mul(z, x)
        head = e.muladd(s, e.muladd(z, e.c(s2), e.c(s1)), x)
        return e.add(head, e.mul(e.mul(s, e.mul(z, z)), e.muladd(z, e.c(s4), e.c(s3))))
    w = e.mul(z, z)
    r = e.add(e.horner(z, _SIN[1:4]), e.mul(e.mul(z, w), e.horner(z, _SIN[4:])))
    v = e.mul(z, x)
    inner = e.sub(e.mul(z, e.sub(e.mul(e.c(0.5), y), e.mul(v, r))), y)
    return e.sub(x, e.sub(inner, e.mul(v, e.c(_SIN[0]))))


def _cos_kernel(e: _Emitter, x: SSAValue, y: SSAValue, narrow: bool) -> SSAValue:
    """cos(x + y) for |x| <= pi/4 (fdlibm's `__kernel_cos`, musl's `__cosdf` if narrow)."""
    z = e.mul(x, x)
    w = e.mul(z, z)
    if narrow:
        c0, c1, c2, c3 = _COS_NARROW
        head = e.muladd(w, e.c(c1), e.muladd(z, e.c(c0), e.c(1.0)))
        return e.muladd(e.mul(w, z), e.muladd(z, e.c(c3), e.c(c2)), head)
    r = e.muladd(e.mul(w, w), e.horner(z, _COS[3:]), e.mul(z, e.horner(z, _COS[:3])))
    hz = e.mul(e.c(0.5), z)
    one_minus = e.sub(e.c(1.0), hz)
    tail = e.add(e.sub(e.sub(e.c(1.0), one_minus), hz), e.sub(e.mul(z, r), e.mul(x, y)))
    return e.add(one_minus, tail)


def _trig(e: _Emitter, x: SSAValue, name: str) -> SSAValue:
    """sin, cos or tan of f32 (computed in f64) or f64 `x`."""
    narrow = e.fmt.width == 32
    w = e.widened() if narrow else e
    xw = w.fpext(x) if narrow else x
    y0, y1, n = _reduce_pio2(w, xw, narrow)
    s, c = _sin_kernel(w, y0, y1, narrow), _cos_kernel(w, y0, y1, narrow)
    if name == "cos":
        n = w.iadd(n, w.ic(1))  # cos(x) = sin(x + pi/2)
    odd = w.icmp(w.iand(n, w.ic(1)), "ne", w.ic(0))
    if name == "tan":  # tan = s / c, or -c / s in odd quadrants
        y = w.div(w.select(odd, w.neg(c), s), w.select(odd, s, c))
    else:  # sin(n pi/2 + y) by the quadrant: s, c, -s, -c
        sign = w.ishl(w.iand(n, w.ic(2)), 62)
        y = w.from_bits(w.ixor(w.bits(w.select(odd, c, s)), sign))
    y = w.select(w.cmp(w.fabs(xw), "oeq", w.c(math.inf)), w.c(math.nan), y)
    if name != "cos":
        y = w.keep_tiny(xw, y)  # odd functions keep -0.0
    y = w.keep_nan(xw, y)
    return w.fptrunc(y, e.t) if narrow else y


def _sin(e: _Emitter, x: SSAValue) -> SSAValue:
    return _trig(e, x, "sin")


def _cos(e: _Emitter, x: SSAValue) -> SSAValue:
    return _trig(e, x, "cos")


def _tan(e: _Emitter, x: SSAValue) -> SSAValue:
    return _trig(e, x, "tan")


# --- arctan, arctan2, arcsin, arccos (f64; f32 through f64) --------------------------------

_ATAN_BREAKS = (7 / 16, 11 / 16, 19 / 16, 39 / 16)
_ATAN_HI = (
    4.63647609000806093515e-01,
    7.85398163397448278999e-01,
    9.82793723247329054082e-01,
    1.57079632679489655800e00,
)
"""atan(1/2), atan(1), atan(3/2), atan(inf), high parts (fdlibm's `atanhi`)."""
_ATAN_LO = (
    2.26987774529616870924e-17,
    3.06161699786838301793e-17,
    1.39033110312309984516e-17,
    6.12323399573676603587e-17,
)
_AT = (
    3.33333333333329318027e-01,
    -1.99999999998764832476e-01,
    1.42857142725034663711e-01,
    -1.11111104054623557880e-01,
    9.09088713343650656196e-02,
    -7.69187620504482999495e-02,
    6.66107313738753120669e-02,
    -5.83357013379057348645e-02,
    4.97687799461593236017e-02,
    -3.65315727442169155270e-02,
    1.62858201153657823623e-02,
)
"""fdlibm's `aT`: `atan(t) ~ t - t (s1 + s2)` on |t| <= 7/16."""
_PIO2 = (1.57079632679489655800e00, 6.12323399573676603587e-17)
_PI = (3.14159265358979311600e00, 1.22464679914735317723e-16)


def _atan_abs(e: _Emitter, a: SSAValue) -> SSAValue:
    """atan(a) for a >= 0 (NaN stays NaN): fdlibm's five intervals, picked by `select`,
    each reduced to |t| <= 7/16 about atan(0), atan(1/2), atan(1), atan(3/2), atan(inf)."""
    one, two, three_halves = e.c(1.0), e.c(2.0), e.c(1.5)
    pieces = (
        (e.sub(e.mul(two, a), one), e.add(two, a)),  # (2a - 1) / (2 + a)
        (e.sub(a, one), e.add(a, one)),
        (e.sub(a, three_halves), e.add(one, e.mul(three_halves, a))),
        (e.c(-1.0), a),  # -1 / a
    )
    num, den, hi, lo = a, one, e.c(0.0), e.c(0.0)
    for limit, (n, d), h, low in zip(_ATAN_BREAKS, pieces, _ATAN_HI, _ATAN_LO, strict=True):
        above = e.cmp(a, "oge", e.c(limit))
        num, den = e.select(above, n, num), e.select(above, d, den)
        hi, lo = e.select(above, e.c(h), hi), e.select(above, e.c(low), lo)
    t = e.div(num, den)
    z = e.mul(t, t)
    w = e.mul(z, z)
    s = e.add(e.mul(z, e.horner(w, _AT[0::2])), e.mul(w, e.horner(w, _AT[1::2])))
    return e.sub(hi, e.sub(e.sub(e.mul(t, s), lo), t))


def _angle(e: _Emitter, b: SSAValue, a: SSAValue, negative: SSAValue | None) -> SSAValue:
    """The angle of the point `(±a, b)` in [0, pi] (`-a` where `negative`), for b, a >= 0
    not both 0 nor both inf: `t = atan(min / max)` (min/max <= 1) and, by the octant,
    `t`, `pi/2 - t`, `pi/2 + t` or `pi - t`, each with the constant's low part."""
    low, high = e.min_max(b, a)
    t = _atan_abs(e, e.div(low, high))
    steep = e.cmp(b, "ogt", a)
    zero = e.c(0.0)
    hi = e.select(steep, e.c(_PIO2[0]), zero)
    lo = e.select(steep, e.c(_PIO2[1]), zero)
    subtract = steep
    if negative is not None:
        hi = e.select(negative, e.select(steep, hi, e.c(_PI[0])), hi)
        lo = e.select(negative, e.select(steep, lo, e.c(_PI[1])), lo)
        subtract = e.ixor(steep, negative)
    return e.add(e.add(hi, e.select(subtract, e.neg(t), t)), lo)


def _atan(e: _Emitter, x: SSAValue) -> SSAValue:
    y = e.copysign(_atan_abs(e, e.fabs(x)), x)
    return e.keep_nan(x, e.keep_tiny(x, y))


def _atan2(e: _Emitter, y: SSAValue, x: SSAValue) -> SSAValue:
    a, b = e.fabs(x), e.fabs(y)
    z = _angle(e, b, a, e.signbit(x))  # x < 0 or x = -0.0: the left half-plane
    zero, inf = e.c(0.0), e.c(math.inf)
    # at (±0, ±0) and (±inf, ±inf), min / max is NaN: atan2 is 0 or pi, pi/4 or 3 pi/4
    both_zero = e.select(e.cmp(b, "oeq", zero), _left(e, x, zero), z)
    z = e.select(e.cmp(a, "oeq", zero), both_zero, z)
    both_inf = e.select(e.cmp(b, "oeq", inf), _left(e, x, e.c(math.pi / 4)), z)
    z = e.select(e.cmp(a, "oeq", inf), both_inf, z)
    z = e.copysign(z, y)
    return e.select(e.cmp(x, "uno", y), e.add(x, y), z)


def _left(e: _Emitter, x: SSAValue, angle: SSAValue) -> SSAValue:
    """`angle`, or `pi - angle` where the sign bit of x is set (0 -> pi, pi/4 -> 3 pi/4)."""
    return e.select(e.signbit(x), e.sub(e.c(math.pi), angle), angle)


def _asin(e: _Emitter, x: SSAValue) -> SSAValue:
    a = e.fabs(x)
    one = e.c(1.0)
    cosine = e.intrinsic("sqrt", e.mul(e.sub(one, a), e.add(one, a)))
    y = e.copysign(_angle(e, a, cosine, None), x)
    y = e.select(e.cmp(a, "ogt", one), e.c(math.nan), y)
    return e.keep_nan(x, e.keep_tiny(x, y))


def _acos(e: _Emitter, x: SSAValue) -> SSAValue:
    a = e.fabs(x)
    one = e.c(1.0)
    sine = e.intrinsic("sqrt", e.mul(e.sub(one, x), e.add(one, x)))
    y = _angle(e, sine, a, e.cmp(x, "olt", e.c(0.0)))
    y = e.select(e.cmp(a, "ogt", one), e.c(math.nan), y)
    return e.keep_nan(x, y)


# --- sinh, cosh, arcsinh, arccosh, arctanh (f64; f32 through f64) -------------------------

_LN2 = 6.93147180559945286227e-01
_HYPERBOLIC_BIG = 22.0
"""From here on, `sinh(x) = cosh(x) = exp(|x|) / 2` in f64 (fdlibm)."""
_HALF_EXP_HI = 711.0
"""`exp(x) / 2` overflows from log(max) + log(2) = 710.476 on: clamp just beyond."""
_HUGE = 2.0**28
"""From here on, `asinh(x) = log(2x)` and `acosh(x) = log(2x)` in f64 (fdlibm)."""


def _sinh(e: _Emitter, x: SSAValue) -> SSAValue:
    a = e.fabs(x)
    big_limit = e.c(_HYPERBOLIC_BIG)
    t = _expm1(e, e.select(e.cmp(a, "olt", big_limit), a, big_limit))
    t1 = e.add(t, e.c(1.0))
    small = e.mul(e.c(0.5), e.sub(e.add(t, t), e.div(e.mul(t, t), t1)))
    middle = e.mul(e.c(0.5), e.add(t, e.div(t, t1)))
    big = _half_exp(e, a, _HALF_EXP_HI, 1)
    y = e.select(e.cmp(a, "olt", big_limit), middle, big)
    y = e.copysign(e.select(e.cmp(a, "olt", e.c(1.0)), small, y), x)
    return e.keep_nan(x, e.keep_tiny(x, y))


def _cosh(e: _Emitter, x: SSAValue) -> SSAValue:
    a = e.fabs(x)
    big_limit = e.c(_HYPERBOLIC_BIG)
    t = _expm1(e, e.select(e.cmp(a, "olt", big_limit), a, big_limit))
    w = e.add(e.c(1.0), t)  # exp(a)
    small = e.add(e.c(1.0), e.div(e.mul(t, t), e.add(w, w)))
    middle = e.add(e.mul(e.c(0.5), w), e.div(e.c(0.5), w))
    big = _half_exp(e, a, _HALF_EXP_HI, 1)
    y = e.select(e.cmp(a, "olt", big_limit), middle, big)
    y = e.select(e.cmp(a, "olt", e.c(_LN2 / 2)), small, y)
    return e.keep_nan(x, y)


def _log_2x(e: _Emitter, x: SSAValue, moderate: SSAValue) -> SSAValue:
    """`log(2x)` for x >= 2**28, else `log(moderate)`."""
    huge = e.cmp(x, "oge", e.c(_HUGE))
    y = _log(e, e.select(huge, x, moderate))
    return e.add(y, e.select(huge, e.c(_LN2), e.c(0.0)))


def _asinh(e: _Emitter, x: SSAValue) -> SSAValue:
    a = e.fabs(x)
    one = e.c(1.0)
    aa = e.mul(a, a)
    root = e.intrinsic("sqrt", e.add(aa, one))  # sqrt(1 + a**2)
    big = _log_2x(e, a, e.add(e.add(a, a), e.div(one, e.add(root, a))))
    small = _log1p(e, e.add(a, e.div(aa, e.add(one, root))))
    y = e.copysign(e.select(e.cmp(a, "ogt", e.c(2.0)), big, small), x)
    return e.keep_nan(x, e.keep_tiny(x, y))


def _acosh(e: _Emitter, x: SSAValue) -> SSAValue:
    one = e.c(1.0)
    root = e.intrinsic("sqrt", e.sub(e.mul(x, x), one))  # sqrt(x**2 - 1)
    big = _log_2x(e, x, e.sub(e.add(x, x), e.div(one, e.add(x, root))))
    t = e.sub(x, one)
    small = _log1p(e, e.add(t, e.intrinsic("sqrt", e.muladd(t, t, e.add(t, t)))))
    y = e.select(e.cmp(x, "ogt", e.c(2.0)), big, small)
    y = e.select(e.cmp(x, "olt", one), e.c(math.nan), y)
    return e.keep_nan(x, y)


def _atanh(e: _Emitter, x: SSAValue) -> SSAValue:
    a = e.fabs(x)
    one = e.c(1.0)
    t = e.add(a, a)
    one_minus = e.sub(one, a)
    small = e.add(t, e.div(e.mul(t, a), one_minus))  # 2a + 2a**2 / (1 - a)
    argument = e.select(e.cmp(a, "olt", e.c(0.5)), small, e.div(t, one_minus))
    y = e.copysign(e.mul(e.c(0.5), _log1p(e, argument)), x)
    y = e.select(e.cmp(a, "ogt", one), e.c(math.nan), y)
    return e.keep_nan(x, e.keep_tiny(x, y))


# --- exp2, log2, log10 (f64; f32 through f64) ---------------------------------------------

_EXP2_RANGE = (-1080.0, 1025.0)
"""`exp2` clamps its argument here: beyond, the f64 result is 0 or inf."""
_INV_LN2 = (1.44269504072144627571e00, 1.67517131648865118353e-10)
"""1/ln 2 as FreeBSD's `ivln2hi` (32 trailing zero bits) and `ivln2lo`."""
_INV_LN10 = (4.34294481878168880939e-01, 2.50829467116452752298e-11)
_LOG10_2 = (3.01029995663611771306e-01, 3.69423907715893078616e-13)
"""fdlibm's `log10_2hi` (trailing zero bits: `k * hi` is exact) and `log10_2lo`."""


def _exp2(e: _Emitter, x: SSAValue) -> SSAValue:
    v = e.clamp(x, *_EXP2_RANGE)
    kf, k = e.round_to_int(v)
    r = e.mul(e.sub(v, kf), e.c(_LN2))  # 2**(v - k) = e**r, |r| <= ln(2)/2
    y = e.add(e.c(1.0), e.expm1_kernel(r))
    return e.keep_nan(x, e.scale(y, k))


def _log_scaled(
    e: _Emitter, x: SSAValue, inverse: tuple[float, float], k_scale: tuple[float, float]
) -> SSAValue:
    """`log(x) * inverse + k * k_scale` as FreeBSD's `log2`/`log10`: `log1p(f) = hi + lo`
    with `hi` 21 bits long, so that `hi * inverse_hi` is exact and the sum is rounded
    about once (below 1 ulp; `log2(2**k) = k` and `log10(1) = 0` exactly)."""
    dk, f = _log_reduce(e, x)
    hfsq, r = e.log1p_parts(f)
    hi = e.from_bits(e.iand(e.bits(e.sub(f, hfsq)), e.ic(-(1 << 32))))
    lo = e.add(e.sub(e.sub(f, hi), hfsq), r)
    inv_hi, inv_lo = e.c(inverse[0]), e.c(inverse[1])
    val_hi = e.mul(hi, inv_hi)
    val_lo = e.add(e.mul(e.add(lo, hi), inv_lo), e.mul(lo, inv_hi))
    if k_scale[1]:
        val_lo = e.add(e.mul(dk, e.c(k_scale[1])), val_lo)
    y = e.mul(dk, e.c(k_scale[0])) if k_scale[0] != 1.0 else dk
    w = e.add(y, val_hi)
    val_lo = e.add(val_lo, e.add(e.sub(y, w), val_hi))
    return _log_specials(e, x, e.add(val_lo, w))


def _log2(e: _Emitter, x: SSAValue) -> SSAValue:
    return _log_scaled(e, x, _INV_LN2, (1.0, 0.0))


def _log10(e: _Emitter, x: SSAValue) -> SSAValue:
    return _log_scaled(e, x, _INV_LN10, _LOG10_2)


# --- hypot ---------------------------------------------------------------------------------

_HYPOT_SCALE = (2.0**500, 2.0**-500, 600)
"""Where the larger operand is above the first bound / below the second, both are scaled
by 2**-600 / 2**600 first (the smaller one's square may underflow: it is then below
2**-40 of the sum)."""


def _hypot(e: _Emitter, x: SSAValue, y: SSAValue) -> SSAValue:
    """`sqrt(x**2 + y**2)` without overflow: f32 in f64 (the squares exact, the sum
    rounded once: correctly rounded but in rare near-ties); f64 with the operands scaled
    by a power of two into a safe range and one Newton step on the rounding residual of
    `h**2`, computed exactly with `llvm.fma`."""
    if e.fmt.width == 32:
        w = e.widened()
        a, b = w.fpext(x), w.fpext(y)
        h = w.intrinsic("sqrt", w.muladd(a, a, w.mul(b, b)))
        return w.fptrunc(_hypot_specials(w, a, b, h), e.t)
    small, big = e.min_max(e.fabs(x), e.fabs(y))
    above, below, shift = _HYPOT_SCALE
    too_big = e.cmp(big, "ogt", e.c(above))
    too_small = e.cmp(big, "olt", e.c(below))
    scale = e.select(too_big, e.c(2.0**-shift), e.select(too_small, e.c(2.0**shift), e.c(1.0)))
    unscale = e.select(too_big, e.c(2.0**shift), e.select(too_small, e.c(2.0**-shift), e.c(1.0)))
    a, b = e.mul(big, scale), e.mul(small, scale)
    aa, bb = e.mul(a, a), e.mul(b, b)
    h = e.intrinsic("sqrt", e.add(aa, bb))
    hh = e.mul(h, h)
    # the exact residual a**2 + b**2 - h**2, to first order
    errors = e.sub(e.add(e.fma(a, a, e.neg(aa)), e.fma(b, b, e.neg(bb))), e.fma(h, h, e.neg(hh)))
    residual = e.add(e.add(e.sub(aa, hh), bb), errors)
    corrected = e.add(h, e.div(residual, e.add(h, h)))
    h = e.select(e.cmp(h, "oeq", e.c(0.0)), h, corrected)
    return _hypot_specials(e, x, y, e.mul(h, unscale))


def _hypot_specials(e: _Emitter, x: SSAValue, y: SSAValue, h: SSAValue) -> SSAValue:
    """`h`, or inf where x or y is infinite (even if the other is NaN), NaN where one is."""
    h = e.select(e.cmp(x, "uno", y), e.add(x, y), h)
    inf = e.c(math.inf)
    h = e.select(e.cmp(e.fabs(x), "oeq", inf), inf, h)
    return e.select(e.cmp(e.fabs(y), "oeq", inf), inf, h)


FUNCTIONS: dict[str, Callable[..., SSAValue]] = {
    "exp": _exp,
    "expm1": _expm1,
    "log": _log,
    "log1p": _log1p,
    "tanh": _tanh,
    "sin": _sin,
    "cos": _cos,
    "tan": _tan,
    "arctan": _in_f64(_atan),
    "arcsin": _in_f64(_asin),
    "arccos": _in_f64(_acos),
    "arctan2": _in_f64(_atan2),
    "sinh": _in_f64(_sinh),
    "cosh": _in_f64(_cosh),
    "arcsinh": _in_f64(_asinh),
    "arccosh": _in_f64(_acosh),
    "arctanh": _in_f64(_atanh),
    "exp2": _in_f64(_exp2),
    "log2": _in_f64(_log2),
    "log10": _in_f64(_log10),
    "hypot": _hypot,
}
"""The functions this module expands, by name (NumPy's): each takes the emitter and its
operands (two for `arctan2`: `y, x`, and `hypot`)."""


def emit(name: str, operands: Sequence[SSAValue], ops: list[Operation]) -> SSAValue:
    """Append the inline expansion of `name` (a key of `FUNCTIONS`) on f32/f64 `operands`
    (all of one type) to `ops`."""
    t = operands[0].type
    assert isinstance(t, AnyFloat) and t.bitwidth in (32, 64), f"{name} on {t}"
    return FUNCTIONS[name](_Emitter(ops, t), *operands)
