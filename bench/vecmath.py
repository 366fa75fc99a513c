"""Codegen check, the elemwise expression as ONE loop: inline math against libm calls.

Workload 2's expression `tanh(x*y + exp(-x)) * 0.5 + 1/(1+exp(-y))` written as a single
`scf.for` over memrefs (the loop an elementwise fusion pass produces), lowered with the
LLVM lowering twice: with the default inline, vectorisable `exp`/`tanh`
(`convert-math-to-llvm`) and with `convert-math-to-llvm{libm=true}` (scalar libm calls),
and compared with NumPy. It isolates the code generation from graph-level fusion.

    python -m bench vecmath [--size 10000000] [--repeats 7]
"""

from __future__ import annotations

import ctypes
import sys

if __package__ in (None, ""):
    sys.path.insert(0, __file__.rsplit("/", 2)[0])

import numpy as np

from bench.common import Row, finish, median_seconds, parser, report
from bench.elemwise import numpy_fn

LOOP = """
func.func @f(%a: memref<?xf32> {llvm.noalias}, %b: memref<?xf32> {llvm.noalias},
             %out: memref<?xf32> {llvm.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %n = memref.dim %a, %c0 : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i] : memref<?xf32>
    %y = memref.load %b[%i] : memref<?xf32>
    %xy = arith.mulf %x, %y : f32
    %nx = arith.negf %x : f32
    %ex = math.exp %nx : f32
    %s = arith.addf %xy, %ex : f32
    %t = math.tanh %s : f32
    %th = arith.mulf %t, %half : f32
    %ny = arith.negf %y : f32
    %ey = math.exp %ny : f32
    %d = arith.addf %one, %ey : f32
    %r = arith.divf %one, %d : f32
    %o = arith.addf %th, %r : f32
    memref.store %o, %out[%i] : memref<?xf32>
  }
  return
}
"""


def compile_loop(libm: bool):
    """The JIT-compiled loop as a Python callable `(x, y) -> out`, and its module."""
    from xdsl.context import Context
    from xdsl.dialects.arith import Arith
    from xdsl.dialects.builtin import Builtin
    from xdsl.dialects.func import Func
    from xdsl.dialects.math import Math
    from xdsl.dialects.memref import MemRef
    from xdsl.dialects.scf import Scf
    from xdsl.parser import Parser
    from xdsl.passes import PassPipeline

    from arignote.lowering.pipelines import LLVM_LOWERING
    from arignote.lowering.registry import get_all_passes
    from arignote.runtime.cpu import NativeModule, memref_descriptor

    ctx = Context()
    for dialect in (Builtin, Func, Arith, Math, MemRef, Scf):
        ctx.load_dialect(dialect)
    module = Parser(ctx, LOOP).parse_module()
    lowering = LLVM_LOWERING
    if libm:
        lowering = lowering.replace("convert-math-to-llvm", "convert-math-to-llvm{libm=true}")
    PassPipeline.parse_spec(get_all_passes(), lowering).apply(ctx, module)
    native = NativeModule(module)
    signature = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
    fn = signature(native.address("f"))

    def call(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        out = np.empty_like(x)
        dx, dy, do = memref_descriptor(x), memref_descriptor(y), memref_descriptor(out)
        fn(ctypes.byref(dx), ctypes.byref(dy), ctypes.byref(do))
        return out

    return call, native


def run(argv=None) -> bool:
    p = parser(__doc__)
    p.add_argument("--size", type=int, default=10_000_000)
    args = p.parse_args(argv)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(args.size).astype(np.float32)
    y = rng.standard_normal(args.size).astype(np.float32)
    rows = [
        Row(
            "numpy",
            median_seconds(lambda: numpy_fn(x, y), args.repeats, args.number),
            (numpy_fn(x, y),),
            "temporaries",
        )
    ]
    for libm, notes in ((False, "inline exp/tanh, vectorised"), (True, "libm expf/tanhf calls")):
        call, native = compile_loop(libm)
        width = "<16 x float>" if "<16 x float>" in native.optimized_llvm_ir else "<8 x float>"
        vectorised = width in native.optimized_llvm_ir
        name = "arignote loop, libm" if libm else "arignote loop, inline"
        rows.append(
            Row(
                name,
                median_seconds(lambda c=call: c(x, y), args.repeats, args.number),
                (call(x, y),),
                notes + (f" ({width})" if vectorised else " (scalar)"),
            )
        )
    title = f"vecmath: one fused loop of the elemwise expression, float32[{args.size}], per call"
    return report(title, rows, tol=1e-5)


def main(argv=None) -> None:
    finish(run(argv))


if __name__ == "__main__":
    main()
