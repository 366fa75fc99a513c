"""Deep graphs for `test_deep_graphs.py`: each builder makes a graph `depth` ops deep
(chains of elementwise ops, `switch`, views, shape arithmetic, a scan body, ...) and its
NumPy reference.

A case is `(inputs, outputs, givens for function(), mode changes, argument values,
expected values, rtol)`; `run_case` compiles it with a linker and compares.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

import arignote
import arignote.tensor as T
from arignote import Mode
from arignote.ifelse import ifelse

SCALE, SHIFT = 1.0001, 1.0


def chain(y: Any, depth: int) -> Any:
    """`depth` ops of `y * SCALE + SHIFT` (two ops each, counted as one step)."""
    for _ in range(depth):
        y = y * SCALE + SHIFT
    return y


def numpy_chain(y: np.ndarray, depth: int) -> np.ndarray:
    for _ in range(depth):
        y = y * y.dtype.type(SCALE) + y.dtype.type(SHIFT)
    return y


@dataclass
class Case:
    inputs: list[Any]
    outputs: Any
    args: list[Any]
    expected: Any
    rtol: float = 1e-12
    including: tuple[str, ...] = ()
    updates: list[Any] = field(default_factory=list)


def _vector(n: int = 7) -> np.ndarray:
    return np.linspace(-1.0, 1.0, n)


def elementwise_vector(depth: int) -> Case:
    x = T.dvector("x")
    v = _vector()
    return Case([x], chain(x, depth), [v], numpy_chain(v, depth))


def elementwise_matrix(depth: int) -> Case:
    x = T.dmatrix("x")
    v = np.arange(12.0).reshape(3, 4) / 7
    return Case([x], chain(x, depth), [v], numpy_chain(v, depth))


def reduction(depth: int) -> Case:
    x = T.dmatrix("x")
    v = np.arange(12.0).reshape(3, 4) / 7
    return Case([x], chain(x, depth).sum(axis=1), [v], numpy_chain(v, depth).sum(axis=1))


def switch(depth: int) -> Case:
    x = T.dvector("x")
    y, r = x, _vector(9)
    v = r.copy()
    for i in range(depth):
        threshold = 0.25 * (i % 5)
        y = T.switch(y > threshold, y - 0.5, y + 0.75)
        r = np.where(r > threshold, r - 0.5, r + 0.75)
    return Case([x], y, [v], r)


def vectorized_f32(depth: int) -> Case:
    """A float32 chain over a vector long enough for vector loops and a remainder,
    ending in `exp` (an inline vector expansion)."""
    x = T.fvector("x")
    v = np.linspace(-1.0, 1.0, 4099).astype(np.float32)
    y = T.exp(chain(x, depth) * np.float32(1e-3))
    expected = np.exp(numpy_chain(v, depth) * np.float32(1e-3))
    # each step rounds (or fuses into one FMA) at most twice: a relative error of about
    # 2 * depth float32 epsilons on the chain, within the bound for exp's argument
    return Case([x], y, [v], expected, rtol=4 * depth * float(np.finfo(np.float32).eps))


def gradient(depth: int) -> Case:
    x = T.dvector("x")
    g = arignote.grad(chain(x, depth).sum(), x)
    v = _vector(5)
    return Case([x], g, [v], np.full(5, SCALE**depth), rtol=1e-9)


def scan_body(depth: int) -> Case:
    x = T.dvector("x")
    out, _ = arignote.scan(lambda h: chain(h, depth), outputs_info=[x], n_steps=3)
    v = _vector(5)
    return Case([x], out[-1], [v], numpy_chain(v, 3 * depth), rtol=1e-10)


def scan_invariant(depth: int) -> Case:
    """`h + x_t · chain(W)` in a scan body: `scan-pushout` computes the product for all
    the rows before the loop, hoisting the invariant chain on `W` out of the body."""
    xs, h0, w = T.dmatrix("xs"), T.dvector("h0"), T.dmatrix("W")
    out, _ = arignote.scan(
        lambda x_t, h, w: h + T.dot(x_t, chain(w, depth)),
        sequences=[xs],
        outputs_info=[h0],
        non_sequences=[w],
    )
    xv, hv, wv = np.arange(6.0).reshape(3, 2) / 5, _vector(4), np.arange(8.0).reshape(2, 4) / 9
    expected = hv + (xv @ numpy_chain(wv, depth)).sum(axis=0)
    args = [xv, hv, wv]
    # with fusion after scan-pushout (without the optimizer), the hoisted chain is fused
    including = ("scan_pushout", "fusion")
    return Case([xs, h0, w], out[-1], args, expected, rtol=1e-10, including=including)


def row_fusion(depth: int) -> Case:
    """`A.T · chain(A · w)`: the chain goes into the region of an `ag.gemv_pair` (with
    the `specialize` pass making the gemvs, when the optimizer does not run it)."""
    a, w = T.dmatrix("A"), T.dvector("w")
    av, wv = np.arange(12.0).reshape(4, 3) / 10, _vector(3)
    expected = av.T @ numpy_chain(av @ wv, depth)
    outputs = T.dot(a.T, chain(T.dot(a, w), depth))
    including = ("specialize", "row_fusion")
    return Case([a, w], outputs, [av, wv], expected, rtol=1e-10, including=including)


def slices(depth: int) -> Case:
    """`depth` nested views: `x[1:][1:]...`."""
    x = T.dvector("x")
    y = x
    for _ in range(depth):
        y = y[1:]
    v = np.arange(depth + 5.0)
    return Case([x], y * 2.0, [v], v[depth:] * 2.0)


def shape_arithmetic(depth: int) -> Case:
    """A result length computed by `depth` integer additions (the shape function
    computes them)."""
    x = T.dvector("x")
    n = x.shape[0]
    for _ in range(depth):
        n = n + 1
    v = _vector(4)
    return Case([x], T.zeros((n,)) + 1.0, [v], np.ones(4 + depth))


def scan_shape(depth: int) -> Case:
    """A length computed in the scan body by `depth` additions on a non-sequence (the
    scan's shape rule computes them in front of the loop)."""
    h0, n = T.dvector("h0"), T.lscalar("n")

    def step(h: Any, n: Any) -> Any:
        m = n
        for _ in range(depth):
            m = m + 1
        return h + T.zeros((m,)).sum()

    out, _ = arignote.scan(step, outputs_info=[h0], non_sequences=[n], n_steps=2)
    v = _vector(3)
    return Case([h0, n], out[-1], [v, 2], v)


def ifelse_branches(depth: int) -> Case:
    c, x = T.dscalar("c"), T.dvector("x")
    y = ifelse(c, chain(x, depth), chain(x * 2.0, depth))
    v = _vector(5)
    return Case([c, x], y, [0.0, v], numpy_chain(v * 2.0, depth))


def shared_update(depth: int) -> Case:
    s = arignote.shared(_vector(5), name="s")
    return Case([], [], [], None, updates=[(s, chain(s, depth))])


CASES: dict[str, Callable[[int], Case]] = {
    f.__name__: f
    for f in (
        elementwise_vector,
        elementwise_matrix,
        reduction,
        switch,
        vectorized_f32,
        gradient,
        scan_body,
        scan_invariant,
        row_fusion,
        slices,
        shape_arithmetic,
        scan_shape,
        ifelse_branches,
        shared_update,
    )
}


def run_case(name: str, depth: int, linker: str, optimizer: str | None = "fast_run") -> None:
    """Compile case `name` at `depth` with `linker` and `optimizer` (None: only the
    passes the case includes), call it, compare with NumPy."""
    case = CASES[name](depth)
    mode = Mode(linker=linker, optimizer=optimizer).including(*case.including)
    f = arignote.function(case.inputs, case.outputs, updates=case.updates, mode=mode)
    got = f(*case.args)
    if case.updates:
        ((shared, _),) = case.updates
        expected = numpy_chain(_vector(5), depth)
        np.testing.assert_allclose(shared.get_value(), expected, rtol=1e-12)
        return
    np.testing.assert_allclose(got, case.expected, rtol=case.rtol, atol=0)


@contextmanager
def recursion_headroom(frames: int) -> Iterator[None]:
    """Python's recursion limit set to the current stack depth plus `frames`."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack(0)) + frames)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def mlp_training_module(layers: int) -> ModuleOp:
    """The emitted module of an MLP training step (`layers` tanh layers of 4 units,
    softmax, cross-entropy, SGD updates), float32."""
    rng = np.random.default_rng(0)
    x, y = T.matrix("x"), T.ivector("y")
    h, params = x, []
    for i in range(layers):
        w = arignote.shared(rng.standard_normal((4, 4)).astype("float32"), name=f"W{i}")
        b = arignote.shared(np.zeros(4, "float32"), name=f"b{i}")
        params += [w, b]
        h = T.tanh(T.dot(h, w) + b)
    cost = -T.mean(T.log(T.nnet.softmax(h))[T.arange(y.shape[0]), y])
    updates = [(p, p - 0.1 * g) for p, g in zip(params, T.grad(cost, params), strict=True)]
    f = arignote.function([x, y], cost, updates=updates)
    module = f.maker.fgraph.func.parent_op()
    assert isinstance(module, ModuleOp)
    return module
