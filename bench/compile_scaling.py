"""Workload compile-scaling: cold compile time against graph size, arignote vs JAX and PyTensor.

Each case builds a training function (`grad` and SGD updates) and runs it once, in a new
Python process; the time from the graph build to the first result is the compile time
(the program's imports not counted, `numpy.random` among them; the modules each system
imports at first use during the build are), the median of `--repeats` processes:

- `mlp-N`: an MLP of N tanh layers of 64 units, softmax and cross-entropy (N = 2, 8,
  32, 64 by default, `--mlp`);
- `rnn-N`: a tanh RNN through `scan` whose step has N layers of 32 units, 10 steps
  (N = 1, 4, 16, `--rnn`);
- `lstm`: `examples/lstm.py`'s training function (arignote only; `--no-lstm`).

arignote runs cold (each process with a new, empty `compiledir`) and with a warm cache
(a `compiledir` a first process filled); JAX (`jit` of the step, `lax.scan` for the
RNN) and PyTensor when importable (`--no-peers`: arignote only). Each column after the
times is a ratio to arignote cold. The machine's load shows in the seconds, so compare
the columns of one run.

    python -m bench compile-scaling [--mlp 2,8,32,64] [--rnn 1,4,16] [--repeats 3]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, __file__.rsplit("/", 2)[0])

from bench.common import machine, optional_import, versions  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

PRELUDE = """
import sys, time, json
import numpy as np
KIND, SIZE = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(0)  # (imports numpy.random: the program's, not timed)
"""

ARIGNOTE = """
import arignote, arignote.tensor as T
import arignote.compile, arignote.gradient, arignote.runtime.cache
if KIND == "lstm":
    sys.path.insert(0, sys.argv[3])
    import lstm
t0 = time.perf_counter()
if KIND == "mlp":
    x, y = T.matrix("x"), T.ivector("y")
    h, params = x, []
    for i in range(SIZE):
        params += [arignote.shared((rng.standard_normal((64, 64)) * 0.1), name=f"W{i}"),
                   arignote.shared(np.zeros(64), name=f"b{i}")]
        h = T.tanh(T.dot(h, params[-2]) + params[-1])
    cost = -T.mean(T.log(T.nnet.softmax(h))[T.arange(y.shape[0]), y])
    args = (np.ones((8, 64)), np.zeros(8, "int32"))
elif KIND == "rnn":
    x = T.tensor3("x")
    ws = [arignote.shared(rng.standard_normal((32, 32)) * 0.1, name=f"W{i}")
          for i in range(SIZE)]
    params = ws
    def step(x_t, h, *ws):
        for w in ws:
            h = T.tanh(T.dot(h, w) + x_t)
        return h
    hs, _ = arignote.scan(step, sequences=x, outputs_info=T.zeros((x.shape[1], 32)),
                          non_sequences=ws)
    cost = hs[-1].sum()
    args = (np.ones((10, 8, 32)),)
else:
    train = lstm.build(rng, "cvm")[0]
    train(*lstm.batch(rng))
    params = None
if params is not None:
    grads = arignote.grad(cost, params)
    train = arignote.function([x, y] if KIND == "mlp" else [x], cost,
                              updates=[(p, p - 0.01 * g) for p, g in zip(params, grads)])
    train(*args)
seconds = time.perf_counter() - t0
from arignote.compile.codecache import stats
print(json.dumps({"seconds": seconds, "cache": dict(stats())}))
"""

JAX = """
import jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
t0 = time.perf_counter()
if KIND == "mlp":
    params = []
    for i in range(SIZE):
        params += [jnp.asarray(rng.standard_normal((64, 64)) * 0.1), jnp.zeros(64)]
    def loss(params, x, y):
        h = x
        for w, b in zip(params[::2], params[1::2]):
            h = jnp.tanh(h @ w + b)
        logp = jax.nn.log_softmax(h)
        return -jnp.mean(logp[jnp.arange(y.shape[0]), y])
    args = (jnp.ones((8, 64)), jnp.zeros(8, "int32"))
else:
    params = [jnp.asarray(rng.standard_normal((32, 32)) * 0.1) for i in range(SIZE)]
    def loss(params, x):
        def step(h, x_t):
            for w in params:
                h = jnp.tanh(h @ w + x_t)
            return h, h
        h, _ = jax.lax.scan(step, jnp.zeros((x.shape[1], 32)), x)
        return h.sum()
    args = (jnp.ones((10, 8, 32)),)
@jax.jit
def train(params, *args):
    c, g = jax.value_and_grad(loss)(params, *args)
    return c, [p - 0.01 * d for p, d in zip(params, g)]
c, params = train(params, *args)
jax.block_until_ready(params)
print(json.dumps({"seconds": time.perf_counter() - t0}))
"""

PYTENSOR = """
import pytensor, pytensor.tensor as pt
t0 = time.perf_counter()
if KIND == "mlp":
    x, y = pt.matrix("x"), pt.ivector("y")
    h, params = x, []
    for i in range(SIZE):
        params += [pytensor.shared(rng.standard_normal((64, 64)) * 0.1),
                   pytensor.shared(np.zeros(64))]
        h = pt.tanh(pt.dot(h, params[-2]) + params[-1])
    cost = -pt.mean(pt.log(pt.special.softmax(h, axis=-1))[pt.arange(y.shape[0]), y])
    ins, args = [x, y], (np.ones((8, 64)), np.zeros(8, "int32"))
else:
    x = pt.tensor3("x")
    params = [pytensor.shared(rng.standard_normal((32, 32)) * 0.1) for i in range(SIZE)]
    def step(x_t, h, *ws):
        for w in ws:
            h = pt.tanh(pt.dot(h, w) + x_t)
        return h
    hs, _ = pytensor.scan(step, sequences=x, outputs_info=pt.zeros((x.shape[1], 32)),
                          non_sequences=params)
    cost = hs[-1].sum()
    ins, args = [x], (np.ones((10, 8, 32)),)
grads = pytensor.grad(cost, params)
train = pytensor.function(ins, cost, updates=[(p, p - 0.01 * g) for p, g in zip(params, grads)])
train(*args)
print(json.dumps({"seconds": time.perf_counter() - t0}))
"""

CHILDREN = {"arignote": ARIGNOTE, "jax": JAX, "pytensor": PYTENSOR}


def child(system: str, kind: str, size: int, compiledir: str | None = None) -> dict:
    env = dict(os.environ)
    if system == "pytensor":
        env["PYTENSOR_FLAGS"] = f"compiledir={tempfile.mkdtemp(prefix='pytensor-bench-')}"
    if compiledir is not None:
        flags = env.get("ARIGNOTE_FLAGS", "")
        env["ARIGNOTE_FLAGS"] = ",".join(filter(None, [flags, f"compiledir={compiledir}"]))
    code = PRELUDE + CHILDREN[system]
    command = [sys.executable, "-c", code, kind, str(size), str(EXAMPLES)]
    out = subprocess.run(command, capture_output=True, text=True, check=True, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def arignote_seconds(kind: str, size: int, repeats: int, warm: bool) -> float:
    """Median of `repeats` processes: cold ones each with a new compiledir, warm ones
    sharing one that a first process filled."""
    runs = []
    with tempfile.TemporaryDirectory(prefix="arignote-bench-") as tmp:
        if warm:
            child("arignote", kind, size, tmp)
        for i in range(max(1, repeats)):
            runs.append(child("arignote", kind, size, tmp if warm else os.path.join(tmp, str(i))))
    if warm and any(r["cache"].get("miss") for r in runs):
        raise SystemExit(f"compile-scaling: a warm run missed the cache: {runs}")
    return statistics.median(r["seconds"] for r in runs)


def peer_seconds(system: str, kind: str, size: int, repeats: int) -> float:
    return statistics.median(child(system, kind, size)["seconds"] for _ in range(max(1, repeats)))


def _sizes(text: str) -> list[int]:
    return [int(s) for s in text.split(",") if s]


def cases(args) -> list[tuple[str, int]]:
    found = [("mlp", n) for n in _sizes(args.mlp)] + [("rnn", n) for n in _sizes(args.rnn)]
    return found if args.no_lstm else [*found, ("lstm", 0)]


def run(argv=None) -> bool:
    import argparse

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mlp", default="2,8,32,64", help="MLP depths (comma-separated)")
    p.add_argument("--rnn", default="1,4,16", help="layers of the RNN's step")
    p.add_argument("--no-lstm", action="store_true", help="leave out the LSTM example")
    p.add_argument("--repeats", type=int, default=3, help="processes per time (median)")
    p.add_argument("--no-peers", action="store_true", help="arignote only")
    args = p.parse_args(argv)
    peers = [] if args.no_peers else [s for s in ("jax", "pytensor") if optional_import(s)]
    print(
        f"# compile-scaling: build -> first result of a training step, new process, "
        f"median of {args.repeats}; ratios to arignote cold"
    )
    print(f"# machine: {machine()}")
    print(f"# versions: {versions()}")
    header = f"{'case':<10}  {'arignote cold':>13}  {'warm cache':>10}"
    header += "".join(f"  {peer:>10}  {'cold/' + peer:>14}" for peer in peers)
    print(header)
    for kind, size in cases(args):
        cold = arignote_seconds(kind, size, args.repeats, warm=False)
        warm = arignote_seconds(kind, size, args.repeats, warm=True)
        line = f"{kind + ('-' + str(size) if size else ''):<10}  {cold:>12.2f}s  {warm:>9.3f}s"
        for peer in peers:
            if kind == "lstm":
                line += f"  {'-':>10}  {'-':>14}"
                continue
            seconds = peer_seconds(peer, kind, size, args.repeats)
            line += f"  {seconds:>9.2f}s  {cold / seconds:>13.2f}x"
        print(line, flush=True)
    return True


def main(argv=None) -> None:
    run(argv)


if __name__ == "__main__":
    main()
