"""Functions compiled for the GPU (`config.device=cuda`), on the emulated device and on a
real GPU where there is one, checked against NumPy and the CPU target.

Tolerances: the GPU runs the same elementwise code as the CPU (arignote's own
polynomials, within 2 ulp of NumPy), so elementwise results get a few ulp; a sum of n
terms may be added in another order, within n·eps·Σ|x|; BLAS products (cuBLAS there,
OpenBLAS here) within k·eps·Σ|a||b| per element for an inner dimension k.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.compile.device import DeviceFallbackWarning, DeviceUnavailableError
from arignote.configuration import config
from arignote.runtime import cuda

RNG = np.random.default_rng(7)


def _ulps(dtype: str, n: float = 4) -> float:
    return n * float(np.finfo(dtype).eps)


def _compiled(f: arignote.compile.function.Function) -> object:
    return f._compiled.run


def test_runs_on_the_gpu_target(gpu: str) -> None:
    x = T.vector("x")
    f = arignote.function([x], x * 2 + 1)
    run = _compiled(f)
    assert getattr(run, "on_device", False)
    assert isinstance(run.gpu, cuda.GpuFunction)
    before = cuda.launches()
    out = f(np.arange(6.0))
    assert type(out) is np.ndarray
    np.testing.assert_array_equal(out, np.arange(6.0) * 2 + 1)
    assert cuda.launches() > before
    assert ".entry" in run.gpu.ptx and ".target sm_" in run.gpu.ptx
    # Theano's test of where a function ran: its elementwise nodes are `GpuElemwise`
    ops = [node.op for node in f.maker.fgraph.toposort()]
    assert [type(op).__name__ for op in ops] == ["GpuElemwise"], ops
    assert isinstance(ops[0], arignote.graph.Elemwise) and str(ops[0]).startswith("GpuElemwise{")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_elementwise_math(gpu: str, dtype: str) -> None:
    x, y = T.vector("x", dtype=dtype), T.vector("y", dtype=dtype)
    expr = T.tanh(x * y + T.exp(-x)) * 0.5 + 1 / (1 + T.exp(-y)) + T.log1p(abs(y)) - T.sqrt(x * x)
    f = arignote.function([x, y], [expr, T.switch(x > y, x, y), (x % 1.5)])
    a = RNG.uniform(-3, 3, 257).astype(dtype)
    b = RNG.uniform(-3, 3, 257).astype(dtype)
    out, sel, mod = f(a, b)
    ref = np.tanh(a * b + np.exp(-a)) * 0.5 + 1 / (1 + np.exp(-b)) + np.log1p(abs(b)) - abs(a)
    np.testing.assert_allclose(out, ref, rtol=_ulps(dtype, 16), atol=_ulps(dtype, 16))
    np.testing.assert_array_equal(sel, np.where(a > b, a, b))
    np.testing.assert_allclose(mod, np.mod(a, a.dtype.type(1.5)), atol=_ulps(dtype, 8))


def test_broadcasting_and_matrices(gpu: str) -> None:
    m, r, c = T.matrix("m"), T.row("r"), T.col("c")
    f = arignote.function([m, r, c], [m * r + c, m.T * 2])
    a = RNG.standard_normal((5, 7))
    b = RNG.standard_normal((1, 7))
    d = RNG.standard_normal((5, 1))
    out, t = f(a, b, d)
    np.testing.assert_allclose(out, a * b + d, rtol=_ulps("float64"))
    np.testing.assert_array_equal(t, a.T * 2)


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_reductions(gpu: str, axis: int | None) -> None:
    m = T.matrix("m")
    f = arignote.function([m], [m.sum(axis=axis), m.max(axis=axis), m.mean(axis=axis)])
    a = RNG.standard_normal((13, 21))
    s, mx, mean = f(a)
    bound = a.size * np.finfo("float64").eps * np.abs(a).sum()
    np.testing.assert_allclose(s, a.sum(axis=axis), atol=bound)
    np.testing.assert_array_equal(mx, a.max(axis=axis))
    np.testing.assert_allclose(mean, a.mean(axis=axis), atol=bound)


def test_full_reductions_in_parallel_parts(gpu: str) -> None:
    """More elements than parts (2048): each part combines every 2048th element."""
    m, v = T.matrix("m"), T.vector("v")
    f = arignote.function([m, v], [m.sum(), m.max(), v.sum(), (v * 2).min()])
    a = RNG.standard_normal((70, 80))
    b = RNG.standard_normal(5001)
    s, mx, vs, vmin = f(a, b)
    eps = np.finfo("float64").eps
    np.testing.assert_allclose(s, a.sum(), atol=2048 * eps * np.abs(a).sum())
    assert mx == a.max() and vmin == (b * 2).min()
    np.testing.assert_allclose(vs, b.sum(), atol=2048 * eps * np.abs(b).sum())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dot_products_use_gpu_blas(gpu: str, dtype: str) -> None:
    a, b, v = T.matrix("a", dtype=dtype), T.matrix("b", dtype=dtype), T.vector("v", dtype=dtype)
    f = arignote.function([a, b, v], [T.dot(a, b), T.dot(a, v), T.dot(a.T, v[:9]), T.dot(b.T, a.T)])
    names = {node.op.__class__.__name__ for node in f.maker.fgraph.toposort()}
    assert {"GpuGemm", "GpuGemv"} <= names, names
    x = RNG.standard_normal((9, 11)).astype(dtype)
    y = RNG.standard_normal((11, 6)).astype(dtype)
    z = RNG.standard_normal(11).astype(dtype)
    got = f(x, y, z)
    want = [x @ y, x @ z, x.T @ z[:9], y.T @ x.T]
    eps = np.finfo(dtype).eps
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, atol=11 * eps * 4 * np.abs(w).max() + eps)


def test_logistic_regression_step_matches_the_cpu(gpu: str) -> None:
    """The seed exercise's training step (float32): the GPU's outputs and updated shared
    values agree with the CPU target's after several steps."""
    rng = np.random.default_rng(3)
    n, feats = 64, 40
    data = rng.standard_normal((n, feats)).astype("float32")
    labels = rng.integers(0, 2, n).astype("float32")
    w0 = rng.standard_normal(feats).astype("float32")

    def build() -> tuple[arignote.compile.function.Function, object]:
        x, y = T.matrix("x", dtype="float32"), T.vector("y", dtype="float32")
        w = arignote.shared(w0.copy(), name="w")
        b = arignote.shared(np.float32(0.0), name="b")
        p_1 = 1 / (1 + T.exp(-T.dot(x, w) - b))
        xent = -y * T.log(p_1) - (1 - y) * T.log(1 - p_1)
        cost = T.cast(xent.mean(), "float32") + 0.01 * (w**2).sum()
        gw, gb = T.grad(cost, [w, b])
        train = arignote.function(
            [x, y], [p_1 > 0.5, xent], updates={w: w - 0.01 * gw, b: b - 0.01 * gb}
        )
        return train, w

    train_gpu, w_gpu = build()
    with config.change_flags(device="cpu"):
        train_cpu, w_cpu = build()
    assert not getattr(_compiled(train_cpu), "on_device", False)
    for _ in range(5):
        pred_g, err_g = train_gpu(data, labels)
        pred_c, err_c = train_cpu(data, labels)
    np.testing.assert_array_equal(pred_g, pred_c)
    np.testing.assert_allclose(err_g, err_c, rtol=1e-4, atol=1e-5)
    assert w_gpu.get_value().dtype == np.float32
    np.testing.assert_allclose(w_gpu.get_value(), w_cpu.get_value(), rtol=1e-4, atol=1e-5)
    assert "GpuGemv" in {n.op.__class__.__name__ for n in train_gpu.maker.fgraph.toposort()}


def test_shared_values_stay_on_the_device(gpu: str) -> None:
    acc = arignote.shared(np.zeros(4), name="acc")
    inc = T.vector("inc")
    f = arignote.function([inc], acc.sum(), updates={acc: acc + inc})
    f(np.ones(4))
    storage = acc._storage
    assert storage.on_device  # the update is a device array, not copied back
    device_value = acc.get_value(borrow=True, return_internal_type=True)
    assert cuda.is_device_array(device_value)
    f(np.ones(4))
    np.testing.assert_array_equal(acc.get_value(), [2.0, 2.0, 2.0, 2.0])
    acc.set_value(np.full(4, 5.0))  # a host value again: copied to the device at the next call
    assert float(f(np.zeros(4))) == 20.0


def test_return_device(gpu: str) -> None:
    x = T.vector("x")
    f = arignote.function([x], x + 1, return_device=True)
    out = f(np.arange(3.0))
    assert cuda.is_device_array(out)
    np.testing.assert_array_equal(out.get(), [1.0, 2.0, 3.0])
    g = arignote.function([x], x * 2)
    np.testing.assert_array_equal(g(out), [2.0, 4.0, 6.0])  # a device array as input


def test_scan_and_ifelse(gpu: str) -> None:
    from arignote.ifelse import ifelse

    k = T.iscalar("k")
    a = T.vector("a")
    result, _ = arignote.scan(lambda prior, a: prior * a, outputs_info=T.ones_like(a),
                              non_sequences=a, n_steps=k)  # fmt: skip
    f = arignote.function([a, k], result[-1])
    np.testing.assert_allclose(f(np.arange(5.0), 3), np.arange(5.0) ** 3)
    c = T.scalar("c")
    g = arignote.function([c, a], ifelse(T.lt(c, 0), a * 2, a - 1))
    np.testing.assert_array_equal(g(-1.0, np.arange(3.0)), [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(g(1.0, np.arange(3.0)), [-1.0, 0.0, 1.0])


def test_shape_errors_and_bad_input(gpu: str) -> None:
    x, y = T.vector("x"), T.vector("y")
    f = arignote.function([x, y], x + y)
    with pytest.raises(ValueError, match="do not match"):
        f(np.zeros(3), np.zeros(4))
    with pytest.raises(TypeError):
        f(np.zeros((2, 2)), np.zeros(3))
    single = cuda.to_device(np.zeros(3, np.float32))  # device arrays are not converted
    with pytest.raises(TypeError, match="a device array of dtype float32 and shape \\(3,\\)"):
        f(single, np.zeros(3))


def test_what_the_gpu_cannot_run_falls_back_to_the_cpu(gpu: str) -> None:
    x = T.vector("x")
    printed = arignote.printing.Print("value")(x) * 2
    with pytest.warns(DeviceFallbackWarning, match="cannot run on the GPU"):
        f = arignote.function([x], printed)
    assert not getattr(_compiled(f), "on_device", False)
    with config.change_flags(force_device=True):
        with pytest.raises(DeviceUnavailableError, match="cannot run on the GPU"):
            arignote.function([x], arignote.printing.Print("value")(x) * 2)


def test_cpu_functions_are_unchanged() -> None:
    x = T.vector("x")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f = arignote.function([x], x + 1)
    assert not getattr(_compiled(f), "on_device", False)
    np.testing.assert_array_equal(f(np.zeros(2)), [1.0, 1.0])


def test_profile_times_each_kernel(gpu: str) -> None:
    """profile=True on the GPU: the report's GPU kernels section lists each kernel with
    its launches and the ops it computes (CUDA events on a GPU)."""
    import io

    x = T.matrix("x")
    with config.change_flags(profile_memory=True):
        f = arignote.function([x], (T.exp(x) * 2).sum(axis=1), profile=True, name="prof")
        for _ in range(3):
            f(np.ones((5, 7)))
        out = io.StringIO()
        f.profile.summary(file=out)
    text = out.getvalue()
    assert "GPU kernels" in text and "in 3 launches" in text, text
    assert "Sum{axis=(1,)} at test_gpu_functions.py" in text
    assert "Peak GPU memory in use" in text


def test_debugmode_checks_the_gpu_against_the_interpreter(gpu: str) -> None:
    x = T.vector("x")
    f = arignote.function([x], T.tanh(x) * 3 + x.sum(), mode="DebugMode")
    before = cuda.launches()
    got = f(np.linspace(-2, 2, 9))
    assert cuda.launches() > before  # the GPU function ran, and matched the interpreter
    want = np.tanh(np.linspace(-2, 2, 9)) * 3 + np.linspace(-2, 2, 9).sum()
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_transfer_targets_choose_where_outputs_are(gpu: str) -> None:
    """Theano's idiom: `out.transfer('gpu')` stays on the device, `transfer('cpu')` and
    plain outputs come back as NumPy arrays."""
    x = T.vector("x")
    f = arignote.function([x], [(x * 2).transfer("gpu"), (x + 1).transfer("cpu"), x - 1])
    kept, host, plain = f(np.arange(3.0))
    assert cuda.is_device_array(kept) and type(host) is np.ndarray and type(plain) is np.ndarray
    np.testing.assert_array_equal(kept.get(), [0.0, 2.0, 4.0])


def test_warn_transfers_names_each_copy(gpu: str) -> None:
    from arignote.compile.function import TransferWarning

    x = T.vector("x")
    acc = arignote.shared(np.zeros(3), name="acc")
    f = arignote.function([x], acc * 2, updates={acc: acc + x})
    with config.change_flags(warn_transfers=True):
        with pytest.warns(TransferWarning) as caught:
            f(np.ones(3))
    messages = [str(w.message) for w in caught]
    assert any("input x" in m and "from the host to the GPU" in m for m in messages), messages
    assert any("shared value" in m for m in messages), messages
    assert any("output 0" in m and "from the GPU to the host" in m for m in messages), messages
    with config.change_flags(warn_transfers=True), warnings.catch_warnings():
        warnings.simplefilter("error")
        g = arignote.function([x], x * 3, return_device=True)
        g(cuda.to_device(np.ones(3)))  # nothing copied: nothing said


def test_mrg_random_streams_draw_in_kernels(gpu: str) -> None:
    """MRG31k3p on the GPU: Theano's stream, the same numbers as on the CPU."""
    from arignote.sandbox.rng_mrg import MRG_RandomStreams

    f = arignote.function([], MRG_RandomStreams(seed=234).uniform((3, 4)))
    drawn = f()
    with config.change_flags(device="cpu"):
        want = arignote.function([], MRG_RandomStreams(seed=234).uniform((3, 4)))()
    assert getattr(_compiled(f), "on_device", False)
    np.testing.assert_array_equal(drawn, want)


def test_convolution_and_pooling_with_their_gradients(gpu: str) -> None:
    """conv2d (im2col + GpuGemm; the input gradient's col2im adds channel by channel) and
    max pooling, with their gradients, agree with the CPU target."""
    from arignote.tensor.nnet import conv2d
    from arignote.tensor.signal.pool import pool_2d

    rng = np.random.default_rng(5)
    images = rng.standard_normal((2, 3, 7, 7))
    filters = rng.standard_normal((4, 3, 3, 3))

    def build() -> arignote.compile.function.Function:
        x, w = T.tensor4("x"), T.tensor4("w")
        y = pool_2d(conv2d(x, w, border_mode="half"), (2, 2), ignore_border=True)
        cost = (y**2).sum()
        return arignote.function([x, w], [y, *T.grad(cost, [x, w])])

    on_gpu = build()
    assert getattr(_compiled(on_gpu), "on_device", False)
    got = on_gpu(images, filters)
    with config.change_flags(device="cpu"):
        want = build()(images, filters)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-10)
