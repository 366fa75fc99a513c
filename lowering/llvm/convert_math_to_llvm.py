"""`convert-math-to-llvm`: scalar `math` ops to the `llvm` dialect.

Accepts any IR; rewrites scalar `math` ops on f32/f64 (and `math.absi` on integers):

- `math.fma` to `llvm.intr.fma`,
- to `llvm.call_intrinsic` of the type-suffixed LLVM intrinsic (`llvm.floor.f32`,
  `llvm.sqrt.f64`, ...: `exp exp2 log log2 log10 sqrt fabs floor ceil round roundeven
  trunc sin cos pow copysign`, and `llvm.abs.i32` for `math.absi`), not to xDSL's
  `llvm.intr.*` ops, which translate to unsuffixed declarations that clash when one
  module uses an intrinsic at two types,
- to calls of libm functions (`tanh`/`tanhf`, `log1p`, `expm1`, `tan`, `asin`, ...,
  `atan2`, `erf`, `cbrt`), declared once per module as external `llvm.func`s;
- `math.rsqrt` to `1 / sqrt`;
- unless the pass option `libm=true` is given, `math.exp`, `log`, `log1p`, `expm1`,
  `tanh`, `sin`, `cos`, `tan`, `atan`, `asin`, `acos`, `atan2`, `sinh`, `cosh`, `asinh`,
  `acosh`, `atanh`, `exp2`, `log2` and `log10` on f32/f64 to inline branch-free code
  (`arignote.lowering.loops.vector_math`) that LLVM's loop vectoriser can widen; with
  `libm=true` they become suffixed intrinsics (`llvm.exp.f64`, ...) and libm calls as above;
  likewise `func.call @hypot`/`@hypotf` (the `ag` lowering's call of C's `hypot`).

Operands not yet converted are reached through `builtin.unrealized_conversion_cast`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, llvm, math
from xdsl.dialects.builtin import AnyFloat, ModuleOp, i1
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from arignote.lowering.llvm.convert_arith_to_llvm import intrinsic_suffix
from arignote.lowering.llvm.llvm_utils import (
    append,
    call,
    constant,
    declare_function,
    float_attr,
    llvm_constant,
    replace_op,
    to_llvm_all,
)
from arignote.lowering.loops import vector_math
from arignote.lowering.op_builder import build
from arignote.lowering.rewriting import DispatchingApplier

_CALL_INTRINSIC_OPS: dict[type[Operation], str] = {
    math.ExpOp: "llvm.exp",
    math.Exp2Op: "llvm.exp2",
    math.LogOp: "llvm.log",
    math.Log2Op: "llvm.log2",
    math.Log10Op: "llvm.log10",
    math.SqrtOp: "llvm.sqrt",
    math.AbsFOp: "llvm.fabs",
    math.FloorOp: "llvm.floor",
    math.CeilOp: "llvm.ceil",
    math.RoundOp: "llvm.round",
    math.RoundEvenOp: "llvm.roundeven",
    math.TruncOp: "llvm.trunc",
    math.SinOp: "llvm.sin",
    math.CosOp: "llvm.cos",
    math.PowFOp: "llvm.pow",
    math.CopySignOp: "llvm.copysign",
}
"""Float ops on overloaded LLVM intrinsics, named with their type suffix (`llvm.floor.f32`):
xDSL's `llvm.intr.floor` ops would translate to one unsuffixed `llvm.floor` declaration,
whose type is the first use's, and a module using the op on f32 and f64 would not build."""

_LIBM_OPS: dict[type[Operation], str] = {
    math.TanhOp: "tanh",
    math.Log1pOp: "log1p",
    math.ExpM1Op: "expm1",
    math.TanOp: "tan",
    math.AsinOp: "asin",
    math.AcosOp: "acos",
    math.AtanOp: "atan",
    math.SinhOp: "sinh",
    math.CoshOp: "cosh",
    math.AsinhOp: "asinh",
    math.AcoshOp: "acosh",
    math.AtanhOp: "atanh",
    math.ErfOp: "erf",
    math.CbrtOp: "cbrt",
    math.Atan2Op: "atan2",
}


def libm_name(base: str, type_: AnyFloat) -> str:
    """The libm symbol of `base` for `type_`: `tanh` for f64, `tanhf` for f32."""
    if type_.bitwidth == 64:
        return base
    if type_.bitwidth == 32:
        return base + "f"
    raise NotImplementedError(f"no libm function {base} for {type_}")


class FmaLowering(RewritePattern):
    """`math.fma` → `llvm.intr.fma`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: math.FmaOp, rewriter: PatternRewriter, /):
        ops: list[Operation] = []
        a, b, c = to_llvm_all(op.operands, ops)
        result = append(ops, build(llvm.FMAOp, a, b, c))
        replace_op(rewriter, op, ops, result)


class CallIntrinsicLowering(RewritePattern):
    """Float ops on overloaded intrinsics → `llvm.call_intrinsic` of the suffixed name."""

    op_types = tuple(_CALL_INTRINSIC_OPS)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        base = _CALL_INTRINSIC_OPS.get(type(op))
        if base is None:
            return
        ops: list[Operation] = []
        operands = to_llvm_all(op.operands, ops)
        type_ = operands[0].type
        name = f"{base}.{intrinsic_suffix(type_)}"
        result = append(ops, build(llvm.CallIntrinsicOp, name, list(operands), [type_]))
        replace_op(rewriter, op, ops, result)


class AbsILowering(RewritePattern):
    """`math.absi` → `llvm.abs.<int>(x, false)` (INT_MIN stays INT_MIN, no poison)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: math.AbsIOp, rewriter: PatternRewriter, /):
        ops: list[Operation] = []
        (operand,) = to_llvm_all(op.operands, ops)
        poison_on_min = constant(0, i1, ops)
        name = f"llvm.abs.{intrinsic_suffix(operand.type)}"
        intrinsic = build(llvm.CallIntrinsicOp, name, [operand, poison_on_min], [operand.type])
        result = append(ops, intrinsic)
        replace_op(rewriter, op, ops, result)


class LibmLowering(RewritePattern):
    """Float ops without an LLVM intrinsic → `llvm.call` of the libm function."""

    op_types = tuple(_LIBM_OPS)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        base = _LIBM_OPS.get(type(op))
        if base is None:
            return
        ops: list[Operation] = []
        operands = to_llvm_all(op.operands, ops)
        type_ = operands[0].type
        assert isinstance(type_, AnyFloat), f"{op.name} on {type_}"
        name = libm_name(base, type_)
        declare_function(rewriter, op, name, [type_] * len(operands), type_)
        result = call(name, operands, type_, ops)
        replace_op(rewriter, op, ops, result)


class RsqrtLowering(RewritePattern):
    """`math.rsqrt` → `1.0 / llvm.intr.sqrt`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: math.RsqrtOp, rewriter: PatternRewriter, /):
        ops: list[Operation] = []
        (operand,) = to_llvm_all(op.operands, ops)
        type_ = operand.type
        assert isinstance(type_, AnyFloat)
        one = llvm_constant(float_attr(1.0, type_), type_, ops)
        name = f"llvm.sqrt.{intrinsic_suffix(type_)}"
        root = append(ops, build(llvm.CallIntrinsicOp, name, [operand], [type_]))
        result: SSAValue = append(ops, build(llvm.FDivOp, one, root))
        replace_op(rewriter, op, ops, result)


_INLINE_OPS: dict[type[Operation], str] = {
    math.ExpOp: "exp",
    math.LogOp: "log",
    math.Log1pOp: "log1p",
    math.ExpM1Op: "expm1",
    math.TanhOp: "tanh",
    math.SinOp: "sin",
    math.CosOp: "cos",
    math.TanOp: "tan",
    math.AtanOp: "arctan",
    math.AsinOp: "arcsin",
    math.AcosOp: "arccos",
    math.Atan2Op: "arctan2",
    math.SinhOp: "sinh",
    math.CoshOp: "cosh",
    math.AsinhOp: "arcsinh",
    math.AcoshOp: "arccosh",
    math.AtanhOp: "arctanh",
    math.Exp2Op: "exp2",
    math.Log2Op: "log2",
    math.Log10Op: "log10",
}


class InlineMathLowering(RewritePattern):
    """The `math` ops of `_INLINE_OPS` on f32/f64 → inline vectorisable `llvm` ops."""

    op_types = tuple(_INLINE_OPS)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        name = _INLINE_OPS.get(type(op))
        if name is None or not isinstance(op.results[0].type, AnyFloat):
            return
        if op.results[0].type.bitwidth not in (32, 64):
            return
        ops: list[Operation] = []
        operands = to_llvm_all(op.operands, ops)
        result = vector_math.emit(name, operands, ops)
        replace_op(rewriter, op, ops, result)


_INLINE_CALLS: dict[str, str] = {"hypot": "hypot", "hypotf": "hypot"}
"""Calls of C functions (`func.call`, as the `ag` lowering emits them for functions that
`math` lacks) that are expanded inline like the `math` ops of `_INLINE_OPS`."""


class InlineCallLowering(RewritePattern):
    """`func.call @hypot/@hypotf` on f32/f64 → inline vectorisable `llvm` ops (the
    declaration stays, unused)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.CallOp, rewriter: PatternRewriter, /):
        name = _INLINE_CALLS.get(op.callee.string_value())
        if name is None or len(op.results) != 1 or len(op.arguments) != 2:
            return
        type_ = op.results[0].type
        if not isinstance(type_, AnyFloat) or type_.bitwidth not in (32, 64):
            return
        if any(arg.type != type_ for arg in op.arguments):
            return
        ops: list[Operation] = []
        operands = to_llvm_all(op.arguments, ops)
        result = vector_math.emit(name, operands, ops)
        replace_op(rewriter, op, ops, result)


_PATTERNS: tuple[RewritePattern, ...] = (
    FmaLowering(),
    CallIntrinsicLowering(),
    AbsILowering(),
    LibmLowering(),
    RsqrtLowering(),
)


def math_patterns(libm: bool = False) -> tuple[RewritePattern, ...]:
    """The patterns of `convert-math-to-llvm` (option `libm`), in the order they are
    tried (stateless)."""
    return _PATTERNS if libm else (InlineMathLowering(), InlineCallLowering(), *_PATTERNS)


@dataclass(frozen=True)
class ConvertMathToLLVMPass(ModulePass):
    """Rewrite scalar `math` ops into llvm intrinsics, inline code and libm calls.

    `libm=true` keeps `exp`, `log`, `sin`, ... (`_INLINE_OPS`) as LLVM intrinsics and
    calls of the C library (scalar: loops containing them are not vectorised), for
    comparison.
    """

    name = "convert-math-to-llvm"

    libm: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(DispatchingApplier(math_patterns(self.libm))).rewrite_module(op)
