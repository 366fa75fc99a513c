"""NumPy's scalar semantics for each `ag` elementwise op, as `arith`/`math` ops.

Emitters take a `Builder` and scalar SSA values of one of `ag`'s element types (`f32`,
`f64`, `i1`, signed `i8`..`i64`, unsigned `ui8`..`ui64`) and return the scalar result.
Unsigned values keep their `ui` type through `arith` and `llvm` (LLVM has no unsigned
types: the translation to LLVM IR writes `ui8` as `i8`), so every emitter whose result
depends on the sign picks the unsigned `arith` op for them (`divui`, `remui`, `cmpi ult`,
`maxui`, `uitofp`, `fptoui`, `extui`); the others (`addi`, `muli`, the bitwise ops) are
the same bits. They produce `arith` and `math` ops, plus `func.call @fmod`/`@fmodf`
(C's `fmod`, which `arith` lacks) for the float `floordiv`/`mod` and `@hypot`/`@hypotf`
for `ag.hypot`; `LIBM_FUNCTIONS` lists those callees so the pass can declare them. The
ops of `ag.TABLE` get their emitters from the entry's `lower`, built with `TableEmitter`.

Where NumPy has no undefined behaviour, neither does the IR: integer division and
remainder by zero give 0 (and `MIN // -1` wraps to `MIN`), guarded with `arith.select`
so that no `divsi`/`remsi`/`floordivsi` ever sees a zero or `-1` divisor. One deviation:
an integer raised to a negative power is the real power truncated toward zero (0 unless
the base is ±1), as in the reference interpreter; NumPy raises `ValueError`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.dialects import arith, func, math
from xdsl.dialects.builtin import (
    AnyFloat,
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    f32,
    f64,
    i1,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue

from arignote.dialects import ag
from arignote.lowering.llvm.llvm_utils import integer_attr
from arignote.lowering.loops.loop_utils import for_loop, index_constant
from arignote.lowering.op_builder import build

Unary = Callable[[Builder, SSAValue], SSAValue]
Binary = Callable[[Builder, SSAValue, SSAValue], SSAValue]

LIBM_FUNCTIONS: dict[str, Attribute] = {"fmodf": f32, "fmod": f64}
"""The C functions the emitters call, with their (only) operand and result type."""
LIBM_ARITY: dict[str, int] = {}
"""The number of operands of each C function of `LIBM_FUNCTIONS` that has not two."""


# --- helpers ---------------------------------------------------------------------------


def constant(b: Builder, value: float, t: Attribute) -> SSAValue:
    """A scalar `arith.constant` of element type `t` (bools take 0/1)."""
    if isinstance(t, IntegerType) and ag.is_unsigned(t):
        # `arith.constant` takes signless integers only: the same bits, bitcast (-1 is
        # the all-ones pattern, as in two's complement).
        width = t.width.data
        bits = (int(value) + (1 << (width - 1))) % (1 << width) - (1 << (width - 1))
        signless = b.insert(arith.ConstantOp(IntegerAttr(bits, IntegerType(width)))).result
        return b.insert(arith.BitcastOp(signless, t)).result
    if isinstance(t, IntegerType):
        return b.insert(build(arith.ConstantOp, integer_attr(int(value), t))).result
    assert isinstance(t, AnyFloat)
    # (not llvm_utils.float_attr, keyed by `float.hex`, which drops a NaN's sign)
    return b.insert(build(arith.ConstantOp, FloatAttr(float(value), t))).result


def _int_limits(t: IntegerType) -> tuple[int, int]:
    width = t.width.data
    if ag.is_unsigned(t):
        return 0, (1 << width) - 1
    return -(1 << (width - 1)), (1 << (width - 1)) - 1


def _cmpi(b: Builder, x: SSAValue, y: SSAValue, predicate: str) -> SSAValue:
    return b.insert(arith.CmpiOp(x, y, predicate)).result


def _cmpf(b: Builder, x: SSAValue, y: SSAValue, predicate: str) -> SSAValue:
    return b.insert(arith.CmpfOp(x, y, predicate)).result


def _select(b: Builder, cond: SSAValue, x: SSAValue, y: SSAValue) -> SSAValue:
    return b.insert(arith.SelectOp(cond, x, y)).result


def _binary(op_class: type[Operation]) -> Binary:
    """An emitter for a two-operand `arith`/`math` op class."""

    def emit(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
        return b.insert(build(op_class, x, y)).results[0]

    return emit


def _unary(op_class: type[Operation]) -> Unary:
    def emit(b: Builder, x: SSAValue) -> SSAValue:
        return b.insert(op_class(x)).results[0]  # pyright: ignore[reportCallIssue]

    return emit


@dataclass(frozen=True)
class ByCategory:
    """Dispatches on the operands' element type: float, signed integer, bool or unsigned
    integer; `uint` defaults to `int`, right for the ops whose two's-complement bits do
    not depend on the sign (add, sub, mul, bitwise, equality)."""

    float: Binary | None = None
    int: Binary | None = None
    bool: Binary | None = None
    uint: Binary | None = None

    def __call__(self, b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
        t = x.type
        emit = self.float if ag.is_float(t) else self.bool if ag.is_bool(t) else self.int
        if ag.is_unsigned(t) and self.uint is not None:
            emit = self.uint
        if emit is None:
            raise NotImplementedError(f"no lowering for element type {t}")
        return emit(b, x, y)


def _compare(float_pred: str, int_pred: str, bool_pred: str) -> ByCategory:
    """A comparison; bools and unsigned integers compare unsigned (false < true)."""

    def on_float(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
        return _cmpf(b, x, y, float_pred)

    def on_int(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
        return _cmpi(b, x, y, int_pred)

    def on_bool(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
        return _cmpi(b, x, y, bool_pred)

    return ByCategory(on_float, on_int, on_bool, on_bool)


# --- integer division, remainder and power ---------------------------------------------


def _safe_divisor(b: Builder, y: SSAValue) -> tuple[SSAValue, SSAValue, SSAValue]:
    """(divisor with 0 and -1 replaced by 1, y == 0, y == -1)."""
    zero, one, minus_one = (constant(b, v, y.type) for v in (0, 1, -1))
    is_zero = _cmpi(b, y, zero, "eq")
    is_minus_one = _cmpi(b, y, minus_one, "eq")
    unsafe = b.insert(arith.OrIOp(is_zero, is_minus_one)).result
    return _select(b, unsafe, one, y), is_zero, is_minus_one


def int_floordiv(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    """`x // y` rounding toward -inf; `x // 0 == 0`, `x // -1 == -x` (wrapping)."""
    divisor, is_zero, is_minus_one = _safe_divisor(b, y)
    zero = constant(b, 0, x.type)
    quotient = b.insert(arith.FloorDivSIOp(x, divisor)).result
    negated = b.insert(arith.SubiOp(zero, x)).result
    return _select(b, is_zero, zero, _select(b, is_minus_one, negated, quotient))


def int_mod(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    """`x % y` with the sign of `y`; `x % 0 == 0` (`x % ±1` is 0 through the safe divisor)."""
    divisor, _, _ = _safe_divisor(b, y)
    zero = constant(b, 0, x.type)
    rem = b.insert(arith.RemSIOp(x, divisor)).result
    signs_differ = b.insert(
        arith.XOrIOp(_cmpi(b, rem, zero, "slt"), _cmpi(b, y, zero, "slt"))
    ).result
    adjust = b.insert(arith.AndIOp(_cmpi(b, rem, zero, "ne"), signs_differ)).result
    return _select(b, adjust, b.insert(arith.AddiOp(rem, y)).result, rem)


def _unsigned_divisor(b: Builder, y: SSAValue) -> tuple[SSAValue, SSAValue]:
    """(divisor with 0 replaced by 1, y == 0)."""
    zero, one = constant(b, 0, y.type), constant(b, 1, y.type)
    is_zero = _cmpi(b, y, zero, "eq")
    return _select(b, is_zero, one, y), is_zero


def uint_floordiv(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    """Unsigned `x // y` (`divui`); `x // 0 == 0` as NumPy."""
    divisor, is_zero = _unsigned_divisor(b, y)
    quotient = b.insert(arith.DivUIOp(x, divisor)).result
    return _select(b, is_zero, constant(b, 0, x.type), quotient)


def uint_mod(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    """Unsigned `x % y` (`remui`); `x % 0 == 0` as NumPy."""
    divisor, is_zero = _unsigned_divisor(b, y)
    rem = b.insert(arith.RemUIOp(x, divisor)).result
    return _select(b, is_zero, constant(b, 0, x.type), rem)


def uint_pow(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    """Unsigned `x ** y` by squaring (the exponent shifts right logically); wraps."""
    t = x.type
    assert isinstance(t, IntegerType)
    zero, one = constant(b, 0, t), constant(b, 1, t)

    def step(inner: Builder, _: SSAValue, carried: Sequence[SSAValue]) -> list[SSAValue]:
        acc, base, exponent = carried
        odd = _cmpi(inner, inner.insert(arith.AndIOp(exponent, one)).result, zero, "ne")
        product = inner.insert(arith.MuliOp(acc, base)).result
        squared = inner.insert(arith.MuliOp(base, base)).result
        shifted = inner.insert(arith.ShRUIOp(exponent, one)).result
        return [_select(inner, odd, product, acc), squared, shifted]

    lower, upper, unit = (index_constant(b, v) for v in (0, t.width.data, 1))
    return for_loop(b, lower, upper, unit, [one, x, y], step)[0]


def int_pow(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    """`x ** y` by squaring, one step per exponent bit (a fixed-trip `scf.for`); wraps
    like NumPy. A negative exponent gives the real power truncated toward zero, as the
    reference interpreter: `x ** y` for `x == ±1` (which the loop already computes,
    the exponent's bits above its lowest being irrelevant once the base squares to 1),
    else 0. NumPy raises `ValueError` instead."""
    t = x.type
    assert isinstance(t, IntegerType)
    zero, one, minus_one = constant(b, 0, t), constant(b, 1, t), constant(b, -1, t)

    def step(inner: Builder, _: SSAValue, carried: Sequence[SSAValue]) -> list[SSAValue]:
        acc, base, exponent = carried
        odd = _cmpi(inner, inner.insert(arith.AndIOp(exponent, one)).result, zero, "ne")
        product = inner.insert(arith.MuliOp(acc, base)).result
        squared = inner.insert(arith.MuliOp(base, base)).result
        shifted = inner.insert(arith.ShRSIOp(exponent, one)).result
        return [_select(inner, odd, product, acc), squared, shifted]

    lower, upper, unit = (index_constant(b, v) for v in (0, t.width.data, 1))
    acc = for_loop(b, lower, upper, unit, [one, x, y], step)[0]
    unit_base = b.insert(arith.OrIOp(_cmpi(b, x, one, "eq"), _cmpi(b, x, minus_one, "eq")))
    vanishes = b.insert(arith.XOrIOp(unit_base, constant(b, 1, i1))).result
    negative = b.insert(arith.AndIOp(_cmpi(b, y, zero, "slt"), vanishes)).result
    return _select(b, negative, zero, acc)


# --- float division, remainder and power -----------------------------------------------


def fmod(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    """C's `fmod(x, y)` through libm (`arith` has no `remf` in xDSL)."""
    name = "fmodf" if isinstance(x.type, Float32Type) else "fmod"
    return b.insert(func.CallOp(name, [x, y], [x.type])).res[0]


def _float_divmod(b: Builder, x: SSAValue, y: SSAValue) -> tuple[SSAValue, SSAValue]:
    """NumPy's `npy_divmod` for `y != 0`: (unrounded quotient, remainder with y's sign)."""
    zero = constant(b, 0.0, x.type)
    mod = fmod(b, x, y)
    div = b.insert(arith.DivfOp(b.insert(arith.SubfOp(x, mod)).result, y)).result
    signs_differ = b.insert(
        arith.XOrIOp(_cmpf(b, y, zero, "olt"), _cmpf(b, mod, zero, "olt"))
    ).result
    adjust = b.insert(arith.AndIOp(_cmpf(b, mod, zero, "une"), signs_differ)).result
    one = constant(b, 1.0, x.type)
    div = _select(b, adjust, b.insert(arith.SubfOp(div, one)).result, div)
    mod_adjusted = _select(b, adjust, b.insert(arith.AddfOp(mod, y)).result, mod)
    signed_zero = b.insert(math.CopySignOp(zero, y)).result
    is_zero_mod = _cmpf(b, mod, zero, "oeq")
    return div, _select(b, is_zero_mod, signed_zero, mod_adjusted)


def float_floordiv(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    """NumPy's float `floor_divide`: `x / y` when `y == 0`, else the floor of the exact
    quotient snapped to the nearest integer (`npy_floor_divide`)."""
    zero, half, one = (constant(b, v, x.type) for v in (0.0, 0.5, 1.0))
    div, _ = _float_divmod(b, x, y)
    floor = b.insert(math.FloorOp(div)).result
    fraction = b.insert(arith.SubfOp(div, floor)).result
    rounded_up = b.insert(arith.AddfOp(floor, one)).result
    snapped = _select(b, _cmpf(b, fraction, half, "ogt"), rounded_up, floor)
    quotient = b.insert(arith.DivfOp(x, y)).result
    signed_zero = b.insert(math.CopySignOp(zero, quotient)).result
    result = _select(b, _cmpf(b, div, zero, "une"), snapped, signed_zero)
    return _select(b, _cmpf(b, y, zero, "oeq"), quotient, result)


def float_mod(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    """NumPy's float `remainder`: `fmod` adjusted to the sign of `y`; NaN when `y == 0`."""
    zero = constant(b, 0.0, x.type)
    _, mod = _float_divmod(b, x, y)
    return _select(b, _cmpf(b, y, zero, "oeq"), fmod(b, x, y), mod)


# --- unary -----------------------------------------------------------------------------


def int_neg(b: Builder, x: SSAValue) -> SSAValue:
    return b.insert(arith.SubiOp(constant(b, 0, x.type), x)).result


def int_abs(b: Builder, x: SSAValue) -> SSAValue:
    """`|x|`; `|MIN| == MIN` as in NumPy."""
    negative = _cmpi(b, x, constant(b, 0, x.type), "slt")
    return _select(b, negative, int_neg(b, x), x)


@dataclass(frozen=True)
class UnaryByCategory:
    """A unary emitter for floats and one for integers (`uint` for unsigned ones; it
    defaults to `int`)."""

    float: Unary
    int: Unary | None = None
    uint: Unary | None = None

    def __call__(self, b: Builder, x: SSAValue) -> SSAValue:
        emit = self.float if ag.is_float(x.type) else self.int
        if ag.is_unsigned(x.type) and self.uint is not None:
            emit = self.uint
        if emit is None:
            raise NotImplementedError(f"no lowering for element type {x.type}")
        return emit(b, x)


BINARY: dict[type[Operation], ByCategory] = {
    ag.AddOp: ByCategory(_binary(arith.AddfOp), _binary(arith.AddiOp)),
    ag.SubOp: ByCategory(_binary(arith.SubfOp), _binary(arith.SubiOp)),
    ag.MulOp: ByCategory(_binary(arith.MulfOp), _binary(arith.MuliOp)),
    ag.DivOp: ByCategory(_binary(arith.DivfOp)),
    ag.FloorDivOp: ByCategory(float_floordiv, int_floordiv, uint=uint_floordiv),
    ag.ModOp: ByCategory(float_mod, int_mod, uint=uint_mod),
    ag.PowOp: ByCategory(_binary(math.PowFOp), int_pow, uint=uint_pow),
    ag.MaximumOp: ByCategory(
        _binary(arith.MaximumfOp),
        _binary(arith.MaxSIOp),
        _binary(arith.OrIOp),
        _binary(arith.MaxUIOp),
    ),
    ag.MinimumOp: ByCategory(
        _binary(arith.MinimumfOp),
        _binary(arith.MinSIOp),
        _binary(arith.AndIOp),
        _binary(arith.MinUIOp),
    ),
    ag.LtOp: _compare("olt", "slt", "ult"),
    ag.LeOp: _compare("ole", "sle", "ule"),
    ag.GtOp: _compare("ogt", "sgt", "ugt"),
    ag.GeOp: _compare("oge", "sge", "uge"),
    ag.EqOp: _compare("oeq", "eq", "eq"),
    ag.NeOp: _compare("une", "ne", "ne"),
}
"""`ag` binary op class → scalar emitter (NumPy semantics per element type)."""

UNARY: dict[type[Operation], UnaryByCategory] = {
    ag.NegOp: UnaryByCategory(_unary(arith.NegfOp), int_neg),
    ag.AbsOp: UnaryByCategory(_unary(math.AbsFOp), int_abs, uint=lambda b, x: x),
}
"""`ag` unary op class → scalar emitter."""


# --- op library A: more unary math -------------------------------------------------------


def sigmoid(b: Builder, x: SSAValue) -> SSAValue:
    """`1 / (1 + exp(-x))` without overflow: with `e = exp(-|x|)` (at most 1),
    `1 / (1 + e)` for `x >= 0` and `e / (1 + e)` otherwise; NaN stays NaN."""
    one = constant(b, 1.0, x.type)
    e = b.insert(math.ExpOp(b.insert(arith.NegfOp(b.insert(math.AbsFOp(x)).result)).result))
    denominator = b.insert(arith.AddfOp(one, e.result)).result
    positive = b.insert(arith.DivfOp(one, denominator)).result
    negative = b.insert(arith.DivfOp(e.result, denominator)).result
    return _select(b, _cmpf(b, x, constant(b, 0.0, x.type), "oge"), positive, negative)


def softplus(b: Builder, x: SSAValue) -> SSAValue:
    """`log(1 + exp(x))` as `log1p(exp(-|x|)) + max(x, 0)`: no overflow for large `x`,
    no loss of precision for very negative `x`; NaN stays NaN."""
    e = b.insert(math.ExpOp(b.insert(arith.NegfOp(b.insert(math.AbsFOp(x)).result)).result))
    log = b.insert(math.Log1pOp(e.result)).result
    positive_part = b.insert(arith.MaximumfOp(x, constant(b, 0.0, x.type))).result
    return b.insert(arith.AddfOp(log, positive_part)).result


UNARY.update(
    {
        ag.RoundOp: UnaryByCategory(_unary(math.RoundOp)),
        ag.RoundEvenOp: UnaryByCategory(_unary(math.RoundEvenOp)),
        ag.SigmoidOp: UnaryByCategory(sigmoid),
        ag.SoftplusOp: UnaryByCategory(softplus),
    }
)


# --- the table-driven ops (`ag.TABLE`) ---------------------------------------------------


_COMPARISONS: dict[str, ByCategory] = {
    "lt": BINARY[ag.LtOp],
    "le": BINARY[ag.LeOp],
    "gt": BINARY[ag.GtOp],
    "ge": BINARY[ag.GeOp],
    "eq": BINARY[ag.EqOp],
    "ne": BINARY[ag.NeOp],
}


@dataclass(frozen=True)
class TableEmitter:
    """What a table entry's `lower(e, *operands)` builds with: each method inserts at
    `b` and picks the float or integer op from its operands' element type."""

    b: Builder

    def math(self, op_name: str, *xs: SSAValue) -> SSAValue:
        """The xDSL `math` op `op_name` (e.g. "SinOp") of `xs`."""
        op_class = getattr(math, op_name)
        return self.b.insert(op_class(*xs)).results[0]

    def libm(self, name: str, *xs: SSAValue) -> SSAValue:
        """A call of the C function `name` (`namef` for f32); listed in `LIBM_FUNCTIONS`
        (and its arity in `LIBM_ARITY` unless 2)."""
        symbol = name + "f" if isinstance(xs[0].type, Float32Type) else name
        assert symbol in LIBM_FUNCTIONS, f"{symbol} is not in LIBM_FUNCTIONS"
        return self.b.insert(func.CallOp(symbol, list(xs), [xs[0].type])).res[0]

    def const(self, value: float, like: SSAValue) -> SSAValue:
        return constant(self.b, value, like.type)

    def add(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return BINARY[ag.AddOp](self.b, x, y)

    def sub(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return BINARY[ag.SubOp](self.b, x, y)

    def mul(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return BINARY[ag.MulOp](self.b, x, y)

    def neg(self, x: SSAValue) -> SSAValue:
        return UNARY[ag.NegOp](self.b, x)

    def widen(self, x: SSAValue) -> SSAValue:
        """`x` as f64 (a special function computes in f64)."""
        return cast(self.b, x, f64)

    def narrow(self, x: SSAValue, like: SSAValue) -> SSAValue:
        """`x` rounded to the element type of `like`."""
        return cast(self.b, x, like.type)

    def div(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return BINARY[ag.DivOp](self.b, x, y)

    def cmp(self, predicate: str, x: SSAValue, y: SSAValue) -> SSAValue:
        """`x <predicate> y` for "lt", "le", "gt", "ge", "eq", "ne" (ordered for floats but
        "ne", signed for ints), or "uno" (floats: either is NaN)."""
        if predicate == "uno":
            return _cmpf(self.b, x, y, "uno")
        return _COMPARISONS[predicate](self.b, x, y)

    def bitwise(self, name: str, x: SSAValue, y: SSAValue) -> SSAValue:
        """`x & y`, `x | y` or `x ^ y` ("and", "or", "xor") of integers or bools."""
        op_class = {"and": arith.AndIOp, "or": arith.OrIOp, "xor": arith.XOrIOp}[name]
        return self.b.insert(op_class(x, y)).result

    def loop(
        self,
        trips: SSAValue,
        carried: Sequence[SSAValue],
        body: Callable[[TableEmitter, list[SSAValue]], list[SSAValue]],
    ) -> list[SSAValue]:
        """An `scf.for` of `trips` iterations (a float, non-negative and not NaN: the
        caller caps it), carrying `carried` through `body(emitter, values)`."""
        count = self.b.insert(arith.FPToSIOp(trips, i64)).result
        upper = self.b.insert(arith.IndexCastOp(count, IndexType())).result
        zero, one = index_constant(self.b, 0), index_constant(self.b, 1)

        def step(inner: Builder, _: SSAValue, values: Sequence[SSAValue]) -> list[SSAValue]:
            return body(TableEmitter(inner), list(values))

        return list(for_loop(self.b, zero, upper, one, carried, step))

    def bool_const(self, value: bool) -> SSAValue:
        return constant(self.b, int(value), i1)

    def is_float(self, x: SSAValue) -> bool:
        return ag.is_float(x.type)

    def is_bool(self, x: SSAValue) -> bool:
        return ag.is_bool(x.type)

    def select(self, cond: SSAValue, x: SSAValue, y: SSAValue) -> SSAValue:
        return _select(self.b, cond, x, y)


def _table_unary(entry: ag.Elementwise) -> UnaryByCategory:
    def emit(b: Builder, x: SSAValue) -> SSAValue:
        return entry.lower(TableEmitter(b), x)

    return UnaryByCategory(emit, None if entry.category in ("float", "inexact") else emit)


def _table_binary(entry: ag.Elementwise) -> ByCategory:
    def emit(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
        return entry.lower(TableEmitter(b), x, y)

    integers = None if entry.category in ("float", "inexact") else emit
    return ByCategory(emit, integers, integers)


LIBM_FUNCTIONS.update({"hypotf": f32, "hypot": f64})
# the special functions (`ag.special_functions`) compute in f64: one-operand C functions
LIBM_FUNCTIONS.update({name: f64 for name in ("erfc", "tgamma", "lgamma", "j0", "j1")})
LIBM_ARITY.update({name: 1 for name in ("erfc", "tgamma", "lgamma", "j0", "j1")})
UNARY.update({ag.OPS[e.name]: _table_unary(e) for e in ag.TABLE if e.arity == 1})
BINARY.update({ag.OPS[e.name]: _table_binary(e) for e in ag.TABLE if e.arity == 2})


# --- casts -----------------------------------------------------------------------------


def _width(t: Attribute) -> int:
    if isinstance(t, IntegerType):
        return t.width.data
    return 32 if isinstance(t, Float32Type) else 64


def _cast_to_bool(b: Builder, x: SSAValue, _: Attribute) -> SSAValue:
    """Nonzero is true; NaN is true (`une`)."""
    if ag.is_float(x.type):
        return _cmpf(b, x, constant(b, 0.0, x.type), "une")
    return _cmpi(b, x, constant(b, 0, x.type), "ne")


def _cast_from_bool(b: Builder, x: SSAValue, to: Attribute) -> SSAValue:
    if ag.is_float(to):
        return b.insert(arith.UIToFPOp(x, to)).result  # pyright: ignore[reportArgumentType]
    return b.insert(arith.ExtUIOp(x, to)).result  # pyright: ignore[reportArgumentType]


def _cast_numeric(b: Builder, x: SSAValue, to: Attribute) -> SSAValue:
    """float↔float, int↔int (extending by the source's sign), int→float, float→int
    (truncating); unsigned sources and targets take the unsigned conversions."""
    source, wider = x.type, _width(to) > _width(x.type)
    narrower = _width(to) < _width(x.type)
    unsigned_source = ag.is_unsigned(source)
    if ag.is_float(source) and ag.is_float(to):
        op = arith.ExtFOp(x, to) if wider else arith.TruncFOp(x, to) if narrower else None
    elif ag.is_float(to):
        op = arith.UIToFPOp(x, to) if unsigned_source else arith.SIToFPOp(x, to)  # pyright: ignore[reportArgumentType]
    elif ag.is_float(source):
        op = arith.FPToUIOp(x, to) if ag.is_unsigned(to) else arith.FPToSIOp(x, to)  # pyright: ignore[reportArgumentType]
    elif wider:
        op = arith.ExtUIOp(x, to) if unsigned_source else arith.ExtSIOp(x, to)  # pyright: ignore[reportArgumentType]
    else:  # same width, other signedness: the same bits
        op = arith.TruncIOp(x, to) if narrower else arith.BitcastOp(x, to)  # pyright: ignore[reportArgumentType]
    return x if op is None else b.insert(op).results[0]  # pyright: ignore[reportArgumentType]


def cast(b: Builder, x: SSAValue, to: Attribute) -> SSAValue:
    """NumPy's `astype` of one element: see `ag.cast`."""
    if x.type == to:
        return x
    if to == i1:
        return _cast_to_bool(b, x, to)
    if x.type == i1:
        return _cast_from_bool(b, x, to)
    return _cast_numeric(b, x, to)


# --- reduction identities --------------------------------------------------------------


def reduction_init(b: Builder, op_class: type[Operation], t: Attribute) -> SSAValue:
    """The identity of a reduction's combiner for element type `t`."""
    if op_class is ag.ReduceSumOp:
        return constant(b, 0, t)
    if op_class is ag.ReduceProdOp:
        return constant(b, 1, t)
    is_max = op_class is ag.ReduceMaxOp
    if ag.is_float(t):
        return constant(b, float("-inf") if is_max else float("inf"), t)
    if ag.is_bool(t):
        return constant(b, 0 if is_max else 1, t)
    assert isinstance(t, IntegerType)
    low, high = _int_limits(t)
    return constant(b, low if is_max else high, t)


REASSOC = arith.FastMathFlagsAttr([arith.FastMathFlag.REASSOC])
"""`fastmath<reassoc>`: on a float accumulation, lets LLVM keep several partial sums
(vector lanes, interleaved registers) and combine them at the end: the loop vectorises,
and the result is as accurate as NumPy's pairwise sum for the lengths that matter."""


def _reassociating(op_class: type[Operation]) -> Binary:
    def emit(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
        return b.insert(op_class(x, y, REASSOC)).results[0]  # pyright: ignore[reportCallIssue]

    return emit


ACCUMULATE_ADD = ByCategory(_reassociating(arith.AddfOp), _binary(arith.AddiOp))
"""`acc + x` for an accumulation: float adds may be reassociated (see `REASSOC`)."""

REDUCTION_COMBINER: dict[type[Operation], ByCategory] = {
    ag.ReduceSumOp: ACCUMULATE_ADD,
    ag.ReduceProdOp: ByCategory(_reassociating(arith.MulfOp), _binary(arith.MuliOp)),
    ag.ReduceMaxOp: BINARY[ag.MaximumOp],
    ag.ReduceMinOp: BINARY[ag.MinimumOp],
}
"""`ag` reduction class → the binary emitter folding one element into the accumulator."""
