"""`arignote.scan` and its shorthands, on both linkers, against NumPy loops."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.dialects import ag

LINKERS = ["py", "cvm"]


def _f(inputs, outputs, linker, **kwargs):
    return arignote.function(inputs, outputs, mode=arignote.Mode(linker=linker), **kwargs)


def _rnn_reference(x, h0, w, u, b):
    hist = [h0[0], h0[1]]
    for t in range(len(x)):
        hist.append(np.tanh(x[t] @ w + hist[-1] @ u + 0.5 * hist[-2] + b))
    return np.stack(hist[2:])


@pytest.mark.parametrize("linker", LINKERS)
def test_rnn_with_two_taps_and_errors(linker: str) -> None:
    X, H0 = T.tensor3("X"), T.tensor3("H0")
    W, U, b, k = T.matrix("W"), T.matrix("U"), T.vector("b"), T.iscalar("k")

    def step(x, h2, h1, W, U):  # b is a free variable: captured, not passed
        return T.tanh(T.dot(x, W) + T.dot(h1, U) + 0.5 * h2 + b)

    hs, updates = arignote.scan(
        step,
        sequences=X,
        outputs_info=dict(initial=H0, taps=[-2, -1]),
        non_sequences=[W, U],
        n_steps=k,
    )
    assert updates == {}
    f = _f([X, H0, W, U, b, k], [hs, hs[-1]], linker)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 3, 4))
    w, u = rng.standard_normal((4, 5)) * 0.3, rng.standard_normal((5, 5)) * 0.3
    bb, h0 = rng.standard_normal(5), rng.standard_normal((2, 3, 5))
    out, last = f(x, h0, w, u, bb, 6)
    np.testing.assert_allclose(out, _rnn_reference(x, h0, w, u, bb), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(last, out[-1])
    assert f(x, h0, w, u, bb, 2)[0].shape == (2, 3, 5)
    with pytest.raises(ValueError, match="initial value #0 has 1 rows"):
        f(x, h0[:1], w, u, bb, 6)
    with pytest.raises(ValueError, match="sequence #0 has 6"):
        f(x, h0, w, u, bb, 7)
    with pytest.raises(ValueError, match="n_steps must not be negative"):
        f(x, h0, w, u, bb, -1)


@pytest.mark.parametrize("linker", LINKERS)
def test_sequences_with_taps_and_several_outputs(linker: str) -> None:
    x, s0 = T.vector("x"), T.scalar("s0")

    def step(prev, cur, total):
        diff = cur - prev
        return [diff, total + diff * diff]

    (diffs, totals), _ = arignote.scan(
        step, sequences=dict(input=x, taps=[-1, 0]), outputs_info=[None, s0]
    )
    f = _f([x, s0], [diffs, totals], linker)
    xv = np.array([1.0, 4.0, 2.0, 7.0])
    d, tot = f(xv, 0.5)
    np.testing.assert_allclose(d, np.diff(xv))
    np.testing.assert_allclose(tot, 0.5 + np.cumsum(np.diff(xv) ** 2))
    d, tot = f(np.ones(1), 0.5)  # no step
    assert d.shape == (0,) and tot.shape == (0,)
    with pytest.raises(ValueError, match="too short|shorter"):
        f(np.zeros(0), 0.0)


@pytest.mark.parametrize("linker", LINKERS)
def test_state_must_keep_its_shape(linker: str) -> None:
    v = T.vector("v")
    out, _ = arignote.scan(lambda h: T.concatenate([h, h]), outputs_info=v, n_steps=2)
    f = _f([v], out, linker)
    with pytest.raises(ValueError, match="keep its shape"):
        f(np.ones(3))


# A scan with no step: its body's shapes are those of a first step all the same (native
# code computes them before its loop), so both linkers raise the same shape errors and
# give empty results of the same shapes.
NO_STEP = {
    "n_steps=0": (lambda xs: dict(n_steps=0), np.ones((4, 3))),
    "empty sequence": (lambda xs: dict(sequences=xs), np.ones((0, 3))),
}


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("case", NO_STEP)
def test_no_step_state_must_keep_its_shape(linker: str, case: str) -> None:
    xs, h0 = T.matrix("xs"), T.vector("h0")
    scan_args, xs_value = NO_STEP[case]

    def step(*args):  # (x_t, h) over a sequence, (h, xs) with n_steps
        h = args[1] if case == "empty sequence" else args[0]
        return T.concatenate([h, h])

    extra = {} if case == "empty sequence" else dict(non_sequences=[xs])
    out, _ = arignote.scan(step, outputs_info=h0, **scan_args(xs), **extra)
    f = _f([xs, h0], out, linker, on_unused_input="ignore")
    with pytest.raises(ValueError, match="output #0 of the step .* keep its shape"):
        f(xs_value, np.ones(2))


@pytest.mark.parametrize("linker", LINKERS)
def test_no_step_results_have_a_steps_shapes(linker: str, capfd) -> None:
    from arignote.printing import Print

    xs, ys, h0 = T.matrix("xs"), T.matrix("ys"), T.vector("h0")
    (doubled, hs), _ = arignote.scan(
        lambda x, h: [Print("x")(x) * 2, h + x.sum()], sequences=xs, outputs_info=[None, h0]
    )
    f = _f([xs, h0], [doubled, hs], linker)
    d, h = f(np.ones((0, 3)), np.ones(5))
    assert d.shape == (0, 3) and h.shape == (0, 5)
    assert capfd.readouterr().out == ""  # no step ran: nothing printed
    summed, _ = arignote.scan(lambda x, y: x + y, sequences=[xs, ys])
    g = _f([xs, ys], summed, linker)
    assert g(np.ones((0, 3)), np.ones((0, 3))).shape == (0, 3)
    with pytest.raises(ValueError, match="3 vs 4|\\(3,\\) and \\(4,\\)"):
        g(np.ones((0, 3)), np.ones((0, 4)))  # rows that would not add up


def test_map_reduce_folds_go_backwards_return_list() -> None:
    x = T.vector("x")
    zero = T.constant(0.0, dtype="float64")
    squares, _ = arignote.map(lambda v: v * v, sequences=x)
    total, _ = arignote.reduce(lambda v, acc: acc + v, sequences=x, outputs_info=zero)
    left, _ = arignote.foldl(lambda v, acc: acc * 2 + v, sequences=x, outputs_info=zero)
    right, _ = arignote.foldr(lambda v, acc: acc * 2 + v, sequences=x, outputs_info=zero)
    back, _ = arignote.scan(lambda v: v, sequences=x, go_backwards=True, return_list=True)
    assert isinstance(back, list) and len(back) == 1
    f = _f([x], [squares, total, left, right, back[0]], "cvm")
    xv = np.array([1.0, 2.0, 3.0])
    sq, tot, lf, rf, bk = f(xv)
    np.testing.assert_allclose(sq, xv**2)
    assert tot == 6.0 and lf == ((1 * 2) + 2) * 2 + 3 and rf == ((3 * 2) + 2) * 2 + 1
    np.testing.assert_allclose(bk, xv[::-1])


def test_scan_is_one_op_with_captured_operands() -> None:
    x, w = T.vector("x"), T.vector("w")
    outer = T.exp(w)  # computed outside the step: an operand, not recomputed per step
    out, _ = arignote.scan(lambda v, h: h * outer + v, sequences=x, outputs_info=T.zeros_like(w))
    op = out.owner.ir_op
    assert isinstance(op, ag.ScanOp)
    assert str(out.owner.op) == "Scan"
    assert outer.value in list(op.non_sequences)
    assert not any(isinstance(o, ag.ExpOp) for o in op.body.block.ops)
    f = _f([x, w], out, "py")
    np.testing.assert_allclose(f(np.ones(2), np.zeros(2)), [[1.0, 1.0], [2.0, 2.0]])


def test_argument_errors() -> None:
    x, v = T.vector("x"), T.vector("v")
    with pytest.raises(ValueError, match="number of steps"):
        arignote.scan(lambda h: h, outputs_info=v)
    with pytest.raises(TypeError, match="n_steps must be a 0-d integer"):
        arignote.scan(lambda h: h, outputs_info=v, n_steps=T.scalar())
    with pytest.raises(TypeError, match="same dtype"):
        arignote.scan(lambda h: T.cast(h, "float32"), outputs_info=v, n_steps=2)
    with pytest.raises(ValueError, match="returned 2 outputs"):
        arignote.scan(lambda s, h: [h, h], sequences=x, outputs_info=[v])
    with pytest.raises(arignote.MissingInputError, match=r"Input 1 of the graph .*strict=True"):
        arignote.scan(lambda s: s * v, sequences=x, strict=True)
    out, _ = arignote.scan(lambda s, v: s * v, sequences=x, non_sequences=v, strict=True)
    assert out.ndim == 2
    with pytest.raises(ValueError, match="taps of outputs_info #0 must be negative"):
        arignote.scan(lambda s, h: h, sequences=x, outputs_info=dict(initial=x, taps=[1]))


def test_blas_products_write_into_the_stacked_rows() -> None:
    """A step whose result is a gemm/gemv writes BLAS's output into a row of the stacked
    result (a view with an offset)."""
    h0, u, v0 = T.matrix("h0"), T.matrix("U"), T.vector("v0")
    hs, _ = arignote.scan(lambda h, U: T.dot(h, U), outputs_info=h0, non_sequences=u, n_steps=3)
    vs, _ = arignote.scan(lambda v, U: T.dot(U, v), outputs_info=v0, non_sequences=u, n_steps=3)
    f = _f([h0, u, v0], [hs, vs], "cvm")
    rng = np.random.default_rng(1)
    a, m, v = rng.random((2, 2)), rng.random((2, 2)), rng.random(2)
    out_h, out_v = f(a, m, v)
    np.testing.assert_allclose(out_h, np.stack([a @ m, a @ m @ m, a @ m @ m @ m]))
    np.testing.assert_allclose(out_v, np.stack([m @ v, m @ m @ v, m @ m @ m @ v]))


@pytest.mark.parametrize("linker", LINKERS)
def test_only_the_last_step_is_kept(linker: str) -> None:
    """`scan-last-step` marks outputs read only at `[-1]`/`[-1:]` (a two-tap ring, an
    output not fed back); the values are those of the full scan."""
    x, h0 = T.vector("x"), T.vector("h0")
    (h, y), _ = arignote.scan(
        lambda v, h2, h1: [h1 + 0.5 * h2 + v, v * 2],
        sequences=x,
        outputs_info=[dict(initial=h0, taps=[-2, -1]), None],
    )
    f = _f([x, h0], [h[-1], h[-1:], y[-1]], linker)
    (op,) = [n.ir_op for n in f.maker.fgraph.toposort() if isinstance(n.ir_op, ag.ScanOp)]
    assert op.last_only_outputs == {0, 1}
    xv, hv = np.array([1.0, 2.0, 3.0, 4.0]), np.array([0.5, -1.0])
    hist = list(hv)
    for v in xv:
        hist.append(hist[-1] + 0.5 * hist[-2] + v)
    last, last_rows, y_last = f(xv, hv)
    assert last == hist[-1] and last_rows.tolist() == [hist[-1]] and y_last == 8.0
    g = _f([x, h0], h[-1:], linker)
    assert g(np.zeros(0), hv).shape == (0,)


@pytest.mark.parametrize("linker", LINKERS)
def test_shared_variable_updates_in_the_step(linker: str) -> None:
    counter = arignote.shared(np.array(0, dtype="int64"), name="counter")
    acc = arignote.shared(np.zeros(2), name="acc")
    x = T.matrix("x")
    out, updates = arignote.scan(
        lambda row: (row * counter, {counter: counter + 1, acc: acc + row}), sequences=x
    )
    assert set(updates) == {counter, acc}
    f = _f([x], out, linker, updates=updates)
    np.testing.assert_allclose(f(np.ones((3, 2))), [[0, 0], [1, 1], [2, 2]])
    assert counter.get_value() == 3 and acc.get_value().tolist() == [3.0, 3.0]
    np.testing.assert_allclose(f(np.ones((2, 2))), [[3, 3], [4, 4]])
    assert counter.get_value() == 5
    with pytest.raises(TypeError, match="must be a shared variable"):
        arignote.scan(lambda row: (row, {x: row}), sequences=x)


@pytest.mark.parametrize("linker", LINKERS)
def test_nested_scan_and_its_gradient(linker: str) -> None:
    m = T.matrix("M")
    zero = T.constant(0.0, dtype="float64")

    def row_step(row, acc):
        inner, _ = arignote.scan(lambda v, s: s * 0.5 + v, sequences=row, outputs_info=zero)
        return acc + inner[-1]

    out, _ = arignote.scan(row_step, sequences=m, outputs_info=zero)
    f = _f([m], [out, arignote.grad(out[-1], m)], linker)
    value, grad = f(np.arange(6.0).reshape(2, 3))
    np.testing.assert_allclose(value, [2.5, 10.25])
    np.testing.assert_allclose(grad, [[0.25, 0.5, 1.0]] * 2)


@pytest.mark.parametrize("linker", LINKERS)
def test_scan_checkpoints_matches_scan(linker: str) -> None:
    x, h0, w = T.matrix("X"), T.vector("h0"), T.matrix("W")

    def step(v, h, w):
        return T.tanh(v + T.dot(h, w))

    full, _ = arignote.scan(step, sequences=x, outputs_info=h0, non_sequences=w)
    ck, _ = arignote.scan_checkpoints(
        step, sequences=x, outputs_info=h0, non_sequences=w, save_every_N=3
    )
    grads = arignote.grad(full[-1].sum(), [w, x, h0]) + arignote.grad(ck[-1].sum(), [w, x, h0])
    f = _f([x, h0, w], [full, ck, *grads], linker)
    rng = np.random.default_rng(3)
    r = f(rng.standard_normal((7, 3)), rng.standard_normal(3), rng.standard_normal((3, 3)) * 0.5)
    np.testing.assert_allclose(r[1], r[0][[2, 5, 6]])  # the checkpoints: steps 3, 6, 7
    for a, b in zip(r[2:5], r[5:8], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError, match="fed back with tap -1"):
        arignote.scan_checkpoints(step, sequences=x, outputs_info=[None], non_sequences=w)


def test_step_dependent_shapes_fall_back_to_the_interpreter() -> None:
    """Indexing with a sequence element: the index check depends on the step, so the
    native linker runs the function with the interpreter (linker 'c' refuses it)."""
    idx, m = T.ivector("idx"), T.matrix("M")
    rows, _ = arignote.scan(lambda i, M: M[i] * 2, sequences=idx, non_sequences=m)
    f = _f([idx, m], rows, "cvm")
    mv = np.arange(6.0).reshape(3, 2)
    np.testing.assert_allclose(f(np.array([2, 0], dtype="int32"), mv), mv[[2, 0]] * 2)
    with pytest.raises(IndexError):
        f(np.array([3], dtype="int32"), mv)
    with pytest.raises(NotImplementedError, match="linker 'c'"):
        _f([idx, m], rows, "c")


@pytest.mark.parametrize("linker", LINKERS)
def test_scan_and_ifelse_nest(linker: str) -> None:
    """A scan in a lazy branch, and an ifelse in a step (natively: the interpreter runs
    that function)."""
    from arignote.ifelse import ifelse

    x, c = T.vector("x"), T.iscalar("c")
    zero = T.constant(0.0, dtype="float64")
    s, _ = arignote.scan(lambda v, h: h + v, sequences=x, outputs_info=zero)
    f = _f([x, c], ifelse(c, s[-1], x.sum() * 10), linker)
    assert f(np.arange(4.0), 1) == 6.0 and f(np.arange(4.0), 0) == 60.0
    t, _ = arignote.scan(lambda v, h: ifelse(v > 1, h + v, h - v), sequences=x, outputs_info=zero)
    np.testing.assert_allclose(_f([x], t, linker)(np.arange(4.0)), [0.0, -1.0, 1.0, 4.0])


def test_print_in_a_step_prints_every_step(capfd) -> None:
    from arignote.printing import Print

    x = T.vector("x")
    zero = T.constant(0.0, dtype="float64")
    s, _ = arignote.scan(lambda v, h: Print("h")(h) + v, sequences=x, outputs_info=zero)
    f = _f([x], s, "cvm")
    np.testing.assert_allclose(f(np.arange(3.0)), [0.0, 1.0, 3.0])
    assert capfd.readouterr().out.count("h __str__") == 3
