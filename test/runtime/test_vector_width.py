"""512-bit vectors: every function arignote compiles carries `"prefer-vector-width"="512"`
(`arignote.lowering.llvm_attributes`), so LLVM vectorizes with `<16 x float>` where the
host has AVX-512 and with the widest legal vectors elsewhere; the attribute is part of the
compile cache key."""

from __future__ import annotations

import re

import numpy as np

import arignote
import arignote.tensor as T
from arignote.lowering.llvm_attributes import PREFER_VECTOR_WIDTH, attributes_text
from arignote.runtime.cpu import host_cpu, target_fingerprint


def test_attribute_on_every_defined_function_and_in_the_cache_key() -> None:
    x, y = T.fvector("x"), T.fvector("y")
    f = arignote.function([x, y], T.tanh(x * y + T.exp(-x)) * 0.5 + 1 / (1 + T.exp(-y)))
    text = f.dump_ir("llvm")
    defines = [line for line in text.splitlines() if line.startswith("define ")]
    assert len(defines) >= 2  # @fn_main__shape, @fn_main (and its noalias body)
    assert all(line.endswith(attributes_text()) for line in defines)
    assert '"prefer-vector-width"="512"' == attributes_text() and PREFER_VECTOR_WIDTH == 512
    assert attributes_text() in target_fingerprint()


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
