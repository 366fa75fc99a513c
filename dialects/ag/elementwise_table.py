"""Table-driven elementwise ops: one `Elementwise` entry per op feeds every layer.

An entry names the op (Theano's scalar-op name, which is also the `ag` op name and the
`Elemwise{...}` label), its arity, the element types it accepts, its NumPy reference,
its gradient and its scalar lowering. From `TABLE`:

- this module defines the `ag` op classes (`OPS`, `ag.sin` is `SinOp`), with the
  entry's `mlir` example as the class docstring's example;
- `arignote.tensor.basic` defines the frontend functions (`T.sin`, with Theano's dtype
  rule: a "float" op upcasts integers as `upgrade_to_float`, a "numeric" op keeps them);
- `arignote.tensor.grad_rules` registers `grad(T, inputs, output, gz)`;
- `arignote.runtime.interpreter` registers `numpy` as the reference implementation;
- `arignote.lowering.loops.ag_scalar` registers `lower(e, *operands)`, which builds the scalar
  result with the small emitter `e` that the lowering passes in (`e.math("SinOp", x)`
  for an xDSL `math` op, `e.libm("hypot", x, y)` for a C function, `e.mul`, `e.const`,
  `e.cmp`, `e.select`, which pick the float or integer `arith` op from the operands).

The callables receive the tensor namespace or the emitter as an argument, so this
module imports neither the frontend nor the lowering (the layering of ARCHITECTURE.md).
Adding an op is one entry here, plus its tests and docs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np
from xdsl.irdl import irdl_op_definition

from arignote.dialects.ag import special_functions as sf
from arignote.dialects.ag.elementwise import (
    BinaryElementwiseOp,
    ComparisonOp,
    UnaryElementwiseOp,
    UnaryPredicateOp,
)

Grad = Callable[..., list[Any]]
"""`grad(T, inputs, output, gz) -> [term or None per input]` (T: `arignote.tensor.basic`)."""
Lower = Callable[..., Any]
"""`lower(e, *operands) -> result` with the scalar emitter of `ag_scalar`."""


@dataclass(frozen=True)
class Elementwise:
    """One elementwise op, as every layer sees it."""

    name: str
    """Theano's name: the frontend function, `ag.<name>` and `Elemwise{<name>}`."""
    arity: int
    category: str
    """"float" (integer inputs are upcast as Theano's `upgrade_to_float`), "inexact" (as
    "float", and complex inputs as they are: `exp`, `log`, `sqrt`), "numeric"
    (integers stay integers; bools are cast to int8), "integer" (integers and bools as
    they are; floats are a TypeError, as Theano's bitwise ops) or "any" (every dtype as
    it is)."""
    numpy: Callable[..., Any]
    """The reference: a NumPy ufunc (or function) of `arity` arrays of the op's type."""
    grad: Grad | None
    """The gradient; None for a piecewise-constant op (no gradient, as Theano's zeros)."""
    lower: Lower
    summary: str
    """One line for the docstring: what the op computes."""
    aliases: tuple[str, ...] = ()
    """Other frontend names of the same function (`square` for `sqr`)."""
    result: str = "same"
    """The result's element type: "same" (the operand's) or "bool" (`i1`, as `isnan`).
    Ops with integer or bool results carry no gradient (as the comparisons)."""
    grad_defined: bool = True
    """False where Theano does not implement the gradient (`tri_gamma`, `gammainc`):
    then there is no gradient rule, and `grad` through the op raises
    NotImplementedError (`grad` None with this True means piecewise constant)."""

    @property
    def differentiable_type(self) -> bool:
        """Whether the result can be a float (else the op has no gradient rule at all)."""
        return self.result == "same" and self.category in ("float", "inexact", "numeric")

    @property
    def class_name(self) -> str:
        return "".join(part.capitalize() for part in self.name.split("_")) + "Op"

    @property
    def mlir(self) -> str:
        """The op's syntax, for the docstring and docs/dialect.md."""
        if self.arity == 1:
            if self.result == "bool":
                return f"%r = ag.{self.name} %x : tensor<?xf32> -> tensor<?xi1>"
            t = "tensor<?xi32>" if self.category == "integer" else "tensor<?xf32>"
            return f"%r = ag.{self.name} %x : {t}"
        e = "i32" if self.category == "integer" else "f64"
        return f"%r = ag.{self.name} %y, %x : tensor<?x3x{e}>, tensor<3x{e}> -> tensor<?x3x{e}>"


# --- gradients (Theano's `grad` of each scalar op) ---------------------------------------


def _grad_exp(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    return [gz * out]


def _grad_log(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    return [gz / inputs[0]]


def _grad_tanh(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    return [gz * (1 - out * out)]


def _grad_sqrt(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    return [gz * 0.5 / out]


def _grad_log1p(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    return [gz / (1 + inputs[0])]


def _grad_expm1(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    return [gz * (out + 1)]


def _grad_sin(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    return [gz * T.cos(inputs[0])]


def _grad_cos(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    return [-gz * T.sin(inputs[0])]


def _grad_tan(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    return [gz / T.sqr(T.cos(inputs[0]))]


def _grad_arcsin(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    return [gz / T.sqrt(1 - T.sqr(inputs[0]))]


def _grad_arccos(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    return [-gz / T.sqrt(1 - T.sqr(inputs[0]))]


def _grad_arctan(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    return [gz / (1 + T.sqr(inputs[0]))]


def _grad_sinh(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    return [gz * T.cosh(inputs[0])]


def _grad_cosh(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    return [gz * T.sinh(inputs[0])]


def _grad_arcsinh(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    return [gz / T.sqrt(T.sqr(inputs[0]) + 1)]


def _grad_arccosh(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    return [gz / T.sqrt(T.sqr(inputs[0]) - 1)]


def _grad_arctanh(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    return [gz / (1 - T.sqr(inputs[0]))]


def _grad_exp2(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    return [gz * out * math.log(2.0)]


def _grad_log2(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    return [gz / (inputs[0] * math.log(2.0))]


def _grad_log10(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    return [gz / (inputs[0] * math.log(10.0))]


def _grad_sqr(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    return [gz * inputs[0] * 2]


def _grad_inv(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    return [-gz / T.sqr(inputs[0])]


def _grad_deg2rad(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    return [gz * (math.pi / 180.0)]


def _grad_rad2deg(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    return [gz * (180.0 / math.pi)]


def _grad_arctan2(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    y, x = inputs
    r2 = T.sqr(x) + T.sqr(y)
    return [gz * x / r2, -gz * y / r2]


def _grad_hypot(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    x, y = inputs
    return [gz * x / out, gz * y / out]


# special functions (`theano.scalar.basic_scipy`'s gradients)


def _grad_erf(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    x = inputs[0]
    return [gz * sf.TWO_OVER_SQRT_PI * T.exp(-x * x)]


def _grad_erfc(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    x = inputs[0]
    return [-gz * sf.TWO_OVER_SQRT_PI * T.exp(-x * x)]


def _grad_erfcx(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    return [gz * (-sf.TWO_OVER_SQRT_PI + 2.0 * inputs[0] * out)]


def _grad_erfinv(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    return [gz * (sf.SQRT_PI / 2) * T.exp(out * out)]


def _grad_erfcinv(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    return [-gz * (sf.SQRT_PI / 2) * T.exp(out * out)]


def _grad_gamma(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    return [gz * out * T.psi(inputs[0])]


def _grad_gammaln(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    return [gz * T.psi(inputs[0])]


def _grad_psi(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    return [gz * T.tri_gamma(inputs[0])]


def _grad_j0(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    return [-gz * T.j1(inputs[0])]


def _grad_j1(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    # Theano's (j0(x) - jv(2, x)) / 2, which is j0(x) - j1(x) / x (1/2 at x = 0)
    x = inputs[0]
    return [gz * T.switch(T.eq(x, 0), 0.5, T.j0(x) - out / x)]


def _grad_i0(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    return [gz * T.i1(inputs[0])]


def _grad_i1(T: Any, inputs: list[Any], out: Any, gz: Any) -> list[Any]:
    # Theano's (i0(x) + iv(2, x)) / 2, which is i0(x) - i1(x) / x (1/2 at x = 0)
    x = inputs[0]
    return [gz * T.switch(T.eq(x, 0), 0.5, T.i0(x) - out / x)]


# --- scalar lowerings ------------------------------------------------------------------


def _math(op_name: str) -> Lower:
    def lower(e: Any, *xs: Any) -> Any:
        return e.math(op_name, *xs)

    return lower


def _lower_sqr(e: Any, x: Any) -> Any:
    return e.mul(x, x)


def _lower_inv(e: Any, x: Any) -> Any:
    return e.div(e.const(1.0, x), x)


def _scale(factor: float) -> Lower:
    def lower(e: Any, x: Any) -> Any:
        return e.mul(x, e.const(factor, x))

    return lower


def _lower_sgn(e: Any, x: Any) -> Any:
    # +1 above 0, -1 below, +0 at either zero and NaN for NaN, as numpy.sign.
    zero = e.const(0.0, x)
    rest = e.select(e.cmp("eq", x, zero), zero, x)
    rest = e.select(e.cmp("lt", x, zero), e.const(-1.0, x), rest)
    return e.select(e.cmp("gt", x, zero), e.const(1.0, x), rest)


def _lower_hypot(e: Any, x: Any, y: Any) -> Any:
    return e.libm("hypot", x, y)


def _lower_isnan(e: Any, x: Any) -> Any:
    if not e.is_float(x):
        return e.bool_const(False)  # integers and bools are never NaN (numpy.isnan)
    return e.cmp("uno", x, x)


def _lower_isinf(e: Any, x: Any) -> Any:
    if not e.is_float(x):
        return e.bool_const(False)
    return e.cmp("eq", e.math("AbsFOp", x), e.const(math.inf, x))


def _bitwise(name: str) -> Lower:
    def lower(e: Any, x: Any, y: Any) -> Any:
        return e.bitwise(name, x, y)

    return lower


def _lower_invert(e: Any, x: Any) -> Any:
    # ~x is x ^ all-ones: -1 for a signed integer, 1 (true) for a bool.
    return e.bitwise("xor", x, e.const(1 if e.is_bool(x) else -1, x))


# --- the table -------------------------------------------------------------------------


def _float(
    name: str,
    numpy: Callable[..., Any],
    grad: Grad | None,
    lower: Lower,
    summary: str,
    arity: int = 1,
    aliases: tuple[str, ...] = (),
) -> Elementwise:
    return Elementwise(name, arity, "float", numpy, grad, lower, summary, aliases)


_SCIPY_NAMES = {
    "tri_gamma": "polygamma(1, x)",
    "gammal": "gammainc(k, x) * gamma(k)",
    "gammau": "gammaincc(k, x) * gamma(k)",
}


def _special(
    name: str, algorithm: Callable[..., Any], grad: Grad | None, summary: str, arity: int = 1
) -> Elementwise:
    """A special function: one algorithm (`special_functions`) gives both the NumPy
    reference and the lowering (in f64); no `grad` means Theano defines none."""
    reference = sf.numpy_reference(algorithm)
    scipy_name = _SCIPY_NAMES.get(name, name)
    reference.reference_name = f"scipy.special.{scipy_name}"  # pyright: ignore
    lower = sf.in_float64(algorithm)
    entry = Elementwise(name, arity, "float", reference, grad, lower, summary)
    return entry if grad is not None else replace(entry, grad_defined=False)


def _inexact(
    name: str, numpy: Callable[..., Any], grad: Grad, lower: Lower, summary: str
) -> Elementwise:
    """A "float" op that also takes complex numbers (the interpreter only, natively)."""
    return Elementwise(name, 1, "inexact", numpy, grad, lower, summary)


TABLE: tuple[Elementwise, ...] = (
    _inexact("exp", np.exp, _grad_exp, _math("ExpOp"), "`e ** x`"),
    _inexact("log", np.log, _grad_log, _math("LogOp"), "natural logarithm"),
    _float("tanh", np.tanh, _grad_tanh, _math("TanhOp"), "hyperbolic tangent"),
    _inexact("sqrt", np.sqrt, _grad_sqrt, _math("SqrtOp"), "square root"),
    _float("log1p", np.log1p, _grad_log1p, _math("Log1pOp"), "`log(1 + x)`, accurate for small x"),
    _float("expm1", np.expm1, _grad_expm1, _math("ExpM1Op"), "`exp(x) - 1`, accurate for small x"),
    _float("floor", np.floor, None, _math("FloorOp"), "rounding toward minus infinity"),
    _float("ceil", np.ceil, None, _math("CeilOp"), "rounding toward plus infinity"),
    _float("sin", np.sin, _grad_sin, _math("SinOp"), "sine"),
    _float("cos", np.cos, _grad_cos, _math("CosOp"), "cosine"),
    _float("tan", np.tan, _grad_tan, _math("TanOp"), "tangent"),
    _float("arcsin", np.arcsin, _grad_arcsin, _math("AsinOp"), "inverse sine"),
    _float("arccos", np.arccos, _grad_arccos, _math("AcosOp"), "inverse cosine"),
    _float("arctan", np.arctan, _grad_arctan, _math("AtanOp"), "inverse tangent"),
    _float("sinh", np.sinh, _grad_sinh, _math("SinhOp"), "hyperbolic sine"),
    _float("cosh", np.cosh, _grad_cosh, _math("CoshOp"), "hyperbolic cosine"),
    _float("arcsinh", np.arcsinh, _grad_arcsinh, _math("AsinhOp"), "inverse hyperbolic sine"),
    _float("arccosh", np.arccosh, _grad_arccosh, _math("AcoshOp"), "inverse hyperbolic cosine"),
    _float("arctanh", np.arctanh, _grad_arctanh, _math("AtanhOp"), "inverse hyperbolic tangent"),
    _float("exp2", np.exp2, _grad_exp2, _math("Exp2Op"), "`2 ** x`"),
    _float("log2", np.log2, _grad_log2, _math("Log2Op"), "base-2 logarithm"),
    _float("log10", np.log10, _grad_log10, _math("Log10Op"), "base-10 logarithm"),
    Elementwise("sqr", 1, "numeric", np.square, _grad_sqr, _lower_sqr, "`x * x`", ("square",)),
    _float("inv", np.reciprocal, _grad_inv, _lower_inv, "`1 / x`", aliases=("reciprocal",)),
    Elementwise(
        "sgn", 1, "numeric", np.sign, None, _lower_sgn, "sign: -1, 0 or +1 (NaN stays)", ("sign",)
    ),
    _float("trunc", np.trunc, None, _math("TruncOp"), "rounding toward zero"),
    _float("deg2rad", np.deg2rad, _grad_deg2rad, _scale(math.pi / 180.0), "degrees to radians"),
    _float("rad2deg", np.rad2deg, _grad_rad2deg, _scale(180.0 / math.pi), "radians to degrees"),
    _float(
        "arctan2",
        np.arctan2,
        _grad_arctan2,
        _math("Atan2Op"),
        "`arctan(y / x)` in the quadrant of `(x, y)`",
        arity=2,
    ),
    _float(
        "hypot",
        np.hypot,
        _grad_hypot,
        _lower_hypot,
        "`sqrt(x**2 + y**2)` without overflow",
        arity=2,
    ),
    Elementwise("isnan", 1, "any", np.isnan, None, _lower_isnan, "NaN test", result="bool"),
    Elementwise(
        "isinf",
        1,
        "any",
        np.isinf,
        None,
        _lower_isinf,
        "infinity test (either sign)",
        result="bool",
    ),
    Elementwise(
        "and_", 2, "integer", np.bitwise_and, None, _bitwise("and"), "bitwise and", ("bitwise_and",)
    ),
    Elementwise(
        "or_", 2, "integer", np.bitwise_or, None, _bitwise("or"), "bitwise or", ("bitwise_or",)
    ),
    Elementwise(
        "xor", 2, "integer", np.bitwise_xor, None, _bitwise("xor"), "bitwise xor", ("bitwise_xor",)
    ),
    Elementwise(
        "invert",
        1,
        "integer",
        np.invert,
        None,
        _lower_invert,
        "bitwise not (logical for bools)",
        ("bitwise_not",),
    ),
    # special functions (issue 13): see `special_functions` for the algorithms
    _special("erf", sf.erf, _grad_erf, "error function"),
    _special("erfc", sf.erfc, _grad_erfc, "complementary error function `1 - erf(x)`"),
    _special("erfcx", sf.erfcx, _grad_erfcx, "scaled complementary error function"),
    _special("erfinv", sf.erfinv, _grad_erfinv, "inverse error function"),
    _special("erfcinv", sf.erfcinv, _grad_erfcinv, "inverse complementary error function"),
    _special("gamma", sf.gamma, _grad_gamma, "gamma function"),
    _special("gammaln", sf.gammaln, _grad_gammaln, "`log(abs(gamma(x)))`"),
    _special("psi", sf.psi, _grad_psi, "digamma function, the derivative of `gammaln`"),
    _special("tri_gamma", sf.tri_gamma, None, "trigamma function, the derivative of `psi`"),
    _special("j0", sf.j0, _grad_j0, "Bessel function of the first kind of order 0"),
    _special("j1", sf.j1, _grad_j1, "Bessel function of the first kind of order 1"),
    _special("i0", sf.i0, _grad_i0, "modified Bessel function of the first kind, order 0"),
    _special("i1", sf.i1, _grad_i1, "modified Bessel function of the first kind, order 1"),
    _special("gammainc", sf.gammainc, None, "regularized lower incomplete gamma `P(k, x)`", 2),
    _special("gammaincc", sf.gammaincc, None, "regularized upper incomplete gamma `Q(k, x)`", 2),
    _special("gammal", sf.gammal, None, "lower incomplete gamma `P(k, x) gamma(k)`", 2),
    _special("gammau", sf.gammau, None, "upper incomplete gamma `Q(k, x) gamma(k)`", 2),
)
"""Every table-driven elementwise op, in the order of docs/tensor_api.md."""


def _define(entry: Elementwise) -> type:
    base = _BASES[entry.arity, entry.result]
    reference = getattr(entry.numpy, "reference_name", f"numpy.{entry.numpy.__name__}")
    doc = f"Elementwise {entry.summary} (`{reference}`).\n\n```mlir\n"
    doc += f"{entry.mlir}\n```\n"
    namespace: dict[str, Any] = {
        "name": f"ag.{entry.name}",
        "CATEGORY": entry.category,
        "ENTRY": entry,
        "__doc__": doc,
        "__module__": __name__,
        "__annotations__": {"CATEGORY": ClassVar[str], "ENTRY": ClassVar[Elementwise]},
    }
    return irdl_op_definition(type(entry.class_name, (base,), namespace))


_BASES: dict[tuple[int, str], type] = {
    (1, "same"): UnaryElementwiseOp,
    (1, "bool"): UnaryPredicateOp,
    (2, "same"): BinaryElementwiseOp,
    (2, "bool"): ComparisonOp,
}
"""The op base class of an entry, by (arity, result)."""

OPS: dict[str, type] = {entry.name: _define(entry) for entry in TABLE}
"""The `ag` op class of each entry, by name."""
UNARY_TABLE_OPS: tuple[type[UnaryElementwiseOp], ...] = tuple(
    OPS[e.name] for e in TABLE if e.arity == 1
)
BINARY_TABLE_OPS: tuple[type[BinaryElementwiseOp], ...] = tuple(
    OPS[e.name] for e in TABLE if e.arity == 2
)
globals().update({cls.__name__: cls for cls in OPS.values()})  # importable by their name
