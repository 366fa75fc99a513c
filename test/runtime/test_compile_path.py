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


WARM_TRAINING_STEP = """
import sys
import numpy as np
import arignote, arignote.tensor as T
x, y = T.matrix("x"), T.ivector("y")
h, params = x, []
for i in range(2):  # compile-scaling's mlp-2
    params += [arignote.shared(np.full((4, 4), 0.1), name=f"W{i}"),
               arignote.shared(np.zeros(4), name=f"b{i}")]
    h = T.tanh(T.dot(h, params[-2]) + params[-1])
cost = -T.mean(T.log(T.nnet.softmax(h))[T.arange(y.shape[0]), y])
grads = arignote.grad(cost, params)
train = arignote.function([x, y], cost, updates=[(p, p - 0.1 * g) for p, g in zip(params, grads)])
train(np.ones((3, 4)), np.zeros(3, "int32"))
from arignote.compile.codecache import stats
print(sorted(m for m in sys.modules if m in PASS_MACHINERY), dict(stats()))
"""


def test_a_warm_training_step_imports_no_pass_machinery(tmp_path):
    """`grad` applies the `stabilize` patterns without the pass (`stable_forms`), and a
    function found in the compile cache runs no pass: an MLP's training step that is
    built, differentiated and loaded from a warm cache imports none of xDSL's pass
    machinery (`xdsl.passes` with its argument parser, `xdsl.transforms`: about 8 ms of
    compile-scaling's warm mlp-2, 50 ms). The first process compiles (and imports them),
    the second loads. (A rewrite that leaves a dead op imports them to erase it:
    `rewriting.is_trivially_dead`.) Neither imports `numpy.random` (20 ms at first use in
    NumPy 2), which `shared()` used to for its check for a `RandomState`."""
    env = {"ARIGNOTE_FLAGS": f"compiledir={tmp_path}", "PATH": ""}
    machinery = '("xdsl.passes", "xdsl.transforms", "xdsl.utils.arg_spec", "numpy.random")'
    script = f"PASS_MACHINERY = {machinery}" + WARM_TRAINING_STEP
    runs = [
        subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True, env=env
        )
        .stdout.strip()
        .splitlines()[-1]
        for _ in range(2)
    ]
    assert (
        runs[0]
        == "['xdsl.passes', 'xdsl.transforms', 'xdsl.utils.arg_spec'] {'miss': 1, 'store': 1}"
    )
    assert runs[1] == "[] {'hit': 1}"


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
