"""The symbolic graph API, dtype rules, emission and `function()`'s argument checks."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.compile.function import UnusedInputError


def test_constructors_and_patterns() -> None:
    assert T.scalar().broadcastable == ()
    assert T.vector().broadcastable == (False,)
    assert T.row().broadcastable == (True, False)
    assert T.col().broadcastable == (False, True)
    assert T.matrix().broadcastable == (False, False)
    assert T.tensor3().ndim == 3 and T.tensor4().ndim == 4
    assert T.matrix().dtype == arignote.config.floatX
    assert T.fmatrix().dtype == "float32"
    assert T.ivector().dtype == "int32"
    assert T.lscalar().dtype == "int64"
    assert T.dtensor3().dtype == "float64"
    assert T.bvector().dtype == "int8"
    assert T.matrix(dtype="int64").dtype == "int64"
    x, y = T.fscalars("x", "y")
    assert (x.name, y.name, x.dtype) == ("x", "y", "float32")
    a, b, c = T.matrices("a", "b", "c")
    assert c.ndim == 2
    assert len(T.dvectors(3)) == 3


def test_tensor_type() -> None:
    mytype = T.TensorType("float64", broadcastable=())
    v = mytype("v")
    assert v.type == mytype and v.name == "v" and v.owner is None
    assert T.TensorType("float32", (True, False)) == T.row(dtype="float32").type
    with pytest.raises(TypeError, match="float16"):
        T.TensorType("float16", ())
    with pytest.raises(TypeError, match="broadcastable"):
        T.TensorType("float64", "ab")


def test_graph_structure() -> None:
    x, y = T.dmatrix("x"), T.dmatrix("y")
    z = x + y
    assert z.owner is not None and x.owner is None and y.owner is None
    assert list(z.owner.inputs) == [x, y]
    assert z.owner.outputs[0] is z
    assert type(z.owner.op).__name__ == "Elemwise"
    assert str(z.owner.op) == "Elemwise{add}"
    s = z.sum(axis=0)
    assert type(s.owner.op).__name__ == "Sum"
    assert s.owner.inputs[0] is z
    c = T.constant(2.0)
    assert c.owner is None and float(c.data) == 2.0


def test_dtype_rules() -> None:
    f = T.fvector()
    i = T.ivector()
    b = T.bvector()
    assert (f * 2.0).dtype == "float32"  # a Python float does not upcast float32
    assert (f * 2).dtype == "float32"
    assert (i * 2).dtype == "int32"
    assert (i * 2.5).dtype == "float64"
    assert (b + 300).dtype == "int16"
    assert (f + T.dvector()).dtype == "float64"
    assert (i + f).dtype == "float64"
    assert (i / i).dtype == arignote.config.floatX
    assert (i // i).dtype == "int32"
    assert T.exp(i).dtype == "float64" and T.exp(b).dtype == "float32"
    assert (f < 1).dtype == "bool"
    assert i.sum().dtype == "int64" and f.sum().dtype == "float32"
    assert T.switch(f > 0, f, 0).dtype == "float32"


def test_int_division_gives_floatx() -> None:
    old = arignote.config.floatX
    try:
        arignote.config.floatX = "float32"
        i = T.iscalar()
        assert (i / i).dtype == "float32"
        assert T.matrix().dtype == "float32"
    finally:
        arignote.config.floatX = old


def test_config_validation() -> None:
    with pytest.raises(ValueError, match="float16"):
        arignote.config.floatX = "float16"
    with pytest.raises(ValueError, match="unknown config flag"):
        arignote.config.no_such_flag = 1


def test_broadcast_errors_at_build_time() -> None:
    x = T.TensorType("float64", (False,))("x")
    m = T.dmatrix("m")
    with pytest.raises(ValueError, match="dimshuffle"):
        m.dimshuffle(0)  # drops a non-broadcastable axis
    with pytest.raises(ValueError, match="axis"):
        m.sum(axis=2)
    # (dot of a 3-d tensor with a vector was NotImplementedError: it is NumPy's now, see
    # test_ops.py::test_dot_of_more_than_two_dimensions)
    assert T.dot(T.dtensor3(), x).ndim == 2


def test_emitted_function() -> None:
    x, y = T.dmatrices("x", "y")
    f = arignote.function([x, y], (x + y) * 2)
    text = str(f.module)
    assert "func.func @fn_main(%x: tensor<?x?xf64>, %y: tensor<?x?xf64>)" in text
    assert "ag.add %x, %y" in text and "ag.mul" in text
    assert f.module.ops.first is not None


def test_function_checks_inputs() -> None:
    r = T.drow("r")
    m = T.dmatrix("m")
    f = arignote.function([r, m], r + m, name="f_row")
    with pytest.raises(TypeError, match='name "r".*index 0.*broadcastable'):
        f(np.ones((2, 2)), np.ones((2, 2)))
    with pytest.raises(TypeError, match='name "m".*dimensions: expected 2, got 1'):
        f(np.ones((1, 2)), np.ones(2))
    v, w = T.fvectors("v", "w")
    g = arignote.function([v, w], v * 2, on_unused_input="ignore")
    np.testing.assert_array_equal(g([1], [5]), [2])


def test_input_conversion_rules() -> None:
    v = T.fvector("v")
    f = arignote.function([v], v * 2)
    np.testing.assert_array_equal(f([1, 2]), np.array([2, 4], np.float32))  # exact ints
    np.testing.assert_array_equal(f(np.array([1, 2], np.int8)), [2, 4])  # safe upcast
    with pytest.raises(TypeError, match="loss of precision"):
        f(np.array([1.0, 2.0]))  # float64 → float32 is a downcast
    with pytest.raises(TypeError, match="exactly"):
        f([0.1])
    g = arignote.function([v], v * 2, allow_input_downcast=True)
    np.testing.assert_allclose(g(np.array([0.1])), [0.2], rtol=1e-6)


def test_function_arguments() -> None:
    x, y = T.dscalars("x", "y")
    f = arignote.function([x, y], [x - y])
    assert isinstance(f(1, 2), list)
    assert f(y=1, x=5)[0] == 4
    with pytest.raises(TypeError, match="Missing required input: y"):
        f(1)
    with pytest.raises(TypeError, match="Multiple values for input: x"):
        f(1, x=2)
    with pytest.raises(TypeError, match="Too many parameter passed"):
        f(1, 2, 3)


def test_function_errors() -> None:
    x, y = T.dscalars("x", "y")
    with pytest.raises(arignote.MissingInputError, match="y"):
        arignote.function([x], x + y)
    with pytest.raises(arignote.MissingInputError, match="unnamed"):
        arignote.function([x], x + T.dscalar("unnamed"))
    with pytest.raises(UnusedInputError, match="y"):
        arignote.function([x, y], x * 2)
    with pytest.raises(TypeError, match="free variables"):
        arignote.function([x + 1], x)
    with pytest.raises(ValueError, match="mode"):
        arignote.function([x], x, mode="NO_SUCH_MODE")
    with pytest.raises(ValueError, match="linker"):
        arignote.Mode(linker="nope")


def test_function_named_like_libm() -> None:
    x = T.dvector("x")
    f = arignote.function([x], T.exp(x), name="exp")
    np.testing.assert_allclose(f([0.0, 1.0]), np.exp([0.0, 1.0]))
    assert "@fn_exp" in str(f.module)


def test_compiles_at_definition_time() -> None:
    x = T.dvector("x")
    f = arignote.function([x], T.exp(x))
    assert f.compile_time > 0
    assert f.mode.linker == arignote.config.linker


def test_deep_graph_does_not_recurse() -> None:
    x = T.dscalar("x")
    y = x
    for _ in range(3000):
        y = y + 1
    f = arignote.function([x], y, mode=arignote.Mode(linker="py"))
    assert f(0) == 3000


def test_emitted_module_round_trips() -> None:
    from xdsl.parser import Parser

    from arignote.lowering.driver import make_context

    x, r = T.fmatrix("x"), T.frow("r")
    out = [T.switch(x > r, T.exp(x) - 1, -x).sum(axis=0), T.dot(x, r.T), T.cast(x < 0, "int32")]
    f = arignote.function([x, r], out, mode=arignote.Mode(linker="py"))
    text = str(f.module)
    reparsed = Parser(make_context(), text).parse_module()
    reparsed.verify()
    assert str(reparsed) == text


@pytest.mark.parametrize("linker", ["py", "cvm"])
def test_maker_fgraph_toposort(linker: str) -> None:
    x, y = T.dmatrix("x"), T.dvector("y")
    out = T.exp(T.dot(x, y)) + T.exp(T.dot(x, y))  # cse leaves one gemv and one exp
    mode = arignote.Mode(linker=linker)
    f = arignote.function([x, y], out, mode=mode.excluding("fusion", "inplace"))
    nodes = f.maker.fgraph.toposort()
    names = [str(n.op) for n in nodes]
    assert names == ["Gemv", "Elemwise{exp}", "Elemwise{add}"]  # specialize: dot → gemv
    fused = arignote.function([x, y], out, mode=mode).maker.fgraph.toposort()
    assert [str(n.op) for n in fused] == ["Gemv", "Elemwise{Composite{exp,add}}"]
    assert type(fused[1].op).__name__ == "Elemwise" and fused[1].inputs[0] is fused[0].outputs[0]
    assert nodes[0].inputs[1].name == "x" and nodes[0].outputs[0] is nodes[1].inputs[0]
    assert f.maker.fgraph.outputs[0] is nodes[-1].outputs[0]
    unoptimized = arignote.function([x, y], out, mode=arignote.Mode(linker=linker, optimizer=None))
    assert len(unoptimized.maker.fgraph.toposort()) == 5


def test_variables_are_truthy_except_comparisons() -> None:
    """Theano's `__bool__`: `if not W:` in a model's constructor checks for None, so every
    variable is True; only `<`, `<=`, `>`, `>=` results refuse (they would misread `a < b < c`)."""
    x = T.dvector("x")
    w = arignote.shared(np.zeros(3), name="w")
    assert bool(x) and bool(w) and bool(x + 1) and bool(T.constant(0.0)) and bool(T.eq(x, 0))
    assert not (not w)
    for compared in (x < 1, x <= 1, x > 1, x >= 1):
        with pytest.raises(TypeError, match="comparison has no truth value"):
            bool(compared)
    with pytest.raises(TypeError, match="comparison"):
        0 < x < 1  # noqa: B015 - the chained comparison is the point


def test_variable_type_follows_its_ir_type() -> None:
    # `Variable.type` is kept between calls; a changed IR type (xDSL's rewriters set
    # `_type`) must not give the old one.
    from arignote.dialects.ag.base import tensor_of
    from arignote.runtime.dtypes import element_type

    x = T.dmatrix("x")
    assert x.type is T.dmatrix
    x.value._type = tensor_of(element_type(np.dtype("float32")), (-1, 1))
    assert x.type == T.TensorType("float32", (False, True))
    assert x.dtype == "float32" and x.broadcastable == (False, True)


def test_tensor_of_is_the_builtin_type_made_once() -> None:
    from xdsl.dialects.builtin import TensorType, f64

    from arignote.dialects.ag.base import tensor_of

    made = tensor_of(f64, [2, -1])
    assert made == TensorType(f64, [2, -1])
    assert tensor_of(f64, (2, -1)) is made
    assert tensor_of(f64, (2, 1)) != made


def test_remembered_walks_give_the_walk_and_see_new_ops() -> None:
    from arignote.graph import _ancestors, ancestors, walks_remembered

    x = T.dvector("x")
    y = T.exp(x) + 1
    with walks_remembered():
        first = ancestors([y.value])
        assert first == _ancestors([y.value], ())
        first.clear()  # a caller's list is its own
        assert ancestors([y.value]) == _ancestors([y.value], ())
        z = y * 2  # built meanwhile: a new value, walked anew
        assert ancestors([z.value]) == _ancestors([z.value], ())
        stopped = ancestors([z.value], [y.value])
        assert stopped == _ancestors([z.value], [y.value])
        assert z.owner.ir_op in stopped and y.owner.ir_op not in stopped
