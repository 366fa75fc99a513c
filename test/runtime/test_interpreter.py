"""The reference interpreter against NumPy (and Python integers), op by op."""

from __future__ import annotations

import functools
import math
import operator
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import hypothesis.extra.numpy as hnp
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings
from xdsl.context import Context
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin, IntegerType, ModuleOp, TensorType
from xdsl.dialects.func import Func
from xdsl.dialects.scf import Scf
from xdsl.ir import Attribute
from xdsl.parser import Parser

from arignote.dialects import ag
from arignote.runtime.dtypes import element_type, numpy_dtype
from arignote.runtime.interpreter import InterpretedFunction, run_function

FAST = settings(max_examples=25, deadline=None)
DYN = ag.DYNAMIC

DTYPES = [np.dtype(d) for d in (np.float32, np.float64, np.int32, np.int64, np.bool_)]


def dtype_id(d: np.dtype) -> str:
    return str(element_type(d))


CTX = Context()
for _dialect in (Builtin, Func, Arith, Scf, ag.Ag):
    CTX.load_dialect(_dialect)


@functools.lru_cache(maxsize=512)
def parse(src: str) -> ModuleOp:
    """The verified module of `src` (cached: examples often repeat a signature)."""
    module = Parser(CTX, src).parse_module()
    module.verify()
    return module


def ttype(shape: Sequence[int], dtype: np.dtype) -> TensorType:
    return TensorType(element_type(dtype), shape)


def single_op_module(line: str, operands: Sequence[Attribute], result: Attribute) -> ModuleOp:
    """A module whose @f applies one op (`line`, with operands %a0, %a1, ...) to its args."""
    params = ", ".join(f"%a{i}: {t}" for i, t in enumerate(operands))
    return parse(
        f"func.func @f({params}) -> {result} {{\n  %r = {line}\n  func.return %r : {result}\n}}\n"
    )


def run_op(
    line: str, args: Sequence[np.ndarray], operands: Sequence[Attribute], result: Attribute
) -> np.ndarray:
    (out,) = run_function(single_op_module(line, operands, result), "f", args)
    return out


def assert_same(got: np.ndarray, expected: Any, dtype: np.dtype) -> None:
    assert isinstance(got, np.ndarray)
    assert got.dtype == dtype
    expected = np.asarray(expected)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


def allowed(category: str, dtype: np.dtype) -> bool:
    t = element_type(dtype)
    if category == "float":
        return ag.is_float(t)
    if category == "inexact":
        return ag.is_float(t) or ag.is_complex(t)
    if category == "numeric":
        return ag.is_float(t) or ag.is_int(t)
    if category == "arith":
        return ag.is_float(t) or ag.is_int(t) or ag.is_complex(t)
    if category == "real":
        return not ag.is_complex(t)
    if category == "integer":
        return ag.is_int(t) or ag.is_bool(t)
    return True


def op_dtype_cases(ops: Sequence[type[Any]]) -> list[Any]:
    return [
        pytest.param(op, d, id=f"{op.name}-{dtype_id(d)}")
        for op in ops
        for d in DTYPES
        if allowed(op.CATEGORY, d)
    ]


# --- strategies ------------------------------------------------------------------------


def elements(dtype: np.dtype) -> st.SearchStrategy[Any]:
    if dtype == np.bool_:
        return st.booleans()
    if dtype.kind == "i":
        return st.integers(-20, 20)
    width = dtype.itemsize * 8
    special = st.sampled_from([0.0, -0.0, math.nan, math.inf, -math.inf])
    return st.floats(-50, 50, width=width) | special


def arrays(dtype: np.dtype, shape: Sequence[int]) -> st.SearchStrategy[np.ndarray]:
    return hnp.arrays(dtype, tuple(shape), elements=elements(dtype))


@st.composite
def static_shape(draw: st.DrawFn, shape: tuple[int, ...], result: tuple[int, ...]):
    """A static shape for run-time `shape`: a 1 that broadcasts must be a static 1."""
    tail = result[len(result) - len(shape) :]
    return tuple(
        1 if n == 1 and r != 1 else draw(st.sampled_from([n, DYN]))
        for n, r in zip(shape, tail, strict=True)
    )


@st.composite
def broadcast_operands(draw: st.DrawFn, dtypes: Sequence[np.dtype]):
    """(values, static types) of operands that broadcast together by ag's rules."""
    shapes, result = draw(
        hnp.mutually_broadcastable_shapes(
            num_shapes=len(dtypes), min_dims=0, max_dims=3, min_side=0, max_side=4
        )
    )
    values = [draw(arrays(d, s)) for d, s in zip(dtypes, shapes, strict=True)]
    types = [ttype(draw(static_shape(s, result)), d) for d, s in zip(dtypes, shapes, strict=True)]
    return values, types


# --- elementwise binary ops ------------------------------------------------------------


def wrap(value: int, dtype: np.dtype) -> int:
    bits = dtype.itemsize * 8
    half = 1 << (bits - 1)
    return (value + half) % (1 << bits) - half


def py_floordiv(x: int, y: int) -> int:
    return 0 if y == 0 else x // y


def py_mod(x: int, y: int) -> int:
    return 0 if y == 0 else x % y


def py_pow(x: int, y: int) -> int:
    if y < 0 and x == 0:
        return 0
    return int(x**y) if y < 0 else x**y


# Integer semantics spelled out with Python integers, independently of NumPy.
PY_INT: dict[type[Any], Callable[[int, int], Any]] = {
    ag.AddOp: operator.add,
    ag.SubOp: operator.sub,
    ag.MulOp: operator.mul,
    ag.FloorDivOp: py_floordiv,
    ag.ModOp: py_mod,
    ag.PowOp: py_pow,
    ag.MaximumOp: max,
    ag.MinimumOp: min,
    ag.LtOp: operator.lt,
    ag.LeOp: operator.le,
    ag.GtOp: operator.gt,
    ag.GeOp: operator.ge,
    ag.EqOp: operator.eq,
    ag.NeOp: operator.ne,
    ag.OPS["and_"]: operator.and_,
    ag.OPS["or_"]: operator.or_,
    ag.OPS["xor"]: operator.xor,
}

NUMPY: dict[type[Any], Callable[..., Any]] = {
    ag.AddOp: np.add,
    ag.SubOp: np.subtract,
    ag.MulOp: np.multiply,
    ag.DivOp: np.true_divide,
    ag.FloorDivOp: np.floor_divide,
    ag.ModOp: np.mod,
    ag.PowOp: np.power,
    ag.MaximumOp: np.maximum,
    ag.MinimumOp: np.minimum,
    ag.LtOp: np.less,
    ag.LeOp: np.less_equal,
    ag.GtOp: np.greater,
    ag.GeOp: np.greater_equal,
    ag.EqOp: np.equal,
    ag.NeOp: np.not_equal,
    ag.NegOp: np.negative,
    ag.AbsOp: np.abs,
    ag.ExpOp: np.exp,
    ag.LogOp: np.log,
    ag.TanhOp: np.tanh,
    ag.SqrtOp: np.sqrt,
}


def _round_half_away(x: np.ndarray) -> np.ndarray:
    whole = np.trunc(x)
    halfway = np.abs(x - whole) == 0.5
    return np.where(halfway, whole + np.sign(x), np.round(x)).astype(x.dtype)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype)


def _softplus(x: np.ndarray) -> np.ndarray:
    return (np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0)).astype(x.dtype)


# op library A
NUMPY.update(
    {
        ag.Log1pOp: np.log1p,
        ag.Expm1Op: np.expm1,
        ag.FloorOp: np.floor,
        ag.CeilOp: np.ceil,
        ag.RoundOp: _round_half_away,
        ag.RoundEvenOp: np.round,
        ag.SigmoidOp: _sigmoid,
        ag.SoftplusOp: _softplus,
    }
)
# the table-driven ops: their reference is the entry's NumPy function
NUMPY.update({ag.OPS[entry.name]: entry.numpy for entry in ag.TABLE})


def expected_binary(op: type[Any], x: np.ndarray, y: np.ndarray, dtype: np.dtype) -> Any:
    if x.dtype.kind != "i":
        with np.errstate(all="ignore"):
            return NUMPY[op](x, y)
    bx, by = np.broadcast_arrays(x, y)
    fn = PY_INT[op]
    values = [fn(int(a), int(b)) for a, b in zip(bx.flat, by.flat, strict=True)]
    if dtype.kind == "i":
        values = [wrap(v, dtype) for v in values]
    return np.array(values, dtype=dtype).reshape(bx.shape)


@pytest.mark.parametrize("op, dtype", op_dtype_cases(ag.BINARY_OPS))
def test_binary(op: type[ag.BinaryElementwiseOp], dtype: np.dtype) -> None:
    @FAST
    @given(broadcast_operands([dtype, dtype]))
    def check(case: tuple[list[np.ndarray], list[TensorType]]) -> None:
        (x, y), (xt, yt) = case
        rt = op.infer_type(xt, yt)
        got = run_op(f"{op.name} %a0, %a1 : {xt}, {yt} -> {rt}", [x, y], [xt, yt], rt)
        out_dtype = numpy_dtype(rt.element_type)
        assert_same(got, expected_binary(op, x, y, out_dtype), out_dtype)

    check()


BROADCAST_CASES = [
    ((3,), (2, 3), (3,), (DYN, 3)),  # row + matrix
    ((), (2, 3), (), (DYN, DYN)),  # scalar + matrix
    ((1, 3), (4, 3), (1, DYN), (DYN, DYN)),  # static 1 stretches a dynamic length
    ((2, 1, 3), (4, 1), (DYN, 1, DYN), (DYN, 1)),  # differing ranks, both stretch
]


@pytest.mark.parametrize("xs, ys, xst, yst", BROADCAST_CASES)
def test_add_broadcasts(
    xs: tuple[int, ...], ys: tuple[int, ...], xst: tuple[int, ...], yst: tuple[int, ...]
) -> None:
    x = np.arange(math.prod(xs), dtype=np.float32).reshape(xs)
    y = np.arange(math.prod(ys), dtype=np.float32).reshape(ys) * 10
    xt, yt = ttype(xst, x.dtype), ttype(yst, y.dtype)
    rt = ag.AddOp.infer_type(xt, yt)
    got = run_op(f"ag.add %a0, %a1 : {xt}, {yt} -> {rt}", [x, y], [xt, yt], rt)
    assert_same(got, x + y, np.dtype(np.float32))


def test_integer_division_by_zero_is_zero_without_warnings() -> None:
    t = ttype((DYN,), np.dtype(np.int32))
    x = np.array([7, -7, 0, 5, -(2**31)], dtype=np.int32)
    y = np.array([0, 0, 0, -2, -1], dtype=np.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        q = run_op(f"ag.floordiv %a0, %a1 : {t}, {t} -> {t}", [x, y], [t, t], t)
        r = run_op(f"ag.mod %a0, %a1 : {t}, {t} -> {t}", [x, y], [t, t], t)
    assert_same(q, [0, 0, 0, -3, -(2**31)], np.dtype(np.int32))
    assert_same(r, [0, 0, 0, -1, 0], np.dtype(np.int32))


def test_integer_pow_negative_exponent() -> None:
    t = ttype((DYN,), np.dtype(np.int64))
    x = np.array([2, 1, -1, -1, 0, 3, -2], dtype=np.int64)
    y = np.array([-1, -5, -3, -2, -1, 0, 3], dtype=np.int64)
    got = run_op(f"ag.pow %a0, %a1 : {t}, {t} -> {t}", [x, y], [t, t], t)
    assert_same(got, [0, 1, -1, 1, 0, 1, -8], np.dtype(np.int64))


@pytest.mark.parametrize("op", [ag.MaximumOp, ag.MinimumOp])
def test_maximum_minimum_propagate_nan(op: type[ag.BinaryElementwiseOp]) -> None:
    t = ttype((3,), np.dtype(np.float32))
    x = np.array([np.nan, 1.0, 2.0], dtype=np.float32)
    y = np.array([0.0, np.nan, 3.0], dtype=np.float32)
    got = run_op(f"{op.name} %a0, %a1 : {t}, {t} -> {t}", [x, y], [t, t], t)
    assert np.isnan(got[:2]).all()
    assert got[2] == (3.0 if op is ag.MaximumOp else 2.0)


# --- elementwise unary ops, select, cast -----------------------------------------------


@pytest.mark.parametrize("op, dtype", op_dtype_cases(ag.UNARY_OPS))
def test_unary(op: type[ag.UnaryElementwiseOp], dtype: np.dtype) -> None:
    @FAST
    @given(broadcast_operands([dtype]))
    def check(case: tuple[list[np.ndarray], list[TensorType]]) -> None:
        (x,), (t,) = case
        if issubclass(op, ag.UnaryPredicateOp):  # isnan, isinf: bool results
            rt = TensorType(IntegerType(1), t.get_shape())
            got = run_op(f"{op.name} %a0 : {t} -> {rt}", [x], [t], rt)
            assert_same(got, NUMPY[op](x), np.dtype(np.bool_))
            return
        got = run_op(f"{op.name} %a0 : {t}", [x], [t], t)
        with np.errstate(all="ignore"):
            assert_same(got, NUMPY[op](x), dtype)

    check()


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@FAST
@given(data=st.data())
def test_select(dtype: np.dtype, data: st.DataObject) -> None:
    (c, a, b), (ct, at, bt) = data.draw(broadcast_operands([np.dtype(bool), dtype, dtype]))
    rt = ag.SelectOp.infer_type(ct, at, bt)
    line = f"ag.select %a0, %a1, %a2 : {ct}, {at}, {bt} -> {rt}"
    assert_same(run_op(line, [c, a, b], [ct, at, bt], rt), np.where(c, a, b), dtype)


def expected_cast(x: np.ndarray, dst: np.dtype) -> np.ndarray:
    if dst == np.bool_:
        return x != 0
    if x.dtype.kind == "f" and dst.kind == "i":
        return np.array([int(v) for v in x.flat], dtype=dst).reshape(x.shape)
    return x.astype(dst)


@pytest.mark.parametrize("dst", DTYPES, ids=dtype_id)
@pytest.mark.parametrize("src", DTYPES, ids=dtype_id)
@FAST
@given(data=st.data())
def test_cast(src: np.dtype, dst: np.dtype, data: st.DataObject) -> None:
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=4))
    finite = st.floats(-100, 100, width=src.itemsize * 8)
    x = data.draw(hnp.arrays(src, shape, elements=finite if src.kind == "f" else elements(src)))
    st_, dt = ttype(shape, src), ttype(shape, dst)
    got = run_op(f"ag.cast %a0 : {st_} to {dt}", [x], [st_], dt)
    assert_same(got, expected_cast(x, dst), dst)


def test_cast_special_floats() -> None:
    x = np.array([-2.7, 2.7, -0.5, np.nan, 0.0, -0.0], dtype=np.float64)
    t = ttype((6,), x.dtype)
    to_int, to_bool = ttype((6,), np.dtype(np.int32)), ttype((6,), np.dtype(bool))
    truncated = np.array([-2.7, -2.2, 2.7, 2.2, -0.5, 0.5])
    got = run_op(f"ag.cast %a0 : {t} to {to_int}", [truncated], [t], to_int)
    assert_same(got, [-2, -2, 2, 2, 0, 0], np.dtype(np.int32))
    got = run_op(f"ag.cast %a0 : {t} to {to_bool}", [x], [t], to_bool)
    assert_same(got, [True, True, True, True, False, False], np.dtype(bool))


# --- layout, reductions, dot -----------------------------------------------------------


@st.composite
def dimshuffle_case(draw: st.DrawFn):
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=3))
    droppable = [a for a, n in enumerate(shape) if n == 1]
    dropped = draw(st.lists(st.sampled_from(droppable), unique=True)) if droppable else []
    kept = draw(st.permutations([a for a in range(len(shape)) if a not in dropped]))
    pattern = list(kept)
    for _ in range(draw(st.integers(0, 2))):
        pattern.insert(draw(st.integers(0, len(pattern))), ag.NEWAXIS)
    static = tuple(
        n if n == 1 and a in dropped else draw(st.sampled_from([n, DYN]))
        for a, n in enumerate(shape)
    )
    return shape, static, pattern, sorted(dropped), kept


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
@FAST
@given(case=dimshuffle_case(), data=st.data())
def test_dimshuffle(dtype: np.dtype, case: Any, data: st.DataObject) -> None:
    shape, static, pattern, dropped, kept = case
    x = data.draw(arrays(dtype, shape))
    # Reference: squeeze, then permute, then insert the new axes.
    squeezed = np.squeeze(x, axis=tuple(dropped))
    remaining = [a for a in range(len(shape)) if a not in dropped]
    expected = np.transpose(squeezed, [remaining.index(a) for a in kept])
    new_axes = tuple(i for i, p in enumerate(pattern) if p == ag.NEWAXIS)
    expected = np.expand_dims(expected, new_axes)
    it = ttype(static, dtype)
    rt = ttype(ag.dimshuffle_shape(static, pattern), dtype)
    attr = ", ".join(str(p) for p in pattern)
    line = f"ag.dimshuffle %a0 {{pattern = array<i64{': ' if attr else ''}{attr}>}} : {it} -> {rt}"
    assert_same(run_op(line, [x], [it], rt), expected, dtype)


REDUCE_REFERENCE: dict[type[Any], Callable[..., Any]] = {
    ag.ReduceSumOp: np.sum,
    ag.ReduceProdOp: np.prod,
    ag.ReduceMaxOp: np.max,
    ag.ReduceMinOp: np.min,
}


@pytest.mark.parametrize("op, dtype", op_dtype_cases(ag.REDUCE_OPS))
def test_reduce(op: type[ag.ReduceOp], dtype: np.dtype) -> None:
    empty_ok = op in (ag.ReduceSumOp, ag.ReduceProdOp)

    @FAST
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        shape = data.draw(
            hnp.array_shapes(min_dims=0, max_dims=3, min_side=0 if empty_ok else 1, max_side=4)
        )
        axes = sorted(
            data.draw(st.sets(st.integers(0, max(len(shape) - 1, 0))) if shape else st.just(set()))
        )
        x = data.draw(arrays(dtype, shape))
        static = tuple(data.draw(st.sampled_from([n, DYN])) for n in shape)
        it = ttype(static, dtype)
        rt = ttype(ag.reduce_shape(static, axes), dtype)
        attr = ", ".join(str(a) for a in axes)
        line = f"{op.name} %a0 {{axes = array<i64{': ' if attr else ''}{attr}>}} : {it} -> {rt}"
        got = run_op(line, [x], [it], rt)
        kwargs = {} if op in (ag.ReduceMaxOp, ag.ReduceMinOp) else {"dtype": dtype}
        with np.errstate(all="ignore"):
            expected = REDUCE_REFERENCE[op](x, axis=tuple(axes), **kwargs)
        assert_same(got, expected, dtype)

    check()


def test_reduce_sum_keeps_float32() -> None:
    it, rt = ttype((DYN, DYN), np.dtype(np.float32)), ttype((), np.dtype(np.float32))
    x = np.full((3, 4), 0.1, dtype=np.float32)
    got = run_op(f"ag.reduce_sum %a0 {{axes = array<i64: 0, 1>}} : {it} -> {rt}", [x], [it], rt)
    assert type(got) is np.ndarray and got.shape == () and got.dtype == np.float32
    assert got == np.sum(x, dtype=np.float32)


DOT_SHAPES = [
    ((4,), (4,)),
    ((3, 4), (4,)),
    ((4,), (4, 2)),
    ((3, 4), (4, 2)),
    ((0, 4), (4, 2)),
    ((3, 0), (0, 2)),
]


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d != np.bool_], ids=dtype_id)
@FAST
@given(shapes=st.sampled_from(DOT_SHAPES), data=st.data())
def test_dot(
    shapes: tuple[tuple[int, ...], tuple[int, ...]], dtype: np.dtype, data: st.DataObject
) -> None:
    xs, ys = shapes
    finite = st.integers(-20, 20) if dtype.kind == "i" else st.floats(-8, 8, width=32)
    x = data.draw(hnp.arrays(dtype, xs, elements=finite))
    y = data.draw(hnp.arrays(dtype, ys, elements=finite))
    xt = ttype(tuple(data.draw(st.sampled_from([n, DYN])) for n in xs), dtype)
    yt = ttype(tuple(data.draw(st.sampled_from([n, DYN])) for n in ys), dtype)
    rt = ttype(ag.dot_shape(xt.get_shape(), yt.get_shape()), dtype)
    got = run_op(f"ag.dot %a0, %a1 : {xt}, {yt} -> {rt}", [x, y], [xt, yt], rt)
    assert_same(got, np.dot(x, y), dtype)


# --- constants -------------------------------------------------------------------------


CONSTANTS = [
    ("dense<[true, false, true]> : tensor<3xi1>", np.array([True, False, True])),
    (
        "dense<[[1.5, -2.0], [3.0, 4.25]]> : tensor<2x2xf32>",
        np.array([[1.5, -2.0], [3.0, 4.25]], dtype=np.float32),
    ),
    ("dense<[1, -2, 3]> : tensor<3xi16>", np.array([1, -2, 3], dtype=np.int16)),
    ("dense<-128> : tensor<2xi8>", np.array([-128, -128], dtype=np.int8)),
    ("dense<[9223372036854775807]> : tensor<1xi64>", np.array([2**63 - 1], dtype=np.int64)),
    ("dense<2.5> : tensor<2x3xf64>", np.full((2, 3), 2.5)),
    ("dense<0.1> : tensor<f32>", np.array(0.1, dtype=np.float32)),
    ("dense<true> : tensor<1x2xi1>", np.ones((1, 2), dtype=bool)),
    ("dense<> : tensor<0xi32>", np.zeros(0, dtype=np.int32)),
]


@pytest.mark.parametrize("text, expected", CONSTANTS)
def test_constant(text: str, expected: np.ndarray) -> None:
    t = text.split(" : ")[1]
    module = parse(
        f"func.func @f() -> {t} {{\n  %c = ag.constant {text}\n  func.return %c : {t}\n}}\n"
    )
    (got,) = run_function(module, "f", [])
    assert_same(got, expected, expected.dtype)


# --- errors ----------------------------------------------------------------------------


def test_dynamic_mismatch_names_op_and_shapes() -> None:
    t = ttype((DYN, 2), np.dtype(np.float32))
    x, y = np.zeros((3, 2), np.float32), np.zeros((2, 2), np.float32)
    with pytest.raises(
        ValueError,
        match=r"^ag\.add: operand shapes \(3, 2\) and \(2, 2\) "
        r"do not match at dimension 0\n",
    ):
        run_op(f"ag.add %a0, %a1 : {t}, {t} -> {t}", [x, y], [t, t], t)


def test_dynamic_dimension_never_broadcasts() -> None:
    t = ttype((DYN,), np.dtype(np.int64))
    x, y = np.zeros(1, np.int64), np.zeros(4, np.int64)
    with pytest.raises(ValueError, match=r"ag\.mul: operand shapes \(1,\) and \(4,\)"):
        run_op(f"ag.mul %a0, %a1 : {t}, {t} -> {t}", [x, y], [t, t], t)


def test_select_mismatch_names_all_shapes() -> None:
    ct, vt = ttype((DYN,), np.dtype(bool)), ttype((DYN,), np.dtype(np.float64))
    args = [np.zeros(2, bool), np.zeros(3), np.zeros(3)]
    line = f"ag.select %a0, %a1, %a2 : {ct}, {vt}, {vt} -> {vt}"
    with pytest.raises(
        ValueError,
        match=r"ag\.select: operand shapes \(2,\), \(3,\) and "
        r"\(3,\) do not match at dimension 0",
    ):
        run_op(line, args, [ct, vt, vt], vt)


@pytest.mark.parametrize("op", [ag.ReduceMaxOp, ag.ReduceMinOp])
def test_empty_max_min_reduction(op: type[ag.ReduceOp]) -> None:
    it, rt = ttype((DYN, 3), np.dtype(np.float32)), ttype((3,), np.dtype(np.float32))
    line = f"{op.name} %a0 {{axes = array<i64: 0>}} : {it} -> {rt}"
    with pytest.raises(ValueError, match=rf"^{op.name}: .*empty"):
        run_op(line, [np.zeros((0, 3), np.float32)], [it], rt)


def test_empty_max_over_other_axis_is_fine() -> None:
    it, rt = ttype((DYN, 3), np.dtype(np.int32)), ttype((DYN,), np.dtype(np.int32))
    line = f"ag.reduce_max %a0 {{axes = array<i64: 1>}} : {it} -> {rt}"
    assert_same(
        run_op(line, [np.zeros((0, 3), np.int32)], [it], rt),
        np.zeros(0, np.int32),
        np.dtype(np.int32),
    )


def test_dot_contracted_mismatch() -> None:
    xt, yt = ttype((DYN, DYN), np.dtype(np.float64)), ttype((DYN,), np.dtype(np.float64))
    rt = ttype((DYN,), np.dtype(np.float64))
    with pytest.raises(
        ValueError,
        match=r"^ag\.dot: contracted dimensions .*\(2, 3\) "
        r"and \(4,\)",
    ):
        run_op(
            f"ag.dot %a0, %a1 : {xt}, {yt} -> {rt}", [np.zeros((2, 3)), np.zeros(4)], [xt, yt], rt
        )


def test_arguments_are_checked_against_the_signature() -> None:
    t = ttype((DYN, 2), np.dtype(np.float32))
    fn = InterpretedFunction(single_op_module(f"ag.neg %a0 : {t}", [t], t), "f")
    with pytest.raises(ValueError, match="dimension 1 must be 2"):
        fn(np.zeros((3, 3), np.float32))
    with pytest.raises(ValueError, match="rank 2"):
        fn(np.zeros(3, np.float32))
    with pytest.raises(TypeError, match="dtype float32, got float64"):
        fn(np.zeros((3, 2)))
    with pytest.raises(TypeError, match="takes 1 arguments"):
        fn()


def test_unknown_function() -> None:
    t = ttype((), np.dtype(np.float32))
    with pytest.raises(KeyError, match="@g"):
        InterpretedFunction(single_op_module(f"ag.neg %a0 : {t}", [t], t), "g")


# --- running functions -----------------------------------------------------------------


def test_returned_argument_is_a_copy_and_calls_repeat() -> None:
    module = parse("""
    func.func @f(%x: tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>) {
      %y = ag.exp %x : tensor<?xf64>
      func.return %x, %y : tensor<?xf64>, tensor<?xf64>
    }
    """)
    fn = InterpretedFunction(module, "f")
    for n in (1, 3, 0):
        x = np.linspace(0, 1, n)
        same, y = fn(x)
        assert same is not x and not np.shares_memory(same, x)
        np.testing.assert_array_equal(same, x)
        np.testing.assert_array_equal(y, np.exp(x))


def test_calls_and_scf_with_ag_values() -> None:
    module = parse("""
    func.func @square(%x: tensor<?xi32>) -> tensor<?xi32> {
      %y = ag.mul %x, %x : tensor<?xi32>, tensor<?xi32> -> tensor<?xi32>
      func.return %y : tensor<?xi32>
    }
    func.func @f(%x: tensor<?xi32>) -> tensor<?xi32> {
      %lb = arith.constant 0 : index
      %ub = arith.constant 2 : index
      %step = arith.constant 1 : index
      %r = scf.for %i = %lb to %ub step %step iter_args(%acc = %x) -> (tensor<?xi32>) {
        %s = func.call @square(%acc) : (tensor<?xi32>) -> tensor<?xi32>
        scf.yield %s : tensor<?xi32>
      }
      func.return %r : tensor<?xi32>
    }
    """)
    (got,) = run_function(module, "f", [np.array([1, 2, 3], np.int32)])
    assert_same(got, [1, 16, 81], np.dtype(np.int32))
