"""Branch-free `exp`, `log`, `log1p`, `expm1` and `tanh` on f32/f64 as `llvm`-dialect ops.

LLVM turns `llvm.exp` and calls of `tanhf`/`log1p`/... into scalar libm calls, which keep
a loop from being vectorised. `convert-math-to-llvm` therefore expands these `math` ops
inline with the builders below: straight-line `llvm.fadd`/`fmul`/`fdiv`,
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

Special values follow C99/NumPy: NaN in gives NaN, `exp(±inf) = inf, 0`,
`log(0) = -inf`, `log(x < 0) = NaN`, `log1p(-1) = -inf`, `expm1(-inf) = -1`,
`tanh(±inf) = ±1`, and `-0.0` and subnormal inputs keep their value where the function
is the identity to first order (`log1p`, `expm1`, `tanh`). Accuracy: within 2 ulp of
NumPy on dense sweeps (`test/lowering/test_vector_math.py` measures it).

Each builder appends ops to a list and returns the result value, like the other helpers
of `llvm_utils`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import llvm
from xdsl.dialects.builtin import AnyFloat, Float32Type, IntegerType, i64
from xdsl.ir import Operation, SSAValue

from arignote.lowering.llvm_utils import append, float_attr, integer_attr, llvm_constant
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
        s = self.div(f, self.add(self.c(2.0), f))
        z = self.mul(s, s)
        w = self.mul(z, z)
        lg = self.fmt.log_poly
        t1 = self.mul(w, self.horner(w, lg[1::2]))
        t2 = self.mul(z, self.horner(w, lg[0::2]))
        r = self.add(t2, t1)
        hfsq = self.mul(self.mul(self.c(0.5), f), f)
        high, low = self.fmt.log_ln2
        tail = self.mul(dk, self.c(low))
        if correction is not None:
            tail = self.add(tail, correction)
        y = self.add(self.mul(s, self.add(hfsq, r)), tail)
        y = self.add(self.sub(y, hfsq), f)
        return self.add(y, self.mul(dk, self.c(high)))

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
    r, _, k = e.reduce_exp(e.clamp(x, e.fmt.exp_lo, e.fmt.exp_hi))
    y = e.add(e.c(1.0), e.expm1_kernel(r))
    half = e.iashr(k, 1)
    y = e.mul(e.mul(y, e.power_of_two(half)), e.power_of_two(e.isub(k, half)))
    return e.keep_nan(x, y)


def _expm1(e: _Emitter, x: SSAValue) -> SSAValue:
    r, c, k = e.reduce_exp(e.clamp(x, -60.0, e.fmt.exp_hi))
    p = e.expm1_kernel(r)
    p = e.muladd(c, e.add(e.c(1.0), p), p)  # expm1(r + c) = p + c * (1 + p)
    h = e.power_of_two(e.isub(k, e.ic(1)))
    y = e.add(e.sub(h, e.c(0.5)), e.mul(h, p))
    y = e.mul(y, e.c(2.0))
    return e.keep_nan(x, e.keep_tiny(x, y))


def _log(e: _Emitter, x: SSAValue) -> SSAValue:
    subnormal = e.cmp(x, "olt", e.c(e.fmt.min_normal))
    scale = e.fmt.mantissa + 2
    scaled = e.select(subnormal, e.mul(x, e.c(2.0**scale)), x)
    k, f = e.split_mantissa(e.bits(scaled))
    k = e.isub(k, e.select(subnormal, e.ic(scale), e.ic(0)))
    y = e.log_kernel(f, e.int_to_float(k), None)
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


FUNCTIONS: dict[str, Callable[[_Emitter, SSAValue], SSAValue]] = {
    "exp": _exp,
    "expm1": _expm1,
    "log": _log,
    "log1p": _log1p,
    "tanh": _tanh,
}
"""The functions this module expands, by name."""


def emit(name: str, x: SSAValue, ops: list[Operation]) -> SSAValue:
    """Append the inline expansion of `name` (a key of `FUNCTIONS`) on f32/f64 `x` to `ops`."""
    t = x.type
    assert isinstance(t, AnyFloat) and t.bitwidth in (32, 64), f"{name} on {t}"
    return FUNCTIONS[name](_Emitter(ops, t), x)
