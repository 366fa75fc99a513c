"""`ag-to-loops`, checked against NumPy.

Two ways: the loops it produces run in xDSL's interpreter (a few ops, f64/i64), and the
whole path (ag IR → `ag-to-loops` → `LLVM_LOWERING` → `NativeModule` →
`NativeFunction`) runs natively for every `ag` op and element type, with broadcasting,
strided inputs and the shape checks' `ValueError`s.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import cache
from math import prod
from typing import Any

import numpy as np
import pytest
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType, ModuleOp, i64
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.interpreters import register_implementations
from xdsl.interpreters.builtin import xtype_for_el_type
from xdsl.interpreters.shaped_array import ShapedArray
from xdsl.interpreters.utils.ptr import TypedPtr
from xdsl.parser import Parser

from arignote.dialects import ag
from arignote.lowering.driver import apply_pipeline, lower_to_llvm, make_context
from arignote.lowering.pipelines import LOOPS_LOWERING
from arignote.runtime.native import check_messages, err_length, message_arity

try:
    from arignote.runtime.cpu import NativeModule
    from arignote.runtime.native import NativeFunction

    HAVE_CPU = True
except ImportError:  # pragma: no cover - only while runtime.cpu is being written
    HAVE_CPU = False

needs_cpu = pytest.mark.skipif(not HAVE_CPU, reason="arignote.runtime.cpu is not importable")

MLIR_TYPE = {
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
    np.dtype(np.bool_): "i1",
    np.dtype(np.int8): "i8",
    np.dtype(np.int16): "i16",
    np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64",
    np.dtype(np.uint8): "ui8",
    np.dtype(np.uint16): "ui16",
    np.dtype(np.uint32): "ui32",
    np.dtype(np.uint64): "ui64",
}
FLOATS = [np.float32, np.float64]
INTS = [np.int32, np.int64]
UINTS = [np.uint8, np.uint64]  # the unsigned ops (divui, cmpi ult, ...) at both ends
NUMERIC = FLOATS + INTS + UINTS
ANY = NUMERIC + [np.bool_]
CATEGORY_DTYPES = {
    "float": FLOATS,
    "inexact": FLOATS,  # complex numbers have no native lowering
    "numeric": NUMERIC,
    "arith": NUMERIC,
    "integer": INTS + UINTS + [np.bool_],
    "real": ANY,
    "any": ANY,
}


def ttype(shape: Sequence[int | None], dtype: Any) -> str:
    """`tensor<...>` text; None is a dynamic dimension."""
    dims = "".join(("?" if d is None else str(d)) + "x" for d in shape)
    return f"tensor<{dims}{MLIR_TYPE[np.dtype(dtype)]}>"


def parse(text: str) -> ModuleOp:
    return Parser(make_context(), text).parse_module()


def lower_loops(text: str) -> ModuleOp:
    module = parse(text)
    apply_pipeline(make_context(), module, LOOPS_LOWERING)
    module.verify()
    return module


def assert_matches(out: np.ndarray, expected: Any) -> None:
    expected = np.asarray(expected)
    assert out.shape == expected.shape
    assert out.dtype == expected.dtype, (out.dtype, expected.dtype)
    if out.dtype.kind != "f":
        np.testing.assert_array_equal(out, expected)
        return
    rtol, atol = (1e-5, 1e-5) if out.dtype == np.float32 else (1e-6, 1e-12)
    np.testing.assert_allclose(out, expected, rtol=rtol, atol=atol, equal_nan=True)


RNG = np.random.default_rng(1234)


def data(dtype: Any, shape: tuple[int, ...], low: int = -9, high: int = 10) -> np.ndarray:
    """Random values of `dtype`: small integers, normal floats, fair bools."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return RNG.random(shape) < 0.5
    if dtype.kind == "f":
        return (RNG.standard_normal(shape) * 3).astype(dtype)
    return RNG.integers(low, high, shape).astype(dtype)


# --- the xDSL interpreter on the loops -----------------------------------------------------


@register_impls
class MissingImpls(InterpreterFunctions):
    """memref/arith ops that xDSL 0.74's interpreter lacks (or runs only statically)."""

    @impl(memref.DimOp)
    def run_dim(self, interpreter: Interpreter, op: memref.DimOp, args: PythonValues):
        return (args[0].shape[args[1]],)

    @impl(memref.AllocOp)
    def run_alloc(self, interpreter: Interpreter, op: memref.AllocOp, args: PythonValues):
        t = op.memref.type
        assert isinstance(t, MemRefType)
        sizes = iter(args)
        shape = [next(sizes) if d == DYNAMIC_INDEX else d for d in t.get_shape()]
        xtype = xtype_for_el_type(t.get_element_type(), interpreter.index_bitwidth)
        return (ShapedArray(TypedPtr[Any].zeros(prod(shape), xtype=xtype), shape),)

    @impl(arith.TruncIOp)
    def run_trunci(self, interpreter: Interpreter, op: arith.TruncIOp, args: PythonValues):
        width = op.result.type.width.data  # pyright: ignore[reportAttributeAccessIssue]
        value = args[0] & ((1 << width) - 1)
        return (value - (1 << width) if value >> (width - 1) else value,)

    @impl(arith.NegfOp)
    def run_negf(self, interpreter: Interpreter, op: arith.NegfOp, args: PythonValues):
        return (-args[0],)


def shaped(array: np.ndarray, t: Any) -> ShapedArray[Any]:
    """`array` as an interpreter memref value of memref type `t` (contiguous)."""
    xtype = xtype_for_el_type(t.get_element_type(), 64)
    values = array.astype(np.float64 if array.dtype.kind == "f" else np.int64).ravel().tolist()
    return ShapedArray(TypedPtr[Any].new(values, xtype=xtype), list(array.shape))


def interpret(module: ModuleOp, name: str, *arrays: np.ndarray) -> list[np.ndarray]:
    """Calls `@name__shape` then `@name` in the interpreter, as `NativeFunction` does."""
    interpreter = Interpreter(module)
    register_implementations(interpreter, make_context())
    interpreter.register_implementations(MissingImpls(), override=True)
    compute = next(
        op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == name
    )
    types = compute.function_type.inputs.data
    args = [shaped(a, t) for a, t in zip(arrays, types, strict=False)]  # pyright: ignore
    out_types = types[len(arrays) :]
    rank = sum(t.get_num_dims() for t in out_types)  # pyright: ignore
    dims = shaped(np.zeros(max(rank, 1), np.int64), MemRefType(i64, [1]))
    messages = check_messages(module, name)
    n_err = err_length(messages)
    err = shaped(np.zeros(n_err, np.int64), MemRefType(i64, [n_err]))
    (code,) = interpreter.call_op(name + "__shape", (*args, dims, err))
    if code:
        message = messages[code - 1]
        raise ValueError(message % tuple(err.data[1 : 1 + message_arity(message)]))
    outputs, offset = [], 0
    for t in out_types:
        shape = dims.data[offset : offset + t.get_num_dims()]  # pyright: ignore
        offset += len(shape)
        outputs.append(shaped(np.zeros(shape, np.int64), t))
    interpreter.call_op(name, (*args, *outputs))
    return [np.array(o.data).reshape(o.shape) for o in outputs]


INTERPRETED = """
func.func @add(%x: tensor<?x?xf64>, %row: tensor<1x?xf64>)
    -> (tensor<?x?xf64>, tensor<?x?xf64>, tensor<1x?xf64>) {
  %s = ag.add %x, %row : tensor<?x?xf64>, tensor<1x?xf64> -> tensor<?x?xf64>
  func.return %s, %s, %row : tensor<?x?xf64>, tensor<?x?xf64>, tensor<1x?xf64>
}
func.func @reduce(%x: tensor<?x?xf64>) -> (tensor<?xf64>, tensor<f64>, tensor<?xf64>) {
  %s = ag.reduce_sum %x {axes = array<i64: 0>} : tensor<?x?xf64> -> tensor<?xf64>
  %t = ag.reduce_sum %x {axes = array<i64: 0, 1>} : tensor<?x?xf64> -> tensor<f64>
  %m = ag.reduce_max %x {axes = array<i64: 1>} : tensor<?x?xf64> -> tensor<?xf64>
  func.return %s, %t, %m : tensor<?xf64>, tensor<f64>, tensor<?xf64>
}
func.func @dot(%a: tensor<?x?xf64>, %b: tensor<?x?xf64>, %v: tensor<?xf64>)
    -> (tensor<?x?xf64>, tensor<?xf64>) {
  %c = ag.dot %a, %b : tensor<?x?xf64>, tensor<?x?xf64> -> tensor<?x?xf64>
  %t = ag.dimshuffle %c {pattern = array<i64: 1, 0>} : tensor<?x?xf64> -> tensor<?x?xf64>
  %y = ag.dot %t, %v : tensor<?x?xf64>, tensor<?xf64> -> tensor<?xf64>
  func.return %c, %y : tensor<?x?xf64>, tensor<?xf64>
}
func.func @intdiv(%a: tensor<?xi64>, %b: tensor<?xi64>) -> (tensor<?xi64>, tensor<?xi64>) {
  %q = ag.floordiv %a, %b : tensor<?xi64>, tensor<?xi64> -> tensor<?xi64>
  %r = ag.mod %a, %b : tensor<?xi64>, tensor<?xi64> -> tensor<?xi64>
  func.return %q, %r : tensor<?xi64>, tensor<?xi64>
}
"""


@cache
def interpreted_module() -> ModuleOp:
    return lower_loops(INTERPRETED)


def test_interpreter_broadcast_add_and_copies():
    x, row = data(np.float64, (3, 4)), data(np.float64, (1, 4))
    s1, s2, r = interpret(interpreted_module(), "add", x, row)
    assert_matches(s1, x + row)
    assert_matches(s2, x + row)
    assert_matches(r, row)


def test_interpreter_reductions():
    x = data(np.float64, (3, 5))
    s, t, m = interpret(interpreted_module(), "reduce", x)
    assert_matches(s, x.sum(0))
    assert_matches(t.reshape(()), x.sum())
    assert_matches(m, x.max(1))


def test_interpreter_dot_and_dimshuffle():
    a, b, v = data(np.float64, (2, 3)), data(np.float64, (3, 4)), data(np.float64, (2,))
    c, y = interpret(interpreted_module(), "dot", a, b, v)
    assert_matches(c, a @ b)
    assert_matches(y, (a @ b).T @ v)


def test_interpreter_integer_division_by_zero_is_zero():
    a = np.array([7, -7, 7, -7, 5, -9, 0], np.int64)
    b = np.array([2, 2, -2, -2, 0, -1, 3], np.int64)
    q, r = interpret(interpreted_module(), "intdiv", a, b)
    with np.errstate(all="ignore"):
        assert_matches(q.astype(np.int64), np.floor_divide(a, b))
        assert_matches(r.astype(np.int64), np.remainder(a, b))


def test_interpreter_shape_check():
    message = "ag.dot: contracted dimensions of operand shapes (2, 3) and (2, 4) differ"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        interpret(interpreted_module(), "dot", np.zeros((2, 3)), np.zeros((2, 4)), np.zeros(2))
    message = "ag.add: operand shapes (3, 4) and (1, 5) do not match at dimension 1"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        interpret(interpreted_module(), "add", np.zeros((3, 4)), np.zeros((1, 5)))
    message = "ag.reduce_max: cannot reduce shape (3, 0) over axes [1]: an axis is empty"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        interpret(interpreted_module(), "reduce", np.zeros((3, 0)))


def test_checks_attribute_lists_messages_in_check_order():
    module = lower_loops(INTERPRETED)
    assert check_messages(module, "add") == [
        "ag.add: operand shapes (%d, %d) and (1, %d) do not match at dimension 1"
    ]
    assert len(check_messages(module, "dot")) == 2
    # ag.mod tests the condition ag.floordiv tested before it: checked once
    assert check_messages(module, "intdiv") == [
        "ag.floordiv: operand shapes (%d,) and (%d,) do not match at dimension 0",
    ]


def test_node_label_is_in_message():
    text = f"""func.func @f(%a: {ttype([None], np.float32)}, %b: {ttype([None], np.float32)})
        -> {ttype([None], np.float32)} {{
      %r = ag.sub %a, %b {{"ag.node" = "x - 100%"}} : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
      func.return %r : tensor<?xf32>
    }}"""
    (message,) = check_messages(lower_loops(text), "f")
    assert message.startswith("ag.sub [x - 100%%]: operand shapes")
    assert message_arity(message) == 2
    assert message % (1, 2) == (
        "ag.sub [x - 100%]: operand shapes (1,) and (2,) do not match at dimension 0"
    )


# --- native: compile ------------------------------------------------------------------------


@cache
def compile_module(text: str) -> tuple[Any, ModuleOp, dict[str, list[str]]]:
    """The `NativeModule` of an ag module, and the module as parsed (for signatures)."""
    original = parse(text)
    lowered = lower_to_llvm(parse(text))
    return NativeModule(lowered.module), original, lowered.checks


def native(text: str, name: str = "f") -> NativeFunction:
    module, original, checks = compile_module(text)
    f = next(op for op in original.ops if isinstance(op, func.FuncOp) and op.sym_name.data == name)
    ft = f.function_type
    return NativeFunction(
        module, name, list(ft.inputs.data), list(ft.outputs.data), checks.get(name + "__shape", [])
    )


def one_op_function(name: str, op_text: str, operand_types: Sequence[str], result: str) -> str:
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(operand_types))
    uses = ", ".join(f"%a{i}" for i in range(len(operand_types)))
    return (
        f"func.func @{name}({args}) -> {result} {{\n"
        f"  %r = {op_text.format(operands=uses)}\n"
        f"  func.return %r : {result}\n}}\n"
    )


# --- native: binary ops ---------------------------------------------------------------------

BINARY_REFERENCE: dict[type[ag.BinaryElementwiseOp], Callable[..., Any]] = {
    ag.AddOp: np.add,
    ag.SubOp: np.subtract,
    ag.MulOp: np.multiply,
    ag.DivOp: np.true_divide,
    ag.FloorDivOp: np.floor_divide,
    ag.ModOp: np.remainder,
    ag.PowOp: np.power,
    ag.MaximumOp: np.maximum,
    ag.MinimumOp: np.minimum,
    ag.LtOp: np.less,
    ag.LeOp: np.less_equal,
    ag.GtOp: np.greater,
    ag.GeOp: np.greater_equal,
    ag.EqOp: np.equal,
    ag.NeOp: np.not_equal,
}

# (name, lhs static shape, rhs static shape, lhs run-time shape, rhs run-time shape)
LAYOUTS = [
    ("row", [None, None], [1, None], (3, 5), (1, 5)),
    ("scalar", [], [None, None], (), (4, 3)),
    ("ranks", [None, None, None], [None], (2, 3, 4), (4,)),
    ("column", [None, 1], [None, None], (4, 1), (4, 6)),
]


def binary_cases() -> list[Any]:
    cases = []
    for op_class in ag.BINARY_OPS:
        dtypes = CATEGORY_DTYPES[op_class.CATEGORY]
        if op_class in (ag.AddOp, ag.FloorDivOp, ag.ModOp, ag.PowOp, ag.MaximumOp):
            dtypes = dtypes + [np.int8, np.int16]
        for dtype in dtypes:
            param_id = f"{op_class.name}-{np.dtype(dtype).name}"
            cases.append(pytest.param(op_class, dtype, id=param_id))
    return cases


def binary_module(op_class: type[ag.BinaryElementwiseOp], dtype: Any) -> str:
    text = ""
    for name, lhs, rhs, _, _ in LAYOUTS:
        lt, rt = ttype(lhs, dtype), ttype(rhs, dtype)
        static = ag.broadcast_shapes(
            [-1 if d is None else d for d in lhs], [-1 if d is None else d for d in rhs]
        )
        assert static is not None
        result_dtype = np.bool_ if issubclass(op_class, ag.ComparisonOp) else dtype
        res = ttype([None if d == -1 else d for d in static], result_dtype)
        op_text = f"{op_class.name} {{operands}} : {lt}, {rt} -> {res}"
        text += one_op_function(name, op_text, [lt, rt], res)
    return text


def binary_operands(op_class: type, dtype: Any, lshape: tuple, rshape: tuple) -> tuple:
    """Operands exercising the op's edge cases: zero divisors, NaNs, equal values."""
    a, b = data(dtype, lshape), data(dtype, rshape)
    kind = np.dtype(dtype).kind
    if op_class is ag.PowOp:
        a = np.abs(a) + 0.5 if kind == "f" else data(dtype, lshape, -4, 5)
        b = b / 3 if kind == "f" else data(dtype, rshape, 0, 5)
    elif kind == "f" and b.size > 2:
        b.flat[0], b.flat[1] = np.nan, 0.0  # NaN propagation; x // 0, x % 0
    if kind in "fi" and a.size > 1 and b.size > 1 and op_class is not ag.PowOp:
        a.flat[-1] = b.flat[-1]  # equality (and x % x, x // x)
    return a, b


@needs_cpu
@pytest.mark.parametrize(("op_class", "dtype"), binary_cases())
def test_binary(op_class: type[ag.BinaryElementwiseOp], dtype: Any):
    text = binary_module(op_class, dtype)
    for name, _, _, lshape, rshape in LAYOUTS:
        a, b = binary_operands(op_class, dtype, lshape, rshape)
        (out,) = native(text, name)(a, b)
        with np.errstate(all="ignore"):
            expected = BINARY_REFERENCE[op_class](a, b)
        assert_matches(out, np.asarray(expected).astype(out.dtype))
        assert out.dtype == (np.bool_ if issubclass(op_class, ag.ComparisonOp) else dtype)


@needs_cpu
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_binary_strided_inputs(dtype: Any):
    text = binary_module(ag.SubOp, dtype)
    a = data(dtype, (10, 3)).T[:, ::2]  # 3x5, non-contiguous both ways
    b = data(dtype, (1, 10))[:, ::2]
    (out,) = native(text, "row")(a, b)
    assert_matches(out, a - b)
    big = data(dtype, (4, 6, 8))[::2, ::-2, 1::3]  # 2x3x3
    v = data(dtype, (6,))[::-2]  # 3
    (out,) = native(text, "ranks")(big, v)
    assert_matches(out, big - v)


@needs_cpu
def test_integer_edge_cases():
    """The values NumPy special-cases: zero divisors, MIN // -1, signs."""
    for op_class, reference in ((ag.FloorDivOp, np.floor_divide), (ag.ModOp, np.remainder)):
        for dtype in (np.int8, np.int32, np.int64):
            info = np.iinfo(dtype)
            a = np.array([info.min, info.min, info.max, 7, -7, 7, -7, 0, 5], dtype)
            b = np.array([-1, 1, -1, 2, 2, -2, -2, 0, 0], dtype)
            (out,) = native(binary_module(op_class, dtype), "row")(a[None, :], b[None, :])
            with np.errstate(all="ignore"):
                assert_matches(out, reference(a, b)[None, :])


@needs_cpu
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
def test_integer_pow_negative_exponent(dtype: Any):
    a = np.array([2, -2, 1, -1, -1, 0, 3], dtype)
    b = np.array([-1, -3, -5, -2, -3, -1, 0], dtype)
    (out,) = native(binary_module(ag.PowOp, dtype), "row")(a[None, :], b[None, :])
    # The real power truncated toward zero, as the reference interpreter (NumPy raises).
    assert_matches(out, np.array([[0, 0, 1, 1, -1, 0, 1]], dtype))


@needs_cpu
def test_float_floordiv_and_mod_follow_numpy_divmod():
    a = np.array([1.0, -1.0, 1.0, -7.5, 7.5, 0.0, -0.0, np.inf, 3.0, 1.0], np.float64)
    b = np.array([0.1, np.inf, -np.inf, 2.0, -2.0, 3.0, -3.0, 2.0, 0.0, np.nan])
    for op_class, reference in ((ag.FloorDivOp, np.floor_divide), (ag.ModOp, np.remainder)):
        (out,) = native(binary_module(op_class, np.float64), "row")(a[None, :], b[None, :])
        with np.errstate(all="ignore"):
            expected = reference(a, b)[None, :]
        assert_matches(out, expected)
        np.testing.assert_array_equal(np.signbit(out), np.signbit(expected))


# --- native: unary ops, select, cast ----------------------------------------------------------

UNARY_REFERENCE: dict[type[ag.UnaryElementwiseOp], Callable[..., Any]] = {
    ag.NegOp: np.negative,
    ag.AbsOp: np.abs,
    ag.ExpOp: np.exp,
    ag.LogOp: np.log,
    ag.TanhOp: np.tanh,
    ag.SqrtOp: np.sqrt,
}


def _in_float64(f: Callable[..., Any]) -> Callable[..., Any]:
    return lambda x: f(x.astype(np.float64)).astype(x.dtype)


# op library A (references computed in float64, the native code in the operand's type)
UNARY_REFERENCE.update(
    {
        ag.Log1pOp: np.log1p,
        ag.Expm1Op: np.expm1,
        ag.FloorOp: np.floor,
        ag.CeilOp: np.ceil,
        ag.RoundOp: lambda x: np.where(
            np.abs(x - np.trunc(x)) == 0.5, np.trunc(x) + np.sign(x), np.round(x)
        ).astype(x.dtype),
        ag.RoundEvenOp: np.round,
        ag.SigmoidOp: _in_float64(lambda x: 1 / (1 + np.exp(-x))),
        ag.SoftplusOp: _in_float64(lambda x: np.log(1 + np.exp(x))),
    }
)
# the table-driven ops: the entry's NumPy reference
UNARY_REFERENCE.update({ag.OPS[e.name]: e.numpy for e in ag.TABLE if e.arity == 1})
BINARY_REFERENCE.update({ag.OPS[e.name]: e.numpy for e in ag.TABLE if e.arity == 2})


def unary_module(op_class: type[ag.UnaryElementwiseOp], dtype: Any) -> str:
    text = ""
    for name, shape in (("matrix", [None, None]), ("scalar", []), ("fixed", [2, 1, None])):
        t = ttype(shape, dtype)
        if issubclass(op_class, ag.UnaryPredicateOp):  # isnan, isinf: bool results
            r = ttype(shape, np.bool_)
            text += one_op_function(name, f"{op_class.name} {{operands}} : {t} -> {r}", [t], r)
            continue
        text += one_op_function(name, f"{op_class.name} {{operands}} : {t}", [t], t)
    return text


@needs_cpu
@pytest.mark.parametrize(
    ("op_class", "dtype"),
    [
        pytest.param(c, d, id=f"{c.name}-{np.dtype(d).name}")
        for c in ag.UNARY_OPS
        for d in CATEGORY_DTYPES[c.CATEGORY] + ([np.int8] if c.CATEGORY == "numeric" else [])
    ],
)
def test_unary(op_class: type[ag.UnaryElementwiseOp], dtype: Any):
    text = unary_module(op_class, dtype)
    shapes = {
        "matrix": data(dtype, (10, 6)).T[::2],
        "scalar": data(dtype, ()),
        "fixed": data(dtype, (2, 1, 7)),
    }
    for name, x in shapes.items():
        if np.dtype(dtype).kind == "i" and x.size:
            x.flat[0] = np.iinfo(dtype).min  # wraps in both
        (out,) = native(text, name)(x)
        with np.errstate(all="ignore"):
            assert_matches(out, UNARY_REFERENCE[op_class](x))


@needs_cpu
@pytest.mark.parametrize("dtype", ANY, ids=lambda d: np.dtype(d).name)
def test_select(dtype: Any):
    c, a, b = ttype([None, None], np.bool_), ttype([1, None], dtype), ttype([], dtype)
    res = ttype([None, None], dtype)
    text = one_op_function("f", f"ag.select {{operands}} : {c}, {a}, {b} -> {res}", [c, a, b], res)
    cond, x, y = data(np.bool_, (4, 5)), data(dtype, (1, 5)), data(dtype, ())
    (out,) = native(text)(cond, x, y)
    assert_matches(out, np.where(cond, x, y))
    (out,) = native(text)(cond.T.copy().T, x, y)
    with pytest.raises(ValueError, match=r"ag\.select: operand shapes \(4, 5\), \(1, 4\) and \(\)"):
        native(text)(cond, data(dtype, (1, 4)), y)


CAST_DTYPES = ANY + [np.int8, np.int16]


@needs_cpu
@pytest.mark.parametrize(
    ("source", "target"),
    [
        pytest.param(s, t, id=f"{np.dtype(s).name}-{np.dtype(t).name}")
        for s in CAST_DTYPES
        for t in CAST_DTYPES
    ],
)
def test_cast(source: Any, target: Any):
    a, r = ttype([None, None], source), ttype([None, None], target)
    text = one_op_function("f", f"ag.cast {{operands}} : {a} to {r}", [a], r)
    x = data(source, (4, 6), -100, 100)
    if np.dtype(source).kind == "f":
        x = (x * 20).clip(-100, 100)
        x.flat[:4] = [0.0, -0.0, -2.7, 2.7]  # truncation toward zero
        if np.dtype(target).kind == "u":  # a negative float has no unsigned value
            x = np.abs(x).clip(0, np.iinfo(target).max)
        if target == np.bool_:
            x.flat[4] = np.nan  # NaN is true
    (out,) = native(text)(x[:, ::-1])
    with np.errstate(all="ignore"):
        assert_matches(out, x[:, ::-1].astype(target))


# --- native: dimshuffle, reductions, dot, constants --------------------------------------------

DIMSHUFFLES = [
    ([None, None], [1, 0], (3, 4)),
    ([None, None], [1, -1, 0], (3, 4)),
    ([1, None], [1], (1, 5)),
    ([None, 1, None], [-1, 2, 0], (2, 1, 3)),
    ([None], [-1, 0, -1], (4,)),
    ([], [-1, -1], ()),
]


@needs_cpu
@pytest.mark.parametrize("dtype", ANY, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize(("shape", "pattern", "runtime_shape"), DIMSHUFFLES)
def test_dimshuffle(dtype: Any, shape: list, pattern: list[int], runtime_shape: tuple):
    static = tuple(-1 if d is None else d for d in shape)
    result = ag.dimshuffle_shape(static, pattern)
    a, r = ttype(shape, dtype), ttype([None if d == -1 else d for d in result], dtype)
    pattern_text = ", ".join(map(str, pattern))
    attribute = f"{{{{pattern = array<i64: {pattern_text}>}}}}"
    op_text = f"ag.dimshuffle {{operands}} {attribute} : {a} -> {r}"
    text = one_op_function("f", op_text, [a], r)
    x = data(dtype, runtime_shape)
    (out,) = native(text)(x)
    assert_matches(out, dimshuffle_reference(x, pattern))


def dimshuffle_reference(x: np.ndarray, pattern: Sequence[int]) -> np.ndarray:
    kept = [p for p in pattern if p != ag.NEWAXIS]
    dropped = tuple(axis for axis in range(x.ndim) if axis not in kept)
    y = np.transpose(x.squeeze(dropped), [sorted(kept).index(p) for p in kept])
    return y.reshape([1 if p == ag.NEWAXIS else x.shape[p] for p in pattern])


REDUCE_REFERENCE = {
    ag.ReduceSumOp: np.sum,
    ag.ReduceProdOp: np.prod,
    ag.ReduceMaxOp: np.max,
    ag.ReduceMinOp: np.min,
}
REDUCE_AXES = [(0,), (1,), (0, 1), (), (0, 2)]


def reduce_module(op_class: type[ag.ReduceOp], dtype: Any) -> str:
    text = ""
    for i, axes in enumerate(REDUCE_AXES):
        shape = [None, None, None] if 2 in axes else [None, None]
        kept = [d for axis, d in enumerate(shape) if axis not in axes]
        a, r = ttype(shape, dtype), ttype(kept, dtype)
        axes_text = ": " + ", ".join(map(str, axes)) if axes else ""
        attribute = f"{{{{axes = array<i64{axes_text}>}}}}"
        op_text = f"{op_class.name} {{operands}} {attribute} : {a} -> {r}"
        text += one_op_function(f"f{i}", op_text, [a], r)
    return text


@needs_cpu
@pytest.mark.parametrize(
    ("op_class", "dtype"),
    [
        pytest.param(c, d, id=f"{c.name}-{np.dtype(d).name}")
        for c in ag.REDUCE_OPS
        for d in CATEGORY_DTYPES[c.CATEGORY]
    ],
)
def test_reduce(op_class: type[ag.ReduceOp], dtype: Any):
    text = reduce_module(op_class, dtype)
    for i, axes in enumerate(REDUCE_AXES):
        x = data(dtype, (3, 4, 5) if 2 in axes else (6, 4), -3, 4)
        if np.dtype(dtype).kind == "f" and op_class in (ag.ReduceMaxOp, ag.ReduceMinOp):
            x.flat[5] = np.nan
        x = x[::-1]  # a negative stride
        (out,) = native(text, f"f{i}")(x)
        reference = REDUCE_REFERENCE[op_class]
        if op_class in (ag.ReduceSumOp, ag.ReduceProdOp):
            expected = reference(x, axis=axes, dtype=dtype)  # NumPy widens ints by default
        else:
            expected = reference(x, axis=axes)
        assert_matches(out, np.asarray(expected, dtype))


@needs_cpu
@pytest.mark.parametrize("op_class", ag.REDUCE_OPS, ids=lambda c: c.name)
def test_reduce_empty_axis(op_class: type[ag.ReduceOp]):
    fn = native(reduce_module(op_class, np.float64), "f0")
    x = np.zeros((0, 3))
    if op_class in (ag.ReduceSumOp, ag.ReduceProdOp):
        assert_matches(fn(x)[0], REDUCE_REFERENCE[op_class](x, axis=0))
        return
    message = f"{op_class.name}: cannot reduce shape (0, 3) over axes [0]: an axis is empty"
    with pytest.raises(ValueError, match=re.escape(message)):
        fn(x)
    assert_matches(native(reduce_module(op_class, np.float64), "f1")(x)[0], np.zeros(0))


DOT_SHAPES = [
    ([None], [None], (5,), (5,)),
    ([None, None], [None], (3, 5), (5,)),
    ([None], [None, None], (5,), (5, 4)),
    ([None, None], [None, None], (3, 5), (5, 4)),
    ([2, None], [None, 3], (2, 6), (6, 3)),
]


def dot_module(dtype: Any) -> str:
    text = ""
    for i, (lhs, rhs, _, _) in enumerate(DOT_SHAPES):
        lt, rt = ttype(lhs, dtype), ttype(rhs, dtype)
        res = ttype([*lhs[:-1], *rhs[1:]], dtype)
        text += one_op_function(
            f"f{i}", f"ag.dot {{operands}} : {lt}, {rt} -> {res}", [lt, rt], res
        )
    return text


@needs_cpu
@pytest.mark.parametrize("dtype", NUMERIC, ids=lambda d: np.dtype(d).name)
def test_dot(dtype: Any):
    text = dot_module(dtype)
    for i, (_, _, lshape, rshape) in enumerate(DOT_SHAPES):
        a, b = data(dtype, lshape), data(dtype, rshape)
        (out,) = native(text, f"f{i}")(a, b)
        assert_matches(out, np.asarray(np.dot(a, b), dtype))
    a, b = data(dtype, (5, 6)).T, data(dtype, (10, 4))[::2]  # strided operands
    (out,) = native(text, "f3")(a, b)
    assert_matches(out, np.dot(a, b))
    with pytest.raises(ValueError, match=r"ag\.dot: .*operand shapes \(3, 5\) and \(4,\) differ"):
        native(text, "f1")(data(dtype, (3, 5)), data(dtype, (4,)))


@needs_cpu
def test_constants_and_returned_values():
    text = """
    func.func @f(%x: tensor<?x2xi32>) -> (tensor<2x2xi32>, tensor<?x2xi32>, tensor<?x2xi32>,
                                         tensor<3xf32>, tensor<?x2xi32>, tensor<i1>) {
      %c = ag.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
      %s = ag.constant dense<2.5> : tensor<3xf32>
      %b = ag.constant dense<true> : tensor<i1>
      %k = ag.constant dense<[10, 20]> : tensor<2xi32>
      %y = ag.mul %x, %k : tensor<?x2xi32>, tensor<2xi32> -> tensor<?x2xi32>
      func.return %c, %y, %y, %s, %x, %b : tensor<2x2xi32>, tensor<?x2xi32>, tensor<?x2xi32>,
                                           tensor<3xf32>, tensor<?x2xi32>, tensor<i1>
    }
    """
    x = data(np.int32, (3, 2))
    c, y1, y2, s, x_out, b = native(text)(x[::-1])
    assert_matches(c, np.array([[1, 2], [3, 4]], np.int32))
    assert_matches(y1, x[::-1] * np.array([10, 20], np.int32))
    assert_matches(y2, y1)
    assert_matches(s, np.full(3, 2.5, np.float32))
    assert_matches(x_out, x[::-1])
    assert_matches(b, np.array(True))
    assert not np.shares_memory(y1, y2)


@needs_cpu
def test_chain_with_intermediates():
    text = """
    func.func @f(%x: tensor<?x?xf64>, %w: tensor<?x?xf64>, %bias: tensor<?xf64>) -> tensor<?xf64> {
      %h = ag.dot %x, %w : tensor<?x?xf64>, tensor<?x?xf64> -> tensor<?x?xf64>
      %z = ag.add %h, %bias : tensor<?x?xf64>, tensor<?xf64> -> tensor<?x?xf64>
      %t = ag.tanh %z : tensor<?x?xf64>
      %n = ag.neg %t : tensor<?x?xf64>
      %e = ag.exp %n : tensor<?x?xf64>
      %s = ag.reduce_sum %e {axes = array<i64: 1>} : tensor<?x?xf64> -> tensor<?xf64>
      func.return %s : tensor<?xf64>
    }
    """
    x, w, bias = data(np.float64, (7, 3)), data(np.float64, (3, 4)), data(np.float64, (4,))
    (out,) = native(text)(x, w, bias)
    assert_matches(out, np.exp(-np.tanh(x @ w + bias)).sum(1))
    with pytest.raises(ValueError, match=r"ag\.add: .* \(7, 4\) and \(5,\) do not match at dim"):
        native(text)(x, w, data(np.float64, (5,)))


@needs_cpu
def test_three_way_broadcast_check():
    c, a, b = ttype([None, 1], np.bool_), ttype([None], np.float32), ttype([None, None], np.float32)
    res = ttype([None, None], np.float32)
    text = one_op_function("f", f"ag.select {{operands}} : {c}, {a}, {b} -> {res}", [c, a, b], res)
    fn = native(text)
    cond, x, y = data(np.bool_, (3, 1)), data(np.float32, (4,)), data(np.float32, (3, 4))
    assert_matches(fn(cond, x, y)[0], np.where(cond, x, y))
    with pytest.raises(
        ValueError, match=r"ag\.select: .*\(3, 1\), \(4,\) and \(3, 5\) do not match at dimension 1"
    ):
        fn(cond, x, data(np.float32, (3, 5)))
    with pytest.raises(
        ValueError, match=r"ag\.select: .*\(3, 1\), \(4,\) and \(2, 4\) do not match at dimension 0"
    ):
        fn(cond, x, data(np.float32, (2, 4)))
