"""Function attributes (`arignote.lowering.llvm.llvm_attributes`). 512-bit vectors: every
function arignote compiles carries `"prefer-vector-width"="512"`, so LLVM vectorizes with
`<16 x float>` where the host has AVX-512 and with the widest legal vectors elsewhere; the
attribute is part of the compile cache key. `alwaysinline` on the private functions
called from one place (`single_call_helpers`)."""

from __future__ import annotations

import ctypes
import re

import numpy as np
from xdsl.context import Context
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.dialects.func import Func
from xdsl.dialects.llvm import LLVM
from xdsl.parser import Parser
from xdsl.passes import PassPipeline

import arignote
import arignote.tensor as T
from arignote.lowering.llvm.llvm_attributes import PREFER_VECTOR_WIDTH, attributes_text
from arignote.lowering.pipelines import LLVM_LOWERING
from arignote.lowering.registry import get_all_passes
from arignote.runtime.cpu import (
    INLINE_SINGLE_CALL,
    NativeModule,
    host_cpu,
    internal_functions,
    llvm_ir_text,
    single_call_helpers,
    target_fingerprint,
)


def test_attribute_on_every_defined_function_and_in_the_cache_key() -> None:
    x, y = T.fvector("x"), T.fvector("y")
    f = arignote.function([x, y], T.tanh(x * y + T.exp(-x)) * 0.5 + 1 / (1 + T.exp(-y)))
    text = f.dump_ir("llvm")
    defines = [line for line in text.splitlines() if line.startswith("define ")]
    assert len(defines) >= 2  # @fn_main__shape, @fn_main (and its noalias body)
    assert all(attributes_text() in line for line in defines)
    # the noalias bodies (of functions and of parallel loops) are inlined, not the tasks
    inlined = {re.search(r'@"(\w+)"', line).group(1) for line in defines if "alwaysinline" in line}
    assert "fn_main__noalias" in inlined and "fn_main__par0__body" in inlined
    assert all(name.endswith(("__noalias", "__body")) for name in inlined)
    assert '"prefer-vector-width"="512"' == attributes_text() and PREFER_VECTOR_WIDTH == 512
    assert attributes_text() in target_fingerprint()
    assert f"inline-single-call={INLINE_SINGLE_CALL}" in target_fingerprint()


def _lower(text: str) -> ModuleOp:
    ctx = Context()
    for dialect in (Builtin, Func, Arith, LLVM):
        ctx.load_dialect(dialect)
    module = Parser(ctx, text).parse_module()
    PassPipeline.parse_spec(get_all_passes(), LLVM_LOWERING).apply(ctx, module)
    return module


def test_single_call_private_functions_are_inlined() -> None:
    """`single_call_helpers`: the private functions with a body that one call uses, not
    one called twice, nor a public one (the parallel loops' tasks, whose address is taken,
    are checked above)."""
    module = _lower(
        """
        func.func private @once(%a: i64) -> i64 {
          %r = arith.muli %a, %a : i64
          func.return %r : i64
        }
        func.func private @twice(%a: i64) -> i64 {
          %r = arith.addi %a, %a : i64
          func.return %r : i64
        }
        func.func @public(%a: i64) -> i64 {
          func.return %a : i64
        }
        func.func @f(%a: i64) -> i64 {
          %b = func.call @once(%a) : (i64) -> i64
          %c = func.call @twice(%b) : (i64) -> i64
          %d = func.call @twice(%c) : (i64) -> i64
          %e = func.call @public(%d) : (i64) -> i64
          func.return %e : i64
        }
        """
    )
    assert internal_functions(module) == {"once", "twice"}
    assert single_call_helpers(module) == {"once"}
    text = llvm_ir_text(module)
    flagged = {
        re.search(r'@"(\w+)"', line).group(1)
        for line in text.splitlines()
        if line.startswith("define ") and "alwaysinline" in line
    }
    assert flagged == {"once"}
    native = NativeModule(module)
    assert not re.search(r"^define .*@once\(", native.optimized_llvm_ir, re.M)  # inlined
    f = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(native.address("f"))
    assert f(3) == 36


def test_vector_width_follows_the_host() -> None:
    x, y = T.fvector("x"), T.fvector("y")
    f = arignote.function([x, y], T.tanh(x * y + T.exp(-x)) * 0.5 + 1 / (1 + T.exp(-y)))
    optimized = f._compiled.run.native.native_module.optimized_llvm_ir
    widths = {int(n) for n in re.findall(r"<(\d+) x float>", optimized)}
    avx512 = "+avx512f" in host_cpu()[2].split(",")
    assert max(widths) == (16 if avx512 else 8 if "+avx" in host_cpu()[2] else 4)
    a = np.linspace(-3, 3, 37, dtype=np.float32)
    b = a[::-1].copy()
    expected = np.tanh(a * b + np.exp(-a)) * 0.5 + 1 / (1 + np.exp(-b))
    np.testing.assert_allclose(f(a, b), expected, rtol=2e-6, atol=1e-6)
