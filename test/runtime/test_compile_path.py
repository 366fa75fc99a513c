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
