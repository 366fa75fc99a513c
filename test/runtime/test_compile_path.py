"""The compile path stays lean: what compiling a function imports and runs."""

from __future__ import annotations

import subprocess
import sys

FOLDING_COMPILE = """
import sys
import numpy as np
import arignote, arignote.tensor as T
x = T.dvector("x")
f = arignote.function([x], x + T.exp(T.constant(np.float64(2.0))) * 3)  # folds exp(2)*3
assert np.allclose(f(np.ones(3)), 1 + np.exp(2.0) * 3)
print(sorted(m for m in sys.modules if m.startswith("xdsl.interpreters")))
"""


def test_constant_folding_does_not_import_xdsl_interpreters():
    """Constant folding runs the `ag` reference implementations only: xDSL's interpreter
    package (which imports every interpreter it has, RISC-V included: a third of a
    second) stays unimported in a native compile."""
    out = subprocess.run(
        [sys.executable, "-c", FOLDING_COMPILE],
        capture_output=True,
        text=True,
        check=True,
        env={"ARIGNOTE_FLAGS": "compile_cache=False", "PATH": ""},
    )
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_code_generation_runs_without_lsr_and_slp():
    """`LLVM_OPTIONS` and `TUNING` reach LLVM: code generation of a loop runs no LSR
    pass, optimisation the loop vectoriser and not the SLP one; both are part of the
    compile cache's target fingerprint."""
    import llvmlite.binding as llvm

    from arignote.runtime.cpu import LLVM_OPTIONS, TUNING, NativeModule, target_fingerprint
    from arignote.runtime.native import compile_function  # noqa: F401 (initialises the JIT)

    assert "--disable-lsr" in LLVM_OPTIONS
    assert all(option in target_fingerprint() for option in LLVM_OPTIONS)
    assert not TUNING["slp_vectorization"]
    assert "slp_vectorization=False" in target_fingerprint()
    from xdsl.parser import Parser

    from arignote.lowering.driver import apply_pipeline, make_context
    from arignote.lowering.pipelines import LLVM_LOWERING

    text = """
    func.func @total(%m: memref<?xf64>) -> f64 {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %zero = arith.constant 0.0 : f64
      %n = memref.dim %m, %c0 : memref<?xf64>
      %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
        %x = memref.load %m[%i] : memref<?xf64>
        %a = arith.addf %acc, %x : f64
        scf.yield %a : f64
      }
      func.return %s : f64
    }
    """
    module = Parser(make_context(), text).parse_module()
    apply_pipeline(make_context(), module, LLVM_LOWERING)
    llvm.set_time_passes(True)
    try:
        NativeModule(module)
        report = llvm.report_and_reset_timings()
    finally:
        llvm.set_time_passes(False)
    assert "X86 DAG->DAG Instruction Selection" in report  # the report covers codegen
    assert "Loop Strength Reduction" not in report
    assert "LoopVectorizePass" in report  # and the O3 pipeline (TUNING): no SLP
    assert "SLPVectorizerPass" not in report
