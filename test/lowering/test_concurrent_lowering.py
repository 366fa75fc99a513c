"""Two threads lowering at once (two `arignote.function` calls in two threads) each get
the LLVM IR a lowering alone gives: the conversion state (`convert-to-llvm`'s constant
pool, the classes it converts) and `op_builder`'s records are per thread."""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest
from xdsl.parser import Parser

import arignote
import arignote.tensor as T
from arignote.lowering.driver import lower_to_llvm, make_context
from arignote.lowering.pipelines import loops_lowering
from arignote.runtime.cpu import llvm_ir_text


def _optimized_logreg_step() -> str:
    x, y = T.fmatrix("x"), T.fvector("y")
    w = arignote.shared(np.zeros(7, np.float32), name="w")
    p = 1 / (1 + T.exp(-T.dot(x, w)))
    cost = (-y * T.log(p) - (1 - y) * T.log(1 - p)).mean() + 0.01 * (w**2).sum()
    f = arignote.function([x, y], [p > 0.5, cost], updates=[(w, w - 0.1 * T.grad(cost, w))])
    return f.dump_ir("optimized")


def _lowered(text: str) -> str:
    module = Parser(make_context(), text).parse_module()
    lowered = lower_to_llvm(module, loops_pipeline=loops_lowering(parallel_min_work=1000))
    return llvm_ir_text(lowered.module)


@pytest.mark.slow
def test_two_threads_lower_as_one_alone():
    text = _optimized_logreg_step()
    alone = _lowered(text)
    results: list[str] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(3):
                results.append(_lowered(text))
        except BaseException as e:  # reported by the assertion below
            errors.append(e)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as CPython can
    try:
        threads = [threading.Thread(target=work) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert errors == []
    assert len(results) == 6 and all(r == alone for r in results)
