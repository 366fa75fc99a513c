"""The kernel cache (`arignote.runtime.kernelcache`): a new graph reuses the object code
of the kernels earlier compiles built (in this process or another), keyed by the
kernels' IR; broken files and batches that define one group twice are never loaded; a
function's compile cache entry holds the kernels it reused."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.compile import codecache, two_processes
from arignote.configuration import change_flags
from arignote.runtime import cachefile, cpu, kernelcache


@pytest.fixture
def compiledir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A compile cache in `tmp_path`; modules as small as these tests' use the kernel
    cache (it serves only modules compiled in parts), compiled in one process
    (`test_two_processes.py` has the kernel cache in two)."""
    monkeypatch.setattr(cpu, "PARALLEL_MIN_INSTRUCTIONS", 0)
    monkeypatch.setattr(two_processes, "ENABLED", False)
    with change_flags(compile_cache=True, compiledir=str(tmp_path)):
        yield tmp_path


def compile_counting(inputs, outputs) -> tuple[arignote.Function, dict[str, int]]:
    """The function of `outputs`, and the kernel groups it reused and compiled."""
    before = dict(kernelcache.STATS)
    f = arignote.function(inputs, outputs)
    return f, {k: kernelcache.STATS[k] - before[k] for k in before}


def graphs() -> tuple[list, list, list]:
    x, y = T.fmatrix("x"), T.fmatrix("y")
    first = [T.tanh(x * 2 + y), T.exp(x).sum(axis=0)]
    return [x, y], first, [*first, (x * y).max()]


def arrays() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.standard_normal((5, 7), np.float32), rng.standard_normal((5, 7), np.float32)


def test_a_new_graph_reuses_the_kernels_of_an_earlier_one(compiledir: Path) -> None:
    inputs, first, second = graphs()
    _, counts = compile_counting(inputs, first)
    assert counts == {"reused": 0, "compiled": 2, "fallback": 0}
    g, counts = compile_counting(inputs, second)  # a function cache miss: a new graph
    assert counts == {"reused": 2, "compiled": 1, "fallback": 0}
    with change_flags(compile_cache=False):
        want = arignote.function(inputs, second)(*arrays())
    for got, expected in zip(g(*arrays()), want, strict=True):
        np.testing.assert_array_equal(got, expected)  # bitwise: the same machine code


def test_the_key_follows_the_kernels_ir(compiledir: Path) -> None:
    x, y = T.fmatrix("x"), T.fmatrix("y")
    compile_counting([x, y], [T.tanh(x * 2 + y), T.exp(x).sum(axis=0)])
    g, counts = compile_counting([x, y], [T.sinh(x * 2 + y), T.exp(x).sum(axis=0)])
    assert counts == {"reused": 1, "compiled": 1, "fallback": 0}  # sinh's is new
    a, b = arrays()
    got = g(a, b)
    np.testing.assert_allclose(got[0], np.sinh(a * 2 + b), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[1], np.exp(a).sum(axis=0), rtol=1e-5)


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty", "directory"])
def test_a_broken_batch_is_compiled_again(compiledir: Path, damage: str) -> None:
    inputs, first, second = graphs()
    compile_counting(inputs, first)
    batches = list((compiledir / "kernels").glob("*" + kernelcache.BATCH_SUFFIX))
    assert batches
    for path in batches:
        data = path.read_bytes()
        if damage == "truncate":
            path.write_bytes(data[: len(data) // 2])
        elif damage == "flip":
            path.write_bytes(data[:100] + bytes([data[100] ^ 1]) + data[101:])
        elif damage == "empty":
            path.write_bytes(b"")
        else:
            path.unlink()
            path.mkdir()
    g, counts = compile_counting(inputs, second)
    assert counts == {"reused": 0, "compiled": 3, "fallback": 0}
    a, b = arrays()
    got = g(a, b)
    np.testing.assert_allclose(got[0], np.tanh(a * 2 + b), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[2], (a * b).max(), rtol=1e-6)


def test_no_group_is_loaded_from_two_batches(tmp_path: Path) -> None:
    """Two processes that compile one group at once each store a batch holding it (the
    index names the last): a compile needing groups of both batches loads one of them
    and compiles the rest, never two definitions of a symbol (which MCJIT refuses by
    ending the process)."""
    fake = b"\x7fELF not loaded here"
    kernelcache.store(str(tmp_path), ["a" * 32, "b" * 32], [], fake)
    kernelcache.store(str(tmp_path), ["b" * 32, "c" * 32], [], fake)  # b's index: here
    batches, served = kernelcache.choose_batches(str(tmp_path), ["a" * 32, "c" * 32, "b" * 32])
    defined = [group for batch in batches for group in batch.groups]
    assert len(defined) == len(set(defined))
    assert served == {"a" * 32, "b" * 32}  # c: compiled again (its batch defines b too)


def test_no_batch_defines_a_group_the_other_part_defines(tmp_path: Path) -> None:
    """A function compiled in two processes (`compile_part`): the parent never loads a
    batch defining a group that the child's objects define (`elsewhere`), and never
    serves such a group itself (it only declares it)."""
    fake = b"\x7fELF not loaded here"
    kernelcache.store(str(tmp_path), ["a" * 32, "b" * 32], [], fake)
    kernelcache.store(str(tmp_path), ["c" * 32], [], fake)
    batches, served = kernelcache.choose_batches(
        str(tmp_path), ["a" * 32, "c" * 32], elsewhere={"b" * 32}
    )
    assert [batch.groups for batch in batches] == [("c" * 32,)]
    assert served == {"c" * 32}  # a: compiled here (its batch defines b, the child's)
    assert kernelcache.digest_of(kernelcache.symbols("d" * 32, 2)[1]) == "d" * 32
    assert kernelcache.digest_of("fn_main__k3") is None


def test_batches_that_share_a_group_are_not_loaded_together(
    compiledir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """End to end: the kernel files of another directory whose compile built a group
    this one has too (as a concurrent process would) are copied in; the next compile
    still loads and runs right."""
    monkeypatch.setattr(cpu, "FORK_PARTS", False)  # one batch per compile
    inputs, first, second = graphs()
    x, y = inputs
    compile_counting(inputs, first)  # groups tanh, exp-sum
    other = compiledir / "other"
    with change_flags(compiledir=str(other)):
        compile_counting(inputs, [T.exp(x).sum(axis=0), (x * y).max()])  # exp-sum, max
    for path in (other / "kernels").iterdir():
        shutil.copy(path, compiledir / "kernels" / path.name)  # exp-sum's index: other's
    g, counts = compile_counting(inputs, second)  # tanh, exp-sum, max
    assert counts["fallback"] == 0 and counts["reused"] + counts["compiled"] == 3
    assert counts["compiled"] >= 1  # the two batches define exp-sum: one is not loaded
    a, b = arrays()
    got = g(a, b)
    np.testing.assert_allclose(got[0], np.tanh(a * 2 + b), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[1], np.exp(a).sum(axis=0), rtol=1e-5)
    np.testing.assert_allclose(got[2], (a * b).max(), rtol=1e-6)


@pytest.mark.parametrize("symbol", ["MPI_Iallreduce", "scipy_cblas_dgemm", "no_such_symbol"])
def test_a_batch_needing_what_this_module_does_not_load_is_not_used(
    compiledir: Path, monkeypatch: pytest.MonkeyPatch, symbol: str
) -> None:
    """A batch may hold the kernels of another function, calling a library (MPI, the
    BLAS) this function does not load: loaded anyway, MCJIT left that symbol and the
    entry point's null, and the call crashed (bench.mpi's worker after the test
    suite filled the default compiledir)."""
    monkeypatch.setattr(cpu, "FORK_PARTS", False)  # one batch per compile
    inputs, first, second = graphs()
    compile_counting(inputs, first)
    directory = str(compiledir / "kernels")
    [path] = (compiledir / "kernels").glob("*" + kernelcache.BATCH_SUFFIX)
    batch = kernelcache.load(directory, path.name.removesuffix(kernelcache.BATCH_SUFFIX))
    assert batch is not None
    kernelcache.store(directory, batch.groups, [*batch.imports, symbol], batch.code)
    g, counts = compile_counting(inputs, second)
    assert counts == {"reused": 0, "compiled": 3, "fallback": 0}
    a, b = arrays()
    np.testing.assert_allclose(g(a, b)[0], np.tanh(a * 2 + b), rtol=1e-5, atol=1e-6)


CHILD = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import arignote, arignote.tensor as T
    from arignote.compile.codecache import stats
    from arignote.runtime import cachefile, cpu, kernelcache
    cpu.PARALLEL_MIN_INSTRUCTIONS = 0
    x, y = T.fmatrix("x"), T.fmatrix("y")
    first = [T.tanh(x * 2 + y), T.exp(x).sum(axis=0)]
    if sys.argv[1] == "both":
        arignote.function([x, y], first)
    f = arignote.function([x, y], [*first, (x * y).max()])
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((5, 7), np.float32), rng.standard_normal((5, 7), np.float32)
    print(json.dumps({"out": [np.asarray(o).tolist() for o in f(a, b)],
                      "stats": dict(stats()), "kernels": kernelcache.STATS}))
    """
)


def test_an_entry_that_used_cached_kernels_loads_without_them(tmp_path: Path) -> None:
    env = dict(os.environ, ARIGNOTE_FLAGS=f"compiledir={tmp_path}")
    env.pop("ARIGNOTERC", None)

    def run(which: str) -> dict:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, which],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr  # (unresolved kernels: a crash)
        return json.loads(done.stdout.strip().splitlines()[-1])

    first = run("both")
    assert first["kernels"]["reused"] == 2
    shutil.rmtree(tmp_path / "kernels")
    second = run("second")
    assert second["stats"] == {"hit": 1}
    assert second["kernels"] == {"reused": 0, "compiled": 0, "fallback": 0}
    assert second["out"] == first["out"]
    assert not (tmp_path / "kernels").exists()


def test_off_without_the_compile_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cpu, "PARALLEL_MIN_INSTRUCTIONS", 0)
    inputs, first, _ = graphs()
    with change_flags(compile_cache=False, compiledir=str(tmp_path)):
        assert codecache.kernel_cache_directory() is None
        _, counts = compile_counting(inputs, first)
    assert counts == {"reused": 0, "compiled": 0, "fallback": 0}
    assert not (tmp_path / "kernels").exists()


def test_pruning_removes_batches_and_their_index(compiledir: Path) -> None:
    inputs, first, _ = graphs()
    compile_counting(inputs, first)
    directory = compiledir / "kernels"
    assert list(directory.glob("*" + kernelcache.INDEX_SUFFIX))
    assert kernelcache.prune(str(directory), 0) >= 2
    assert [p.name for p in directory.iterdir()] == [cachefile.LEDGER]  # (of 0 bytes)
    assert (directory / cachefile.LEDGER).read_text().split()[0] == "0"


def test_a_compile_prunes_the_kernel_cache_only_when_due(
    compiledir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each batch stored adds its size to the directory's ledger; `prune_if_due` scans only
    when the ledger is missing or says the batches are over the limit."""
    scans = []
    prune = kernelcache.prune
    monkeypatch.setattr(kernelcache, "prune", lambda d, m: scans.append(m) or prune(d, m))
    inputs, first, second = graphs()
    compile_counting(inputs, first)  # (a new directory: no ledger, one scan)
    assert len(scans) == 1
    directory = compiledir / "kernels"
    batches = sum(p.stat().st_size for p in directory.glob("*" + kernelcache.BATCH_SUFFIX))
    assert int((directory / cachefile.LEDGER).read_text().split()[0]) == batches
    compile_counting(inputs, second)  # (a new batch, under the limit)
    assert len(scans) == 1
    batches = sum(p.stat().st_size for p in directory.glob("*" + kernelcache.BATCH_SUFFIX))
    assert int((directory / cachefile.LEDGER).read_text().split()[0]) == batches
    assert kernelcache.prune_if_due(str(directory), batches - 1) > 0 and len(scans) == 2


def test_a_compile_that_fails_with_the_kernel_cache_is_done_without_it(
    compiledir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inputs, first, second = graphs()
    compile_counting(inputs, first)
    batches = set((compiledir / "kernels").glob("*" + kernelcache.BATCH_SUFFIX))

    def refuse(self, *args):
        raise RuntimeError("an object LLVM refuses")

    monkeypatch.setattr(kernelcache.Plan, "compile", refuse)
    g, counts = compile_counting(inputs, second)
    assert counts == {"reused": 2, "compiled": 0, "fallback": 1}
    assert not any(path.exists() for path in batches)  # not loaded again
    a, b = arrays()
    np.testing.assert_allclose(g(a, b)[2], (a * b).max(), rtol=1e-6)
