"""`python -m bench gpu`: workloads 1-4 of docs/benchmarks.md on a CUDA GPU.

arignote with `config.device=cuda` (data on the device: shared variables and device
arrays as inputs, as a Theano user keeps a data set in a shared variable) against CuPy
(the NumPy code on the GPU), JAX (`jit`) and PyTorch (CUDA, eager), all in one run on
one GPU; per workload, each system's median time per call (every call ends with the
device synchronized) and its ratio to the fastest peer, and the largest difference of
its results from NumPy's on the CPU. The elementwise workload also reports bandwidth
(12 bytes per element: two reads, one write) as a fraction of a device-to-device copy's.
A peer that is not installed is skipped.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from bench import elemwise, logreg, mlp, rnn
from bench.common import optional_import, parser


def _median(fn: Callable[[], object], sync: Callable[[], None], repeats: int) -> float:
    fn()
    sync()
    start = time.perf_counter()
    fn()
    sync()
    once = max(time.perf_counter() - start, 1e-6)
    number = max(1, int(0.05 / once))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        sync()
        times.append((time.perf_counter() - start) / number)
    return statistics.median(times)


def _kernel_time(fn: Callable[[], object], repeats: int) -> tuple[float, list[tuple[int, float]]]:
    """Median over `repeats` calls of arignote's GPU time per call (the sum of its
    kernels' CUDA-event times), and the (kernel, seconds) of the last call's launches."""
    from arignote.runtime import cuda

    device = cuda.require()
    times, timed = [], []
    for _ in range(repeats):
        device.start_profile()
        fn()
        timed, _ = device.stop_profile()
        times.append(sum(seconds for _, seconds in timed))
    return statistics.median(times), timed


def _report_kernels(what: str, fn: Callable[[], object], repeats: int, gpu: Any = None) -> float:
    """Prints arignote's kernel launches and GPU time per call, and with `gpu` (the
    `GpuFunction`) its costliest kernels."""
    gpu_time, timed = _kernel_time(fn, repeats)
    print(
        f"\n  arignote's {what}: {len(timed)} kernel launches, {gpu_time * 1e6:.1f} us of GPU time"
    )
    if gpu is not None:
        per: dict[int, list[float]] = {}
        for handle, seconds in timed:
            per.setdefault(handle, []).append(seconds)
        costly = sorted(per.items(), key=lambda item: -sum(item[1]))[:6]
        for handle, seconds in costly:
            name, source = gpu._kernel_of.get(handle, (hex(handle), "?"))
            print(f"    {sum(seconds) * 1e6:8.1f} us in {len(seconds):4d}  {name}  {source[:90]}")
    return gpu_time


def _diff(got: Sequence[Any], want: Sequence[np.ndarray]) -> float:
    return max(
        float(np.max(np.abs(np.asarray(g, np.float64) - w))) for g, w in zip(got, want, strict=True)
    )


class Peers:
    def __init__(self) -> None:
        self.cupy = optional_import("cupy")
        self.torch = optional_import("torch")
        if self.torch is not None and not self.torch.cuda.is_available():
            self.torch = None
        self.jax = optional_import("jax")
        if self.jax is not None and not any(d.platform == "gpu" for d in self.jax.devices()):
            self.jax = None

    def sync_cupy(self) -> None:
        self.cupy.cuda.Device().synchronize()

    def sync_torch(self) -> None:
        self.torch.cuda.synchronize()


def _bandwidth(rate: float, copy_rate: float) -> str:
    return f"{rate / 1e9:.0f} GB/s, {rate / copy_rate:.0%} of the copy's"


def _nothing() -> None:
    pass


def _print(title: str, rows: list[tuple[str, float, float, str]]) -> None:
    best = min((s for n, s, _, _ in rows if not n.startswith("arignote")), default=None)
    print(f"\n{title}")
    for name, seconds, diff, notes in rows:
        ratio = f"{seconds / best:6.2f}x best peer" if best else ""
        print(f"  {name:28s} {seconds * 1e6:10.1f} us  {ratio}  max|diff| {diff:.1e}  {notes}")


def bench_logreg(p: Peers, repeats: int) -> None:
    import arignote
    import arignote.tensor as T
    from arignote.runtime.cuda import to_device

    x, y, w0, b0 = logreg.init(400, 784)
    w_ref, b_ref, _, _ = logreg.numpy_step(x, y, w0, b0)
    lr, l2 = np.float32(logreg.LEARNING_RATE), np.float32(logreg.L2)
    rows = []
    xs, ys = T.fmatrix("x"), T.fvector("y")
    w = arignote.shared(w0.copy(), name="w")
    b = arignote.shared(np.float32(b0), name="b")
    p_1 = 1 / (1 + T.exp(-T.dot(xs, w) - b))
    xent = -ys * T.log(p_1) - (1 - ys) * T.log(1 - p_1)
    gw, gb = arignote.grad(xent.mean() + logreg.L2 * (w**2).sum(), [w, b])
    train = arignote.function(
        [xs, ys], [p_1 > 0.5, xent], updates=[(w, w - lr * gw), (b, b - lr * gb)]
    )
    train(x, y)
    got = [w.get_value(), b.get_value()]
    dx, dy = to_device(x), to_device(y)
    w.set_value(w0)
    b.set_value(np.float32(b0))
    rows.append(
        (
            "arignote (x, y on device)",
            _median(lambda: train(dx, dy), _nothing, repeats),
            _diff(got, [w_ref, b_ref]),
            "train(x, y): outputs and updates",
        )
    )
    _report_kernels("step", lambda: train(dx, dy), repeats, train._compiled.run.gpu)
    rows.append(
        (
            "arignote (NumPy x, y)",
            _median(lambda: train(x, y), _nothing, repeats),
            _diff(got, [w_ref, b_ref]),
            "copies x, y to the device each call",
        )
    )
    if p.cupy is not None:
        cp = p.cupy
        cx, cy, cw, cb = cp.asarray(x), cp.asarray(y), cp.asarray(w0), cp.float32(b0)

        def cupy_step() -> tuple[Any, Any]:
            z = cx.dot(cw) + cb
            p1 = 1 / (1 + cp.exp(-z))
            residual = (p1 - cy) / np.float32(len(y))
            return cw - lr * (residual.dot(cx) + 2 * l2 * cw), cb - lr * residual.sum()

        out = cupy_step()
        rows.append(
            (
                "cupy",
                _median(cupy_step, p.sync_cupy, repeats),
                _diff([o.get() for o in out], [w_ref, b_ref]),
                "hand-written gradient",
            )
        )
    if p.torch is not None:
        torch = p.torch
        tx, ty = torch.tensor(x, device="cuda"), torch.tensor(y, device="cuda")
        tw = torch.tensor(w0, device="cuda", requires_grad=True)
        tb = torch.tensor(b0, device="cuda", requires_grad=True)

        def torch_step() -> list[Any]:
            z = tx @ tw + tb
            loss = (
                ty * torch.nn.functional.softplus(-z) + (1 - ty) * torch.nn.functional.softplus(z)
            ).mean()
            loss = loss + l2 * (tw**2).sum()
            gw_, gb_ = torch.autograd.grad(loss, [tw, tb])
            return [tw - lr * gw_, tb - lr * gb_]

        out = torch_step()
        rows.append(
            (
                "torch (CUDA)",
                _median(torch_step, p.sync_torch, repeats),
                _diff([o.detach().cpu().numpy() for o in out], [w_ref, b_ref]),
                "autograd",
            )
        )
    if p.jax is not None:
        jax, jnp = p.jax, p.jax.numpy

        def loss(wb: Any, x: Any, y: Any) -> Any:
            z = x @ wb[0] + wb[1]
            return (y * jax.nn.softplus(-z) + (1 - y) * jax.nn.softplus(z)).mean() + l2 * (
                wb[0] ** 2
            ).sum()

        @jax.jit
        def jax_step(wb: Any, x: Any, y: Any) -> Any:
            g = jax.grad(loss)(wb, x, y)
            return (wb[0] - lr * g[0], wb[1] - lr * g[1])

        jx, jy, jwb = jnp.asarray(x), jnp.asarray(y), (jnp.asarray(w0), jnp.float32(b0))
        out = jax_step(jwb, jx, jy)
        rows.append(
            (
                "jax (jit)",
                _median(
                    lambda: jax_step(jwb, jx, jy).__getitem__(0).block_until_ready(),
                    _nothing,
                    repeats,
                ),
                _diff([np.asarray(o) for o in out], [w_ref, b_ref]),
                "jit(grad)",
            )
        )
    _print("1 logreg: N=400, feats=784, float32, one step", rows)


def bench_elemwise(p: Peers, repeats: int, n: int) -> None:
    import arignote
    import arignote.tensor as T
    from arignote.runtime.cuda import to_device

    rng = np.random.default_rng(0)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    want = [elemwise.numpy_fn(x, y)]
    xs, ys = T.fvector("x"), T.fvector("y")
    f = arignote.function(
        [xs, ys], T.tanh(xs * ys + T.exp(-xs)) * 0.5 + 1 / (1 + T.exp(-ys)), return_device=True
    )
    dx, dy = to_device(x), to_device(y)
    rows = [
        (
            "arignote",
            _median(lambda: f(dx, dy), _nothing, repeats),
            _diff([f(dx, dy).get()], want),
            "",
        )
    ]
    kernel = _report_kernels("elementwise call", lambda: f(dx, dy), repeats)
    rows.append(("arignote kernel only", kernel, rows[0][2], "its kernel's CUDA-event time"))
    copy_seconds = None
    if p.cupy is not None:
        cp = p.cupy
        cx, cy = cp.asarray(x), cp.asarray(y)
        out = cp.empty_like(cx)

        def cupy_fn() -> Any:
            return cp.tanh(cx * cy + cp.exp(-cx)) * 0.5 + 1 / (1 + cp.exp(-cy))

        def elementwise(a: Any, b: Any) -> Any:
            return cp.tanh(a * b + cp.exp(-a)) * 0.5 + 1 / (1 + cp.exp(-b))

        fused = cp.fuse(elementwise)
        rows.append(
            (
                "cupy",
                _median(cupy_fn, p.sync_cupy, repeats),
                _diff([cupy_fn().get()], want),
                "eager",
            )
        )
        rows.append(
            (
                "cupy.fuse",
                _median(lambda: fused(cx, cy), p.sync_cupy, repeats),
                _diff([fused(cx, cy).get()], want),
                "one fused kernel",
            )
        )
        copy_seconds = _median(lambda: out.__setitem__(Ellipsis, cx), p.sync_cupy, repeats)
    if p.torch is not None:
        torch = p.torch
        tx, ty = torch.tensor(x, device="cuda"), torch.tensor(y, device="cuda")

        def torch_fn() -> Any:
            return torch.tanh(tx * ty + torch.exp(-tx)) * 0.5 + 1 / (1 + torch.exp(-ty))

        rows.append(
            (
                "torch (CUDA)",
                _median(torch_fn, p.sync_torch, repeats),
                _diff([torch_fn().cpu().numpy()], want),
                "eager",
            )
        )
    if p.jax is not None:
        jax, jnp = p.jax, p.jax.numpy
        jf = jax.jit(lambda a, b: jnp.tanh(a * b + jnp.exp(-a)) * 0.5 + 1 / (1 + jnp.exp(-b)))
        jx, jy = jnp.asarray(x), jnp.asarray(y)
        rows.append(
            (
                "jax (jit)",
                _median(lambda: jf(jx, jy).block_until_ready(), _nothing, repeats),
                _diff([np.asarray(jf(jx, jy))], want),
                "",
            )
        )
    if copy_seconds is not None:
        copy_rate = 8 * n / copy_seconds  # bytes per second, read + write
        rows = [
            (name, s, d, f"{notes} {_bandwidth(12 * n / s, copy_rate)}")
            for name, s, d, notes in rows
        ]
        copy = f"{copy_seconds * 1e6:.1f} us, {copy_rate / 1e9:.0f} GB/s"
        print(f"\n  device-to-device copy of {n} float32: {copy}")
    _print(f"2 elemwise: {n} float32", rows)


def bench_mlp(p: Peers, repeats: int) -> None:
    import arignote
    import arignote.tensor as T
    from arignote.runtime.cuda import to_device

    x, y, params = mlp.init(128, np.float32)
    want, _ = mlp.numpy_step(x, y, *params)
    xs, ys = T.fmatrix("x"), T.fmatrix("y")
    shared = [arignote.shared(q.copy()) for q in params]
    w1, b1, w2, b2 = shared
    h = T.tanh(T.dot(xs, w1) + b1)
    loss = -(ys * T.nnet.logsoftmax(T.dot(h, w2) + b2)).sum(axis=1).mean()
    grads = arignote.grad(loss, shared)
    train = arignote.function(
        [xs, ys], loss, updates=[(q, q - mlp.LR * g) for q, g in zip(shared, grads, strict=True)]
    )
    train(x, y)
    got = [s.get_value() for s in shared]
    dx, dy = to_device(x), to_device(y)
    rows = [
        (
            "arignote (x, y on device)",
            _median(lambda: train(dx, dy), _nothing, repeats),
            _diff(got, want),
            "grad + SGD updates",
        )
    ]
    _report_kernels("step", lambda: train(dx, dy), repeats, train._compiled.run.gpu)
    if p.torch is not None:
        torch = p.torch
        tx, ty = torch.tensor(x, device="cuda"), torch.tensor(y, device="cuda")
        tp = [torch.tensor(q, device="cuda", requires_grad=True) for q in params]

        def torch_step() -> list[Any]:
            hh = torch.tanh(tx @ tp[0] + tp[1])
            loss_ = -(ty * torch.log_softmax(hh @ tp[2] + tp[3], dim=1)).sum(dim=1).mean()
            return [q - mlp.LR * g for q, g in zip(tp, torch.autograd.grad(loss_, tp), strict=True)]

        out = torch_step()
        rows.append(
            (
                "torch (CUDA)",
                _median(torch_step, p.sync_torch, repeats),
                _diff([o.detach().cpu().numpy() for o in out], want),
                "autograd",
            )
        )
    if p.jax is not None:
        jax, jnp = p.jax, p.jax.numpy

        def jloss(ps: Any, x: Any, y: Any) -> Any:
            hh = jnp.tanh(x @ ps[0] + ps[1])
            return -(y * jax.nn.log_softmax(hh @ ps[2] + ps[3], axis=1)).sum(axis=1).mean()

        @jax.jit
        def jstep(ps: Any, x: Any, y: Any) -> Any:
            return [q - mlp.LR * g for q, g in zip(ps, jax.grad(jloss)(ps, x, y), strict=True)]

        jp, jx, jy = [jnp.asarray(q) for q in params], jnp.asarray(x), jnp.asarray(y)
        out = jstep(jp, jx, jy)
        rows.append(
            (
                "jax (jit)",
                _median(lambda: jstep(jp, jx, jy)[0].block_until_ready(), _nothing, repeats),
                _diff([np.asarray(o) for o in out], want),
                "jit(grad)",
            )
        )
    if p.cupy is not None:
        cp = p.cupy
        cx, cy, cps = cp.asarray(x), cp.asarray(y), [cp.asarray(q) for q in params]

        def cupy_step() -> list[Any]:
            return mlp.numpy_step(cx, cy, *cps)[0]

        out = cupy_step()
        rows.append(
            (
                "cupy",
                _median(cupy_step, p.sync_cupy, repeats),
                _diff([o.get() for o in out], want),
                "hand-written gradient",
            )
        )
    _print("3 mlp: 784-500-10, batch 128, float32, one SGD step", rows)


def bench_rnn(p: Peers, repeats: int) -> None:
    import arignote
    from arignote.runtime.cuda import to_device

    data = rnn.init(100, 32, 64, 128, np.float32)
    want = rnn.numpy_call(*data)
    inputs, hs = rnn.arignote_graph("float32")
    h_last = hs[-1]
    f = arignote.function(inputs, [h_last, *arignote.grad(h_last.sum(), inputs[2:])])
    got = f(*data)
    dev = [to_device(a) for a in data]
    rows = [
        (
            "arignote (inputs on device)",
            _median(lambda: f(*dev), _nothing, repeats),
            _diff(got, want),
            "scan + grad",
        )
    ]
    _report_kernels("call", lambda: f(*dev), repeats, f._compiled.run.gpu)
    if p.torch is not None:
        torch = p.torch
        tx, th0, tw, tu, tb = [torch.tensor(a, device="cuda") for a in data]
        for t in (tw, tu, tb):
            t.requires_grad_(True)

        def torch_call() -> list[Any]:
            h = th0
            for t in range(tx.shape[0]):
                h = torch.tanh(tx[t] @ tw + h @ tu + tb)
            return [h, *torch.autograd.grad(h.sum(), [tw, tu, tb])]

        out = torch_call()
        rows.append(
            (
                "torch (CUDA)",
                _median(torch_call, p.sync_torch, repeats),
                _diff([o.detach().cpu().numpy() for o in out], want),
                "python loop + autograd",
            )
        )
    if p.jax is not None:
        jax, jnp = p.jax, p.jax.numpy

        def last(ps: Any, x: Any, h0: Any) -> Any:
            w, u, b = ps
            h, _ = jax.lax.scan(lambda h, xt: (jnp.tanh(xt @ w + h @ u + b), None), h0, x)
            return h

        @jax.jit
        def jcall(ps: Any, x: Any, h0: Any) -> Any:
            h = last(ps, x, h0)
            return [h, *jax.grad(lambda q: last(q, x, h0).sum())(ps)]

        jx, jh0, *jp = [jnp.asarray(a) for a in data]
        out = jcall(jp, jx, jh0)
        rows.append(
            (
                "jax (jit)",
                _median(lambda: jcall(jp, jx, jh0)[0].block_until_ready(), _nothing, repeats),
                _diff([np.asarray(o) for o in out], want),
                "lax.scan",
            )
        )
    _print("4 rnn: scan, T=100, batch 32, in 64, hidden 128, float32, forward + grad", rows)


def bench_overhead(p: Peers, repeats: int, profile: bool) -> None:
    """Workload 6 on the GPU: `f(x) = x + 1` of a float32[10] on the device, per call."""
    import arignote
    import arignote.tensor as T
    from arignote.runtime.cuda import to_device

    x = np.arange(10, dtype=np.float32)
    xs = T.fvector("x")
    f = arignote.function([xs], xs + 1, return_device=True)
    dx = to_device(x)
    rows = [
        ("arignote", _median(lambda: f(dx), _nothing, repeats), _diff([f(dx).get()], [x + 1]), "")
    ]
    if p.cupy is not None:
        cx = p.cupy.asarray(x)
        rows.append(("cupy", _median(lambda: cx + 1, p.sync_cupy, repeats), 0.0, ""))
    if p.torch is not None:
        tx = p.torch.tensor(x, device="cuda")
        rows.append(("torch (CUDA)", _median(lambda: tx + 1, p.sync_torch, repeats), 0.0, ""))
    if p.jax is not None:
        jf = p.jax.jit(lambda a: a + 1)
        jx = p.jax.numpy.asarray(x)
        rows.append(
            ("jax (jit)", _median(lambda: jf(jx).block_until_ready(), _nothing, repeats), 0.0, "")
        )
    _print("6 overhead: x + 1, float32[10] on the device, per call (synchronized)", rows)
    if profile:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(2000):
            f(dx)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(12)


def run(argv: Sequence[str] | None = None) -> bool:
    args_parser = parser(__doc__ or "", repeats=5)
    args_parser.add_argument("--elemwise-size", type=int, default=10_000_000)
    args_parser.add_argument("--only", default="logreg,elemwise,mlp,rnn,overhead")
    args_parser.add_argument(
        "--python-profile", action="store_true", help="cProfile of the overhead workload's calls"
    )
    args = args_parser.parse_args(argv)
    import arignote
    from arignote.runtime import cuda

    arignote.config.device = "cuda"
    device = cuda.require("cuda")
    print(f"device: {device.name}, compute capability {device.capability}")
    peers = Peers()
    for name, module in (("cupy", peers.cupy), ("torch", peers.torch), ("jax", peers.jax)):
        print(f"  {name}: {getattr(module, '__version__', 'not available')}")
    only = args.only.split(",")
    if "logreg" in only:
        bench_logreg(peers, args.repeats)
    if "elemwise" in only:
        bench_elemwise(peers, args.repeats, args.elemwise_size)
    if "mlp" in only:
        bench_mlp(peers, args.repeats)
    if "rnn" in only:
        bench_rnn(peers, args.repeats)
    if "overhead" in only:
        bench_overhead(peers, args.repeats, args.python_profile)
    return True


def main(argv: Sequence[str] | None = None) -> None:
    sys.exit(0 if run(argv) else 1)
