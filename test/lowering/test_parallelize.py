"""`parallelize` end to end: what the outlined parallel loops look like in the LLVM IR of a
compiled function, and loops that the pool would run in one part compiled serially."""

from __future__ import annotations

import re

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.compile import two_processes
from arignote.compile.mode import Mode
from arignote.configuration import change_flags
from arignote.runtime import threadpool

pytestmark = pytest.mark.skipif(not threadpool.available(), reason="no thread pool here")

MIN_SIZE = 1000


def _scaled(n: int):
    """`x * c` with `c` a constant of `n` elements: the result has the static shape (n,)."""
    x = T.fvector("x")
    c = np.arange(n, dtype=np.float32)
    with change_flags(openmp=True, openmp_elemwise_minsize=MIN_SIZE):
        f = arignote.function([x], x * T.constant(c))
    return f, c, x


def _llvm_ir(f) -> str:
    return f._compiled.run.native.native_module.llvm_ir


def _defined(ir: str) -> list[str]:
    return re.findall(r'^define .*?@"?([\w.]+)"?\(', ir, re.M)


@pytest.mark.parametrize("n", [300, 5000])
def test_static_loop_below_min_size_is_serial(n: int) -> None:
    f, c, x = _scaled(n)
    ir = _llvm_ir(f)
    # 300 elements (one unit each) are fewer than MIN_SIZE: the pool would run them in
    # one part, so no task is compiled; 5000 may split
    assert (threadpool.PARALLEL_FOR in ir) == (n >= MIN_SIZE)
    assert any("__par" in name for name in _defined(ir)) == (n >= MIN_SIZE)
    data = np.linspace(-2, 2, n, dtype=np.float32)
    reference = arignote.function([x], x * T.constant(c), mode=Mode(linker="py"))
    np.testing.assert_array_equal(f(data), data * c)
    np.testing.assert_array_equal(reference(data), data * c)


@pytest.mark.slow
def test_outlined_loop_is_a_task_and_a_noalias_body(monkeypatch) -> None:
    # compiled in one process: split in two (its glue is large: the constant's 5000
    # stores), the task would be the child's, external and named by the kernel cache
    monkeypatch.setattr(two_processes, "ENABLED", False)
    f, c, _ = _scaled(5000)
    ir = _llvm_ir(f)
    names = _defined(ir)
    tasks = [name for name in names if re.fullmatch(r"fn_main__par\d+", name)]
    assert len(tasks) == 1, names
    task = tasks[0]
    assert f"{task}__body" in names
    assert not any(name.endswith(("__task", "__noalias")) and "__par" in name for name in names)
    # the task (internal: called only through its address in this module): the pool's
    # ABI; it loads one context struct and calls the body
    header = re.search(rf'^define internal void @"{task}"\((.*?)\)', ir, re.M)
    assert header is not None and header.group(1).count("i64") == 3
    body = ir[ir.index(f'define internal void @"{task}"') :]
    body = body[: body.index("\n}")]
    assert body.count(" = load ") == 1 and f'call ccc void @"{task}__body"' in body
    # the body takes the data pointers of the captured memrefs (x, the constant, the
    # result) as noalias arguments, x's dynamic offset and stride as i64
    body_header = re.search(rf'^define internal void @"{task}__body"\((.*?)\)', ir, re.M)
    assert body_header is not None
    assert body_header.group(1).count("ptr noalias") == 3
    assert body_header.group(1).count("i64") == 5
    data = np.ones(5000, np.float32)
    np.testing.assert_array_equal(f(data), c)
