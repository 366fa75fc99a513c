"""Custom ops written in Python (Theano's `Op` subclasses, `as_op`) and `OpFromGraph`,
on both linkers: the interpreter calls `perform`, native code calls back into Python
for the custom node alone. The examples of Theano's tutorial "Creating a new Op: Python
implementation" run here after renaming the imports."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote import OpFromGraph, function, grad
from arignote.compile.mode import InterpreterFallbackWarning
from arignote.compile.ops import as_op

LINKERS = ["py", "cvm"]


def mode(linker: str) -> arignote.Mode:
    return arignote.Mode(linker=linker)


# --- Theano's tutorial examples (imports renamed) ----------------------------------------


class DoubleOp1(arignote.Op):
    __props__ = ()

    def make_node(self, x):
        x = arignote.tensor.as_tensor_variable(x)
        # Note: using x_.type() is dangerous, as it copies x's broadcasting
        # behaviour
        return arignote.Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        x = inputs[0]
        z = output_storage[0]
        z[0] = x * 2

    def infer_shape(self, node, i0_shapes):
        return i0_shapes

    def grad(self, inputs, output_grads):
        return [output_grads[0] * 2]

    def R_op(self, inputs, eval_points):
        if eval_points[0] is None:
            return eval_points
        return self.grad(inputs, eval_points)


class DoubleOp2(arignote.Op):
    __props__ = ()

    itypes = [arignote.tensor.dmatrix]
    otypes = [arignote.tensor.dmatrix]

    def perform(self, node, inputs, output_storage):
        x = inputs[0]
        z = output_storage[0]
        z[0] = x * 2

    def infer_shape(self, node, i0_shapes):
        return i0_shapes

    def grad(self, inputs, output_grads):
        return [output_grads[0] * 2]


class AXPBOp(arignote.Op):
    """
    This creates an Op that takes x to a*x+b.
    """

    __props__ = ("a", "b")

    def __init__(self, a, b):
        self.a = a
        self.b = b
        super(AXPBOp, self).__init__()  # noqa: UP008 - the tutorial's spelling

    def make_node(self, x):
        x = arignote.tensor.as_tensor_variable(x)
        return arignote.Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        x = inputs[0]
        z = output_storage[0]
        z[0] = self.a * x + self.b

    def infer_shape(self, node, i0_shapes):
        return i0_shapes


def infer_shape_numpy_dot(node, input_shapes):
    ashp, bshp = input_shapes
    return [ashp[:-1] + bshp[-1:]]


@as_op(
    itypes=[arignote.tensor.fmatrix, arignote.tensor.fmatrix],
    otypes=[arignote.tensor.fmatrix],
    infer_shape=infer_shape_numpy_dot,
)
def numpy_dot(a, b):
    return np.dot(a, b)


@pytest.mark.parametrize("linker", LINKERS)
def test_tutorial_double_ops(linker: str) -> None:
    x = arignote.tensor.matrix()
    f = arignote.function([x], [DoubleOp1()(x), DoubleOp2()(x)], mode=mode(linker))
    inp = np.random.rand(5, 4)
    out1, out2 = f(inp)
    assert np.allclose(inp * 2, out1)
    assert np.allclose(inp * 2, out2)


@pytest.mark.parametrize("linker", LINKERS)
def test_tutorial_props(linker: str) -> None:
    mult4plus5op = AXPBOp(4, 5)
    another_mult4plus5op = AXPBOp(4, 5)
    mult2plus3op = AXPBOp(2, 3)
    assert mult4plus5op == another_mult4plus5op
    assert mult4plus5op != mult2plus3op
    assert hash(mult4plus5op) == hash(another_mult4plus5op)
    assert str(mult4plus5op) == "AXPBOp{a=4, b=5}"
    assert DoubleOp1() == DoubleOp1() and DoubleOp1() != DoubleOp2()

    x = arignote.tensor.matrix()
    f = arignote.function([x], mult4plus5op(x), mode=mode(linker))
    g = arignote.function([x], mult2plus3op(x), mode=mode(linker))
    inp = np.random.rand(5, 4).astype(np.float32)
    assert np.allclose(4 * inp + 5, f(inp))
    assert np.allclose(2 * inp + 3, g(inp))


@pytest.mark.parametrize("linker", LINKERS)
def test_tutorial_as_op(linker: str) -> None:
    x = arignote.tensor.fmatrix()
    y = arignote.tensor.fmatrix()
    f = function([x, y], numpy_dot(x, y), mode=mode(linker))
    inp1 = np.random.rand(5, 4).astype("float32")
    inp2 = np.random.rand(4, 7).astype("float32")
    out = f(inp1, inp2)
    assert out.dtype == np.float32 and out.shape == (5, 7)
    np.testing.assert_allclose(out, inp1 @ inp2, rtol=1e-5)
    assert str(numpy_dot) == "FromFunctionOp{numpy_dot}"


def test_tutorial_graph_structure() -> None:
    x = T.dvector()
    op = DoubleOp1()
    y = op(x)
    assert y.owner.op is op
    assert y.owner.inputs == [x]
    assert y.owner.outputs == [y]
    assert isinstance(op, arignote.gof.Op) and arignote.graph.Op is arignote.Op


def test_gradients_through_a_custom_op() -> None:
    rng = np.random.default_rng(0)
    arignote.gradient.verify_grad(lambda a: DoubleOp1()(a) ** 2, [rng.random((3, 4))], rng=rng)
    x, v = T.dvector("x"), T.dvector("v")
    jv = arignote.gradient.Rop(DoubleOp1()(x), x, v)
    f = function([x, v], jv)
    np.testing.assert_allclose(f(np.ones(3), np.arange(3.0)), 2 * np.arange(3.0))


def test_grad_of_an_op_without_grad_names_it() -> None:
    a, b = T.fmatrix("a"), T.fmatrix("b")
    with pytest.raises(NotImplementedError, match=r"FromFunctionOp\{numpy_dot\}"):
        grad(numpy_dot(a, b).sum(), a)


# --- running natively ----------------------------------------------------------------------


class Split(arignote.Op):
    """Two outputs of shapes known only once it has run; counts its runs."""

    __props__ = ("k",)

    def __init__(self, k: int):
        self.k = k
        self.runs: list[threading.Thread] = []

    def make_node(self, x):
        x = T.as_tensor_variable(x)
        return arignote.Apply(self, [x], [T.dvector(), T.lvector()])

    def perform(self, node, inputs, output_storage):
        self.runs.append(threading.current_thread())
        (x,) = inputs
        if x.shape[0] == 0:
            raise ZeroDivisionError("Split: an empty input")
        output_storage[0][0] = x[: self.k] * 1.0
        output_storage[1][0] = np.arange(x.shape[0] + 1)


@pytest.mark.parametrize("linker", LINKERS)
def test_multiple_outputs_run_once_per_call(linker: str) -> None:
    op = Split(2)
    x = T.dvector("x")
    a, b = op(x)
    f = function([x], [a * 3, b.sum(), (a + x[:2]).sum()], mode=mode(linker))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no interpreter fallback
        out = f(np.arange(5.0))
    np.testing.assert_allclose(out[0], [0.0, 3.0])
    assert out[1] == 15 and out[2] == 2.0
    assert op.runs == [threading.current_thread()]  # once, in the calling thread
    if linker == "cvm":
        assert f._compiled.run.native is not None  # natively compiled


@pytest.mark.parametrize("linker", LINKERS)
def test_an_exception_in_perform_propagates_and_stores_no_update(linker: str) -> None:
    x = T.dvector("x")
    s = arignote.shared(0.0, name="s")
    a, _ = Split(1)(x)
    f = function([x], a.sum() + x.sum(), updates=[(s, s + 1)], mode=mode(linker))
    with pytest.raises(ZeroDivisionError, match="Split: an empty input"):
        f(np.zeros(0))
    assert s.get_value() == 0.0
    assert f(np.ones(3)) == 4.0 and s.get_value() == 1.0


@pytest.mark.parametrize("linker", LINKERS)
def test_only_the_branch_taken_runs_the_op(linker: str) -> None:
    op = Split(1)
    x, c = T.dvector("x"), T.dscalar("c")
    out = arignote.ifelse.ifelse(c > 0, op(x)[0].sum(), x.sum())
    f = function([x, c], out, mode=mode(linker))
    assert f(np.zeros(0), -1.0) == 0.0  # perform would raise on this input
    assert f(np.arange(3.0) + 1, 1.0) == 1.0
    assert len(op.runs) == 1


@pytest.mark.parametrize("linker", LINKERS)
def test_bad_outputs_of_perform_are_errors_naming_the_op(linker: str) -> None:
    class Bad(arignote.Op):
        __props__ = ("what",)

        def __init__(self, what):
            self.what = what

        def make_node(self, x):
            return arignote.Apply(self, [x], [T.dvector()])

        def perform(self, node, inputs, output_storage):
            if self.what == "rank":
                output_storage[0][0] = np.zeros((2, 2))
            elif self.what == "dtype":
                output_storage[0][0] = np.array(["a"])

    x = T.dvector("x")
    for what, pattern in [
        ("rank", r"Bad\{what='rank'\}: output 0 must be a float64 array of rank 1"),
        ("dtype", r"Bad\{what='dtype'\}: output 0 has dtype <U1, expected float64"),
        ("none", r"Bad\{what='none'\}: perform stored no value in output_storage\[0\]\[0\]"),
    ]:
        f = function([x], Bad(what)(x), mode=mode(linker))
        with pytest.raises((TypeError, ValueError), match=pattern):
            f(np.ones(2))


def test_make_node_errors() -> None:
    with pytest.raises(TypeError, match="We expected inputs of types"):
        DoubleOp2()(T.fmatrix())
    with pytest.raises(ValueError, match="We expected 1 inputs but got 2"):
        DoubleOp2()(T.dmatrix(), T.dmatrix())
    x = T.dvector()
    with pytest.raises(ValueError, match="must be a new variable"):
        arignote.Apply(DoubleOp1(), [x], [x])
    with pytest.raises(TypeError, match="itypes has to be a list of arignote types"):
        as_op(itypes=[3], otypes=[T.dvector])
    with pytest.raises(TypeError, match="infer_shape needs to be a callable"):
        as_op(itypes=[T.dvector], otypes=[T.dvector], infer_shape=3)


def test_a_custom_op_in_a_scan_body_runs_on_the_interpreter_and_says_so() -> None:
    x = T.dmatrix("x")
    ys, _ = arignote.scan(lambda row: DoubleOp1()(row), sequences=[x])
    with pytest.warns(InterpreterFallbackWarning, match="custom op DoubleOp1"):
        f = function([x], ys)
    np.testing.assert_allclose(f(np.ones((3, 2))), 2 * np.ones((3, 2)))


def test_view_op_and_deep_copy_op() -> None:
    from arignote.compile import ops

    x = T.dvector("x")
    f = function([x], [ops.view_op(x) * 2, ops.deep_copy_op(x)])
    a, b = f(np.arange(3.0))
    np.testing.assert_allclose(a, [0.0, 2.0, 4.0])
    np.testing.assert_allclose(b, [0.0, 1.0, 2.0])
    assert ops.ViewOp() == ops.view_op and ops.ViewOp().view_map == {0: [0]}
    g = function([x], grad(ops.deep_copy_op(ops.view_op(x)).sum(), x))
    np.testing.assert_allclose(g(np.arange(3.0)), np.ones(3))


# --- OpFromGraph -----------------------------------------------------------------------------


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("inline", [False, True])
def test_op_from_graph_examples(linker: str, inline: bool) -> None:
    # Theano's docstring examples 1 and 2 (with a shared variable)
    x, y, z = T.scalars("xyz")
    s = arignote.shared(np.random.rand(2, 2).astype(arignote.config.floatX))
    op = OpFromGraph([x, y, z], [x + y * z], inline=inline)
    op2 = arignote.compile.builders.OpFromGraph([x, y, z], [x + y * z + s], inline=inline)
    e2 = op(x, y, z) + op(z, y, x)
    fn = function([x, y, z], [e2, op2(x, y, z)], mode=mode(linker))
    out, with_s = fn(1.0, 2.0, 3.0)
    assert out == 12.0
    np.testing.assert_allclose(with_s, 7.0 + s.get_value())
    dx = function([x, y, z], grad(e2, x), mode=mode(linker))
    assert dx(1.0, 2.0, 3.0) == 1.0 + 2.0


@pytest.mark.parametrize("linker", LINKERS)
def test_op_from_graph_grad_overrides(linker: str) -> None:
    # Theano's docstring example 3: the gradient with respect to y is doubled
    x, y, z = T.scalars("xyz")
    e = x + y * z

    def rescale_dy(inps, grads):
        x, y, z = inps
        (g,) = grads
        return z * 2

    op = OpFromGraph([x, y, z], [e], grad_overrides=["default", rescale_dy, "default"])
    e2 = op(x, y, z)
    dx, dy, dz = grad(e2, [x, y, z])
    fn = function([x, y, z], [e2, dx, dy, dz], mode=mode(linker))
    assert [float(v) for v in fn(2.0, 3.0, 4.0)] == [14.0, 1.0, 8.0, 3.0]

    whole = OpFromGraph([x, y], [x * y], grad_overrides=lambda inps, gs: [gs[0], gs[0]])
    dxy = grad(whole(x, y), [x, y])
    assert [float(v) for v in function([x, y], dxy, mode=mode(linker))(2.0, 3.0)] == [1.0, 1.0]
    lop = OpFromGraph([x], [x * x], lop_overrides=lambda inps, outs, gs: [outs[0] * gs[0]])
    assert function([x], grad(lop(x), x), mode=mode(linker))(3.0) == 9.0


def test_op_from_graph_errors() -> None:
    x = T.dscalar("x")
    with pytest.raises(TypeError, match="outputs must be list"):
        OpFromGraph([x], x * 2)
    with pytest.raises(ValueError, match="expect overrider with 1 inputs, got 2"):
        OpFromGraph([x], [x * 2], grad_overrides=["default", "default"])
    with pytest.raises(TypeError, match="expected 1 inputs, got 2"):
        OpFromGraph([x], [x * 2])(x, x)


def test_scalars_names_one_variable_per_character() -> None:
    # Theano's `tensor.scalars('xyz')` (used by the OpFromGraph examples)
    x, y, z = T.scalars("xyz")
    assert [v.name for v in (x, y, z)] == ["x", "y", "z"]
    assert [v.name for v in T.scalars("a", "bc")] == ["a", "bc"]
    assert [v.name for v in T.dvectors(["u", "vw"])] == ["u", "vw"]
    assert T.scalars("x").name == "x"  # one name: one variable (Theano's _multi)
