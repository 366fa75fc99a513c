"""The native thread pool (`arignote.runtime.threadpool`) and the parallel loops built on it:
the pool's chunking, results of parallel code against serial code and the interpreter,
dispatch counts, concurrent callers, a forked child, the thread count and the flags."""

from __future__ import annotations

import ctypes
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.compile import codecache
from arignote.compile.mode import Mode
from arignote.configuration import change_flags
from arignote.runtime import threadpool

pytestmark = pytest.mark.skipif(not threadpool.available(), reason="no thread pool here")

_I64, _PTR = ir.IntType(64), ir.PointerType()


@pytest.fixture(scope="module")
def fill():
    """`fill(out, begin, end, min_trips, align, max_parts) -> parts`: a parallel loop
    whose task writes `out[i] = 2 * i + 1000000 * chunk` (native code calling the pool)."""
    threadpool.register_symbols()
    m = ir.Module()
    m.triple = llvm.get_process_triple()
    parallel_for = ir.Function(
        m, ir.FunctionType(_I64, [_PTR, _PTR, *[_I64] * 5]), threadpool.PARALLEL_FOR
    )
    task = ir.Function(m, ir.FunctionType(ir.VoidType(), [_I64, _I64, _I64, _PTR]), "task")
    begin, end, chunk, out = task.args
    entry, loop, done = (task.append_basic_block(n) for n in ("entry", "loop", "done"))
    b = ir.IRBuilder(entry)
    b.cbranch(b.icmp_signed("<", begin, end), loop, done)
    b.position_at_end(loop)
    i = b.phi(_I64)
    i.add_incoming(begin, entry)
    value = b.add(b.mul(i, ir.Constant(_I64, 2)), b.mul(chunk, ir.Constant(_I64, 1000000)))
    b.store(value, b.gep(out, [i], source_etype=_I64))
    following = b.add(i, ir.Constant(_I64, 1))
    i.add_incoming(following, loop)
    b.cbranch(b.icmp_signed("<", following, end), loop, done)
    b.position_at_end(done)
    b.ret_void()
    run = ir.Function(m, ir.FunctionType(_I64, [_PTR, *[_I64] * 5]), "run")
    b = ir.IRBuilder(run.append_basic_block())
    b.ret(b.call(parallel_for, [task, *run.args]))
    from arignote.runtime.cpu import host_target_machine

    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(str(m)), host_target_machine())
    engine.finalize_object()
    signature = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, *[ctypes.c_int64] * 5)
    function = signature(engine.get_function_address("run"))

    def call(out, begin, end, min_trips=0, align=1, max_parts=0):
        return function(out.ctypes.data, begin, end, min_trips, align, max_parts)

    call.engine = engine  # keeps the code alive
    return call


@pytest.mark.parametrize(
    ("n", "align", "max_parts"), [(1, 1, 0), (3, 1, 0), (1000, 64, 0), (1001, 16, 0), (999, 8, 2)]
)
def test_chunks_cover_the_range_once(fill, n: int, align: int, max_parts: int) -> None:
    out = np.full(n + 5, -1, np.int64)
    parts = fill(out, 2, n + 2, 0, align, max_parts)
    index = np.arange(2, n + 2)
    assert np.array_equal(out[2 : n + 2] % 1000000, 2 * index)
    assert (out[:2] == -1).all() and (out[n + 2 :] == -1).all()
    chunks = out[2 : n + 2] // 1000000
    assert np.array_equal(np.unique(chunks), np.arange(parts))  # chunk k's range, in order
    assert (np.diff(chunks) >= 0).all()
    assert parts <= threadpool.width() and (max_parts == 0 or parts <= max_parts)
    starts = [index[chunks == k][0] - 2 for k in range(1, parts)]
    assert all(s % align == 0 for s in starts)


def test_serial_below_min_trips_or_one_thread(fill) -> None:
    out = np.zeros(500, np.int64)
    before = threadpool.dispatches()
    assert fill(out, 0, 500, 501, 1) == 1
    assert np.array_equal(out, 2 * np.arange(500))
    threadpool.set_threads(1)
    try:
        assert threadpool.threads() == 1 and threadpool.width() == 1
        assert fill(out, 0, 500, 0, 1) == 1
    finally:
        threadpool.set_threads(threadpool.default_threads())
    assert threadpool.dispatches() == before
    if threadpool.threads() > 1:
        assert fill(out, 0, 500, 500, 1) > 1
        assert threadpool.dispatches() == before + 1
        assert threadpool.workers() == threadpool.threads() - 1


@pytest.mark.skipif(threadpool.default_threads() < 2, reason="one thread")
def test_static_serial_rule_matches_the_pool(fill) -> None:
    """`parallel_loops.statically_serial` (what ag-to-loops and parallelize inline as a
    serial loop) holds exactly when the pool runs the loop in one part."""
    from arignote.lowering.loops.parallel_loops import statically_serial

    out = np.zeros(300, np.int64)
    for n, min_trips, align, max_parts in (
        (200, 201, 1, 0),
        (200, 200, 1, 0),
        (64, 0, 64, 0),
        (65, 0, 64, 0),
        (200, 0, 1, 1),
        (200, 0, 1, 2),
        (0, 0, 1, 0),
    ):
        serial = statically_serial(n, min_trips, align, max_parts or None)
        assert (fill(out, 0, n, min_trips, align, max_parts) == 1) == serial, (n, min_trips)
    assert not statically_serial(None, 500, 64) and statically_serial(None, None, 1, 1)


def test_wait_policy_sets_the_spin(fresh_settings) -> None:
    fresh_settings.delenv("OMP_WAIT_POLICY", raising=False)
    assert threadpool.spin_count() == threadpool.SPIN
    for policy, spin in (("PASSIVE", 64), (" active", 1 << 15)):
        fresh_settings.setenv("OMP_WAIT_POLICY", policy)
        assert threadpool.spin_count() == spin
    fresh_settings.setenv("OMP_WAIT_POLICY", "other")
    with pytest.warns(threadpool.ThreadSettingWarning, match="OMP_WAIT_POLICY='other'"):
        assert threadpool.spin_count() == threadpool.SPIN


@pytest.fixture
def fresh_settings(monkeypatch: pytest.MonkeyPatch):
    """The thread settings read again from the environment (each value warns once per
    process: the parsers cache their answer), and restored after the test."""
    threadpool._threads_for.cache_clear()
    threadpool._spin_for.cache_clear()
    yield monkeypatch
    monkeypatch.undo()
    threadpool._threads_for.cache_clear()
    threadpool._spin_for.cache_clear()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("abc", "a positive integer, or a comma-separated list of them"),
        ("0", "a positive integer"),
        ("-3", "a positive integer"),
        ("1.5", "a positive integer"),
        ("2,x", "a comma-separated list of them"),
        ("4,", "a comma-separated list of them"),
        ("99999", f"at most {threadpool.MAX_THREADS} threads"),
    ],
)
def test_bad_omp_num_threads_warns(fresh_settings, value: str, expected: str) -> None:
    fresh_settings.setenv("OMP_NUM_THREADS", value)
    cores = min(threadpool.usable_cores(), threadpool.MAX_THREADS)
    used = threadpool.MAX_THREADS if value == "99999" else cores
    with pytest.warns(threadpool.ThreadSettingWarning) as caught:
        assert threadpool.default_threads() == used
    (warning,) = caught
    message = str(warning.message)
    assert message.startswith(f"OMP_NUM_THREADS={value!r}: expected ")
    assert expected in message and f"using {'' if value == '99999' else 'the '}{used}" in message
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert threadpool.default_threads() == used  # once per value


@pytest.mark.parametrize(("value", "count"), [("2,4", 2), (" 3 ", 3), ("1", 1), ("64", 64)])
def test_good_omp_num_threads_is_used_quietly(fresh_settings, value: str, count: int) -> None:
    fresh_settings.setenv("OMP_NUM_THREADS", value)  # a nested list: the first level's
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert threadpool.default_threads() == count
    fresh_settings.setenv("OMP_NUM_THREADS", "")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert threadpool.default_threads() == min(threadpool.usable_cores(), 64)


def test_bad_wait_policy_warns(fresh_settings) -> None:
    fresh_settings.setenv("OMP_WAIT_POLICY", "lazy")
    expected = "OMP_WAIT_POLICY='lazy': expected 'active' or 'passive'"
    with pytest.warns(threadpool.ThreadSettingWarning, match=expected):
        assert threadpool.spin_count() == threadpool.SPIN


def test_bad_thread_settings_in_a_new_process_warn_once_and_run() -> None:
    script = (
        "import warnings; warnings.simplefilter('always')\n"
        "import numpy as np, arignote, arignote.tensor as T\n"
        "from arignote.runtime import threadpool as tp\n"
        "x = T.vector('x')\n"
        "print(arignote.function([x], x * 2)(np.ones(2)).tolist(), tp.threads())\n"
    )
    env = dict(os.environ, OMP_NUM_THREADS="abc", OMP_WAIT_POLICY="sometimes")
    env.pop("ARIGNOTE_FLAGS", None)
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    cores = min(threadpool.usable_cores(), threadpool.MAX_THREADS)
    assert out.stdout.split("]")[1].strip() == str(cores)
    lines = [line for line in out.stderr.splitlines() if "ThreadSettingWarning" in line]
    assert len([line for line in lines if "OMP_NUM_THREADS='abc'" in line]) == 1, out.stderr
    assert len([line for line in lines if "OMP_WAIT_POLICY='sometimes'" in line]) == 1


@pytest.mark.parametrize(
    ("flag", "value", "expected"),
    [
        ("openmp", "maybe", "True, False"),
        ("openmp_elemwise_minsize", "-5", "an integer >= 0"),
        ("openmp_elemwise_minsize", "lots", "an integer >= 0"),
    ],
)
def test_bad_thread_flags_are_errors(flag: str, value: str, expected: str) -> None:
    with pytest.raises(ValueError, match=f"config.{flag}: invalid value {value!r}.*{expected}"):
        with change_flags({flag: value}):
            pass
    env = dict(os.environ, ARIGNOTE_FLAGS=f"{flag}={value}")
    out = subprocess.run(
        [sys.executable, "-c", "import arignote; arignote.config.openmp"],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode != 0
    assert f"ARIGNOTE_FLAGS: config.{flag}: invalid value {value!r}" in out.stderr


def test_openmp_without_a_pool_warns(monkeypatch: pytest.MonkeyPatch) -> None:
    from arignote.compile.mode import parallel_min_work

    monkeypatch.setattr(threadpool, "available", lambda: False)
    with change_flags(openmp=True):
        with pytest.warns(threadpool.ThreadSettingWarning, match="no thread pool"):
            assert parallel_min_work() == 0
    with change_flags(openmp=False), warnings.catch_warnings():
        warnings.simplefilter("error")
        assert parallel_min_work() == 0


def test_set_threads_checks_its_argument() -> None:
    for bad in (0, -1, threadpool.MAX_THREADS + 1, 2.0, True):
        with pytest.raises(ValueError, match="set_threads: count must be an integer"):
            threadpool.set_threads(bad)


# --- parallel loops in compiled functions -----------------------------------------------

SIZES = (1, 63, 64, 999, 1000, 1001, 4097)
MIN_SIZE = 1000
"""`openmp_elemwise_minsize` in these tests: small arrays cross it."""


def _expression():
    x, y = T.fvector("x"), T.fvector("y")
    return [x, y], T.tanh(x * y + T.exp(-x)) * 0.5 + 1 / (1 + T.exp(-y))


def _compile(inputs, outputs, openmp: bool, **kwargs):
    with change_flags(openmp=openmp, openmp_elemwise_minsize=MIN_SIZE):
        return arignote.function(inputs, outputs, **kwargs)


@pytest.mark.skipif(threadpool.default_threads() < 2, reason="one thread")
def test_elementwise_parallel_equals_serial_and_interpreter() -> None:
    inputs, z = _expression()
    parallel = _compile(inputs, z, True)
    serial = _compile(inputs, z, False)
    reference = arignote.function(inputs, z, mode=Mode(linker="py"))
    rng = np.random.default_rng(0)
    for n in SIZES:
        x, y = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
        before = threadpool.dispatches()
        got = parallel(x, y)
        # the region costs ~10 units per element: sizes from MIN_SIZE / 10 split
        assert (threadpool.dispatches() > before) == (n >= 256)
        assert np.array_equal(got, serial(x, y))
        np.testing.assert_allclose(got, reference(x, y), rtol=1e-6, atol=1e-6)


@pytest.mark.skipif(threadpool.default_threads() < 2, reason="one thread")
def test_single_elementwise_op_splits_from_min_size() -> None:
    x, y = T.fvector("x"), T.fvector("y")
    parallel, serial = _compile([x, y], x - y, True), _compile([x, y], x - y, False)
    rng = np.random.default_rng(4)
    for n in (999, 1000, 3001):
        a, b = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
        before = threadpool.dispatches()
        assert np.array_equal(parallel(a, b), serial(a, b))
        assert (threadpool.dispatches() > before) == (n >= MIN_SIZE)


@pytest.mark.skipif(threadpool.default_threads() < 2, reason="one thread")
def test_elementwise_matrix_splits_rows() -> None:
    a, b = T.fmatrix("a"), T.frow("b")
    z = T.exp(a) * b + a
    parallel = _compile([a, b], z, True)
    rng = np.random.default_rng(1)
    for rows, cols in ((3, 7), (9, 700), (1001, 5)):
        x = rng.standard_normal((rows, cols)).astype(np.float32)[:, ::-1]  # strided
        y = rng.standard_normal((1, cols)).astype(np.float32)
        expected = _compile([a, b], z, False)(x, y)
        before = threadpool.dispatches()
        assert np.array_equal(parallel(x, y), expected)
        assert (threadpool.dispatches() > before) == (rows * cols * 3 >= MIN_SIZE and rows > 1)


def _logreg(openmp: bool, feats: int):
    xs, ys = T.fmatrix("x"), T.fvector("y")
    w = arignote.shared(np.zeros(feats, np.float32), name="w")
    b = arignote.shared(np.float32(0.0), name="b")
    p = 1 / (1 + T.exp(-T.dot(xs, w) - b))
    xent = -ys * T.log(p) - (1 - ys) * T.log(1 - p)
    gw, gb = arignote.grad(xent.mean() + 0.01 * (w**2).sum(), [w, b])
    train = _compile(
        [xs, ys], [p > 0.5, xent], openmp, updates=[(w, w - 0.1 * gw), (b, b - 0.1 * gb)]
    )
    return train, w, b


@pytest.mark.skipif(threadpool.default_threads() < 2, reason="one thread")
def test_gemv_pair_rows_in_parallel() -> None:
    feats = 40
    (par, wp, bp), (ser, ws, bs) = _logreg(True, feats), _logreg(False, feats)
    rng = np.random.default_rng(3)
    for n in (17, 203, 64, 5):  # 2 * feats units per row: all but 5 rows split
        x = rng.standard_normal((n, feats)).astype(np.float32)
        y = rng.integers(0, 2, n).astype(np.float32)
        w0 = (rng.standard_normal(feats) * 0.1).astype(np.float32)
        for w, b in ((wp, bp), (ws, bs)):
            w.set_value(w0.copy())
            b.set_value(np.float32(0.5))
        before = threadpool.dispatches()
        for _ in range(3):
            got, expected = par(x, y), ser(x, y)
            assert np.array_equal(got[0], expected[0])
            np.testing.assert_allclose(got[1], expected[1], rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(wp.get_value(), ws.get_value(), rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(bp.get_value(), bs.get_value(), rtol=1e-5, atol=1e-6)
        assert (threadpool.dispatches() - before >= 3) == (n > 5)


@pytest.mark.skipif(threadpool.default_threads() < 2, reason="one thread")
def test_concurrent_callers_share_the_pool() -> None:
    inputs, z = _expression()
    f = _compile(inputs, z, True)
    rng = np.random.default_rng(2)
    data = [tuple(rng.standard_normal(5000).astype(np.float32) for _ in range(2)) for _ in range(4)]
    expected = [f(*d) for d in data]
    failures: list[int] = []

    def work(k: int) -> None:
        for _ in range(50):
            if not np.array_equal(f(*data[k]), expected[k]):
                failures.append(k)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


@pytest.mark.skipif(threadpool.default_threads() < 2, reason="one thread")
def test_forked_child_starts_its_own_workers() -> None:
    inputs, z = _expression()
    f = _compile(inputs, z, True)
    x = np.linspace(-3, 3, 5000, dtype=np.float32)
    expected = f(x, x)  # the parent's workers run
    assert threadpool.workers() >= 1
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            before = threadpool.dispatches()
            ok = np.array_equal(f(x, x), expected)
            code = 0 if ok and threadpool.dispatches() == before + 1 else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert np.array_equal(f(x, x), expected)


def test_thread_count_and_openmp_default_follow_omp_num_threads() -> None:
    script = (
        "import arignote; from arignote.runtime import threadpool as tp; "
        "print(arignote.config.openmp, tp.threads(), tp.width())"
    )
    results = {}
    for value in ("1", "3"):
        env = dict(os.environ, OMP_NUM_THREADS=value)
        env.pop("ARIGNOTE_FLAGS", None)
        out = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
        )
        results[value] = out.stdout.split()
    assert results["1"] == ["False", "1", "1"]
    assert results["3"] == ["True", "3", str(3 * threadpool.OVERSPLIT)]


@pytest.mark.parametrize(
    ("text", "cpus"),
    [
        ("200000 100000", 2),
        ("150000 100000", 2),
        ("50000 100000", 1),
        ("max 100000", None),
        ("-1 100000", None),
        ("", None),
        ("garbage", None),
        ("100 0", None),
    ],
)
def test_cgroup_quota_in_whole_cpus(text: str, cpus: int | None) -> None:
    assert threadpool._quota_of(text) == cpus


def test_cpu_quota_is_the_smallest_of_the_cgroup_and_its_ancestors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    files = {
        "/proc/self/cgroup": "0::/outer/inner",
        "/sys/fs/cgroup/cpu.max": "max 100000",
        "/sys/fs/cgroup/outer/cpu.max": "300000 100000",
        "/sys/fs/cgroup/outer/inner/cpu.max": "max 100000",
    }
    monkeypatch.setattr(threadpool, "_read", files.get)
    assert threadpool.cpu_quota() == 3
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(64)))
    assert threadpool.usable_cores() == 3  # not the host's 64 cores
    files["/sys/fs/cgroup/outer/cpu.max"] = "max 100000"
    assert threadpool.cpu_quota() is None and threadpool.usable_cores() == 64


def test_cgroup_v1_quota(monkeypatch: pytest.MonkeyPatch) -> None:
    files = {
        "/sys/fs/cgroup/cpu/cpu.cfs_quota_us": "100000",
        "/sys/fs/cgroup/cpu/cpu.cfs_period_us": "100000",
    }
    monkeypatch.setattr(threadpool, "_read", files.get)
    assert threadpool.cpu_quota() == 1
    files["/sys/fs/cgroup/cpu/cpu.cfs_quota_us"] = "-1"
    assert threadpool.cpu_quota() is None


def test_blas_threads_follow_the_usable_cores() -> None:
    """Without a thread count from the user, arignote's OpenBLAS runs on at most the cores
    the process may use; a count the user set is OpenBLAS's own business."""
    script = (
        "import ctypes, sys; from arignote.runtime import blas, threadpool as tp; "
        "tp.cpu_quota = lambda: 1; blas.load_blas(); "
        "print(ctypes.CDLL(blas.blas_library_path()).scipy_openblas_get_num_threads())"
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("NUM_THREADS")}
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["1"]
    out = subprocess.run(
        [sys.executable, "-c", script],
        env=dict(env, OPENBLAS_NUM_THREADS="2"),
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.split() == ["2"]


_IDLE_BLAS = """
import ctypes, os, sys, time
import numpy as np
from arignote.runtime import blas
blas.load_blas()
leaked = os.environ.get("OPENBLAS_THREAD_TIMEOUT")
lib = ctypes.CDLL(blas.blas_library_path())
n = 512
a, b, c = (np.ones((n, n)) for _ in range(3))
p = lambda x: x.ctypes.data_as(ctypes.c_void_p)
d = ctypes.c_double
lib.scipy_cblas_dgemm(101, 111, 111, n, n, n, d(1.0), p(a), n, p(b), n, d(0.0), p(c), n)
assert c[0, 0] == n
time.sleep(0.01)
cpu, wall = time.process_time(), time.perf_counter()
time.sleep(0.2)  # OpenBLAS's workers, idle: spinning or asleep
print(leaked, (time.process_time() - cpu) / (time.perf_counter() - wall))
"""


@pytest.mark.skipif(threadpool.usable_cores() < 2, reason="OpenBLAS runs one thread")
def test_blas_workers_sleep_soon_after_a_call() -> None:
    """arignote's OpenBLAS loads with `OPENBLAS_THREAD_TIMEOUT` 20 (`blas.THREAD_TIMEOUT`):
    its workers spin about 0.4 ms after a threaded call, not OpenBLAS's 0.1 s, on a core
    the thread pool may want; the variable is set only while the library loads. Idle
    after a 512 x 512 `dgemm`, the process uses far less than a quarter of a core (with
    the default, a worker spun through most of the 0.2 s)."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    env = {k: v for k, v in env.items() if not k.endswith("NUM_THREADS")}
    out = subprocess.run(
        [sys.executable, "-c", _IDLE_BLAS], env=env, capture_output=True, text=True, check=True
    )
    leaked, share = out.stdout.split()
    assert leaked == "None"  # the process's environment is as it was
    assert float(share) < 0.25, out.stdout


@pytest.mark.skipif(
    not threadpool.available() or threadpool.usable_cores() < 2, reason="needs the pool, 2 CPUs"
)
def test_the_pool_state_after_a_parallel_loop() -> None:
    """`threadpool.state()` reads the pool's words: after a dispatched loop no loop runs
    and no chunk is left, the workers run, each dispatch published a generation."""
    script = """
import numpy as np
import arignote, arignote.tensor as T
from arignote.runtime import threadpool
threadpool.set_threads(2)
x = T.fvector("x")
f = arignote.function([x], T.exp(x) * 2 + 1)
before = threadpool.state()
for _ in range(3):
    f(np.linspace(-1, 1, 1 << 20, dtype=np.float32))
after = threadpool.state()
print(threadpool.dispatches(), after["gen"] - before["gen"], after["busy"], after["pending"],
      after["nworkers"], after["stop"], sorted(after))
"""
    env = dict(os.environ, ARIGNOTE_FLAGS="openmp=True,openmp_elemwise_minsize=1000")
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    words = "['beside_count', 'busy', 'gen', 'nworkers', 'pending', 'sleepers', 'stop', 'waiting']"
    assert out.stdout.strip() == f"3 3 0 0 1 0 {words}", out.stdout


@pytest.mark.skipif(
    not threadpool.available() or threadpool.usable_cores() < 2, reason="needs the pool, 2 CPUs"
)
def test_a_worker_beside_the_caller_moves_to_another_cpu() -> None:
    """A worker woken by the caller tends to be scheduled on the caller's CPU, where the
    two take turns while another CPU idles. Put there (both pinned to one CPU), the
    worker moves off it at its next job: its mask becomes the one it started with but
    the caller's CPU. In a new process: affinity is per process state.

    The worker is pinned once it sleeps in its loop: pinned before it read its starting
    mask (a loaded machine can leave a new thread unscheduled until then), it may only
    use that CPU. That race failed this test about one full run in four: the worker
    took every job beside the caller (`beside_count`) with no other CPU to go to."""
    script = """
import glob, os, sys, time
import numpy as np
import arignote, arignote.tensor as T
from arignote.runtime import threadpool
threadpool.set_threads(2)
x = T.fvector("x")
f = arignote.function([x], T.exp(x) * 2 + 1)
v = np.linspace(-1, 1, 1 << 20, dtype=np.float32)
before = {int(t) for t in os.listdir("/proc/self/task")}
f(v)
workers = sorted({int(t) for t in os.listdir("/proc/self/task")} - before)
assert threadpool.dispatches() >= 1 and len(workers) == 1, (threadpool.dispatches(), workers)
(worker,) = workers


def worker_state():  # for the failure message: running, or asleep and where
    try:
        with open(f"/proc/self/task/{worker}/stat") as stat:
            state = stat.read().rsplit(")", 1)[1].split()[0]
        with open(f"/proc/self/task/{worker}/wchan") as wchan:
            return f"{state} {wchan.read() or '-'}"
    except (OSError, IndexError) as error:
        return repr(error)


start = os.sched_getaffinity(0)  # the worker's may have moved already (its first job)
# The worker reads the mask it may move within when it starts. On a loaded machine it
# may not have run yet: pinned before that, {cpu} would be all it may use (as a worker
# pinned from outside stays pinned). Pin it once it is parked in its loop (asleep).
parked = time.monotonic() + 60  # (patience, not a timing)
while threadpool.state()["sleepers"] < 1 and time.monotonic() < parked:
    time.sleep(0.001)
cpu = min(start)
os.sched_setaffinity(0, {cpu})
os.sched_setaffinity(worker, {cpu})
deadline = time.monotonic() + 60  # (patience, not a timing: a loaded machine may keep
dispatched, calls = threadpool.dispatches(), 0  # the woken worker off the CPU for seconds)
while time.monotonic() < deadline:
    f(v)
    calls += 1
    if os.sched_getaffinity(worker) != {cpu}:
        break
    time.sleep(0.01)
print(sorted(os.sched_getaffinity(worker)) == sorted(start - {cpu}), sorted(start), cpu,
      sorted(os.sched_getaffinity(worker)), "calls", calls,
      "dispatched", threadpool.dispatches() - dispatched, "workers", threadpool.workers(),
      "tasks", sorted(int(t) for t in os.listdir("/proc/self/task")), "worker", worker,
      "state", worker_state(), "pool", threadpool.state())
"""
    env = dict(os.environ, ARIGNOTE_FLAGS="openmp=True,openmp_elemwise_minsize=1000")
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split()[:1] == ["True"], out.stdout
    assert "'beside_count': 0" not in out.stdout, out.stdout  # (the pool moved it)


def test_openmp_flags_change_the_cache_key() -> None:
    inputs, z = _expression()
    f = arignote.function(inputs, z)
    module, mode = f._compiled.module, Mode()
    keys = set()
    for flags in ({"openmp": False}, {"openmp": True}, {"openmp_elemwise_minsize": 5}):
        with change_flags({"compile_cache": True, "openmp": True, **flags}):
            keys.add(codecache.cache_key(mode, module, "fusion"))
    assert len(keys) == 3


def test_openmp_false_compiles_no_pool_call() -> None:
    inputs, z = _expression()
    serial = _compile(inputs, z, False)
    parallel = _compile(inputs, z, True)
    assert threadpool.PARALLEL_FOR not in serial._compiled.run.native.native_module.llvm_ir
    assert threadpool.PARALLEL_FOR in parallel._compiled.run.native.native_module.llvm_ir


_PREFETCH_PRELUDE = """
import os, sys, tempfile, threading
import numpy as np
import arignote, arignote.tensor as T
from arignote.compile.codecache import cache_directory
from arignote.configuration import change_flags
from arignote.runtime import threadpool as tp
arignote.config.compiledir = tempfile.mkdtemp()
made = []
compile_object = tp._compile_object
def counting(machine):
    made.append(threading.current_thread().name)
    return compile_object(machine)
tp._compile_object = counting
x = T.fvector("x")
a = np.linspace(-1, 1, 1000, dtype=np.float32)
"""

_PREFETCH_USED = """
with change_flags(openmp=False):  # serial loops: no pool, nothing prefetched
    serial = arignote.function([x], T.exp(x) * 2)
assert tp._prefetch is None and tp._POOL is None and made == []
f = arignote.function([x], T.exp(x) * 2)  # parallel loops: the pool compiles meanwhile
assert tp._prefetch is not None and tp._POOL is not None
np.testing.assert_allclose(f(a), serial(a), rtol=1e-6)
assert not tp._prefetch.thread.is_alive()
assert made == ["arignote-pool-compile"], made  # compiled once, in the background
assert [p for p in os.listdir(cache_directory()) if p.startswith(tp.OBJECT_PREFIX)]
print("ok")
"""

_PREFETCH_FORK = """
assert tp.prefetch() and not tp.prefetch()  # started once
pid = os.fork()  # waits for the background compile (it may hold LLVM's lock)
if pid == 0:
    import signal
    signal.alarm(30)  # a deadlocked child dies (SIGALRM) instead of staying behind
    code = 1
    try:
        g = arignote.function([x], T.exp(x) * 3)
        # the child uses the code the parent's thread made before the fork: none made here
        code = 0 if np.allclose(g(a), 3 * np.exp(a)) and made == ["arignote-pool-compile"] else 2
    finally:
        os._exit(code)
_, status = os.waitpid(pid, 0)
assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
f = arignote.function([x], T.exp(x) * 2)
np.testing.assert_allclose(f(a), 2 * np.exp(a), rtol=1e-6)
assert made == ["arignote-pool-compile"], made
print("ok")
"""


_PREFETCH_EXIT = """
import atexit
atexit.register(lambda: print("ok" if not tp._prefetch.thread.is_alive() else "running"))
assert tp.prefetch()  # exits at once: the exit waits for the compile (atexit runs LIFO)
"""


@pytest.mark.parametrize(
    "script", [_PREFETCH_USED, _PREFETCH_FORK, _PREFETCH_EXIT], ids=["used", "fork", "exit"]
)
def test_pool_code_is_prefetched_in_the_background(script: str) -> None:
    """A compile with parallel loops starts compiling the pool in a background thread
    (`threadpool.prefetch`); loading the pool uses that code (compiled once) and stores
    it in the compile directory. A fork waits for the background compile; the child
    compiles and runs parallel code (no LLVM lock held by a thread it lacks). Each in a
    new process (where the pool is not loaded yet). The exit, too, waits for it."""
    env = dict(os.environ, OMP_NUM_THREADS="2")
    env.pop("ARIGNOTE_FLAGS", None)
    out = subprocess.run(
        [sys.executable, "-c", _PREFETCH_PRELUDE + script],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split() == ["ok"]


# --- the pool's object code in the compile cache's directory: never loaded unless this
# process could have written it (each case in a new process, with a timeout: before the
# object was sealed with its key, a truncated one crashed every later process) ---------------

_POOL_CHILD = """
import json, resource, signal, sys
import numpy as np
import arignote, arignote.tensor as T
from arignote.compile import codecache
from arignote.runtime import threadpool
fsize = int(sys.argv[1])
# a guard: a regression reading an endless file fails with MemoryError, not the machine
resource.setrlimit(resource.RLIMIT_DATA, (3 << 30, 3 << 30))
if fsize:  # killed (SIGXFSZ) when writing the first file past `fsize` bytes
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # (Python ignores it)
x = T.fvector("x")
f = arignote.function([x], x * 2 + 1)
a = np.linspace(-1, 1, 300000, dtype=np.float32)
print(json.dumps({"ok": bool(np.array_equal(f(a), a * 2 + 1)),
                  "parallel": threadpool.dispatches() > 0, "stats": dict(codecache.stats())}))
"""


def _run_pool_child(compiledir, fsize: int = 0) -> subprocess.CompletedProcess:
    """A function with parallel loops compiled and run in a new process whose compiledir
    is `compiledir` (where it finds the pool's object code, or stores it)."""
    env = dict(os.environ, OMP_NUM_THREADS="2", PYTHONDONTWRITEBYTECODE="1")
    env["ARIGNOTE_FLAGS"] = f"compiledir={compiledir},openmp=True,openmp_elemwise_minsize=1000"
    env.pop("OMP_WAIT_POLICY", None)
    env.pop("ARIGNOTERC", None)
    command = [sys.executable, "-c", _POOL_CHILD, str(fsize)]
    try:
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("function() hung (a blocking read of the pool's object?)")


def _pool_child_stats(compiledir) -> dict[str, int]:
    done = _run_pool_child(compiledir)
    assert done.returncode == 0, f"exit status {done.returncode}: {done.stderr[-3000:]}"
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["ok"] and result["parallel"], result
    return result["stats"]


@pytest.fixture(scope="module")
def pool_objects(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The pool's object file as a new process would store it, that of the pool for
    `OMP_WAIT_POLICY=passive` (another key), and a function's object code."""
    directory = tmp_path_factory.mktemp("pool-objects")
    made = {}
    for policy in ("", "passive"):
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("OMP_WAIT_POLICY", policy)
            threadpool._object_code(platform.machine(), str(directory))
            name = threadpool.OBJECT_PREFIX + threadpool._object_key(platform.machine()) + ".o"
            made[policy or "default"] = directory / name
    with change_flags(compile_cache=False):
        x = T.fvector("x")
        code = arignote.function([x], x - 1)._compiled.run.native.native_module.object_code
    made["function"] = directory / "function.o"
    made["function"].write_bytes(code)
    return made


def _pool_dir(pool_objects: dict[str, Path], tmp_path: Path) -> tuple[Path, Path]:
    """A compiledir holding the pool's object file only; (it, that file)."""
    native = tmp_path / "compiledir" / codecache.SUBDIRECTORY
    native.mkdir(parents=True)
    target = native / pool_objects["default"].name
    shutil.copyfile(pool_objects["default"], target)
    return native.parent, target


def _truncate(target: Path, objects: dict[str, Path]) -> None:
    target.write_bytes(target.read_bytes()[: target.stat().st_size // 2])


def _swap(target: Path, objects: dict[str, Path]) -> None:
    """The object of another key (the pool for another wait policy) renamed to this key."""
    passive = target.parent / objects["passive"].name
    shutil.copyfile(objects["passive"], passive)
    os.replace(passive, target)


def _copy(target: Path, objects: dict[str, Path]) -> None:
    """Another valid object file (a function's) copied there."""
    shutil.copyfile(objects["function"], target)


def _fifo(target: Path, objects: dict[str, Path]) -> None:
    target.unlink()
    os.mkfifo(target)


def _dev_zero(target: Path, objects: dict[str, Path]) -> None:
    target.unlink()
    target.symlink_to("/dev/zero")


def _directory(target: Path, objects: dict[str, Path]) -> None:
    target.unlink()
    target.mkdir()


_POOL_FAULTS = [_truncate, _swap, _copy, _fifo, _dev_zero, _directory]


@pytest.mark.parametrize("fault", _POOL_FAULTS, ids=[f.__name__[1:] for f in _POOL_FAULTS])
def test_a_foreign_pool_object_is_removed_and_recompiled(
    pool_objects, tmp_path: Path, fault
) -> None:
    """What lies at the pool object's path but is not that object, whole (truncated, the
    pool of another key, another object file, a FIFO, a symbolic link to /dev/zero, a
    directory), is never loaded: counted corrupt, removed, the pool compiled again (its
    parallel loops run) and stored."""
    compiledir, target = _pool_dir(pool_objects, tmp_path)
    fault(target, pool_objects)
    assert _pool_child_stats(compiledir) == {"corrupt": 1, "miss": 1, "store": 1}
    assert target.is_file() and not target.is_symlink()
    assert target.read_bytes() == pool_objects["default"].read_bytes()


def test_a_pool_writer_killed_midway_leaves_nothing_loaded(pool_objects, tmp_path: Path) -> None:
    """A process killed (SIGXFSZ) while writing the pool's object leaves a temporary file
    only: the next process compiles the pool again and, once that file is stale, the
    cache's pruning deletes it."""
    compiledir, target = _pool_dir(pool_objects, tmp_path)
    size = target.stat().st_size
    target.unlink()
    killed = _run_pool_child(compiledir, fsize=size // 2)
    assert killed.returncode == -signal.SIGXFSZ, killed.stderr[-3000:]
    [partial] = list(target.parent.iterdir())
    assert 0 < partial.stat().st_size < size
    os.utime(partial, (0, 0))
    assert _pool_child_stats(compiledir) == {"miss": 1, "store": 1}
    assert target.read_bytes() == pool_objects["default"].read_bytes()
    assert not partial.exists()
