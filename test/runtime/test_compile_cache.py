"""The on-disk compile cache (`arignote.runtime.cache`, `arignote.compile.codecache`):
hits skip compilation (in this process and in new ones), the key follows the flags that
change code, broken entries are misses, the directory is pruned, concurrent writers
leave whole entries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.compile import codecache
from arignote.compile.mode import Mode
from arignote.configuration import change_flags
from arignote.runtime import cache
from arignote.runtime.threadpool import OBJECT_PREFIX

ROOT = Path(__file__).resolve().parents[2]


def delta(before: dict[str, int]) -> dict[str, int]:
    now = codecache.stats()
    return {k: now[k] - before.get(k, 0) for k in now if now[k] != before.get(k, 0)}


@pytest.fixture
def cachedir(tmp_path: Path):
    with change_flags(compile_cache=True, compiledir=str(tmp_path)):
        yield Path(codecache.cache_directory())


def graph() -> tuple[list[arignote.Variable], list[arignote.Variable]]:
    x, y = T.fvector("x"), T.fvector("y")
    return [x, y], [x * 2 + y, (x - y).sum()]


def test_hit_in_the_same_process(cachedir: Path) -> None:
    inputs, outputs = graph()
    before = dict(codecache.stats())
    f = arignote.function(inputs, outputs)
    assert delta(before) == {"miss": 1, "store": 1}
    [entry] = cachedir.glob("*" + cache.SUFFIX)
    before = dict(codecache.stats())
    g = arignote.function(inputs, outputs)
    assert delta(before) == {"hit": 1}
    assert isinstance(g._compiled._optimized, type(lambda: 0))  # nothing optimized yet
    a, b = np.arange(3, dtype=np.float32), np.ones(3, np.float32)
    for got, want in zip(g(a, b), f(a, b), strict=True):
        np.testing.assert_array_equal(got, want)
    assert g._compiled.run.native.fast_entry.calls == 1  # the cached code has its entry
    assert g.dump_ir("optimized") == f.dump_ir("optimized")  # computed when asked
    assert [type(n.op).__name__ for n in g.maker.fgraph.toposort()] == [
        type(n.op).__name__ for n in f.maker.fgraph.toposort()
    ]
    with pytest.raises(ValueError, match=r"operand shapes \(3,\) and \(4,\) do not match"):
        g(a, np.ones(4, np.float32))  # the check messages come from the entry
    # (besides the thread pool's object code, when this process compiled the pool here)
    names = [p.name for p in cachedir.iterdir() if not p.name.startswith(OBJECT_PREFIX)]
    assert names == [entry.name]


def test_hit_in_a_new_process(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import json, sys
        import numpy as np
        import arignote, arignote.tensor as T
        from arignote.compile.codecache import stats
        x = T.dmatrix("x")
        w = arignote.shared(np.ones(3), name="w")
        f = arignote.function([x], T.dot(x, w), updates=[(w, w * 2)])
        out = f(np.eye(3))
        print(json.dumps({"out": out.tolist(), "w": w.get_value().tolist(),
                          "stats": dict(stats())}))
        """
    )
    env = dict(os.environ, ARIGNOTE_FLAGS=f"compiledir={tmp_path},compile_cache_verbose=True")
    env.pop("ARIGNOTERC", None)

    def run() -> tuple[dict, str]:
        done = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr

    first, log = run()
    assert first["stats"] == {"miss": 1, "store": 1}
    assert "compile cache miss" in log and "compile cache store" in log
    second, log = run()
    assert second["stats"] == {"hit": 1} and "compile cache hit" in log
    assert second["out"] == first["out"] == [1.0, 1.0, 1.0]  # BLAS gemv from the entry
    assert second["w"] == first["w"] == [2.0, 2.0, 2.0]


def test_key_follows_what_changes_code(cachedir: Path) -> None:
    inputs, outputs = graph()
    module = arignote.function(inputs, outputs, mode=Mode(linker="py"))._compiled.module

    def key(mode: Mode | None = None) -> str:
        mode = mode or Mode()
        result = codecache.cache_key(mode, module, mode.graph_pipeline())
        assert result is not None
        return result

    base = key()
    assert key() == base  # deterministic
    assert key(Mode(optimizer="fast_compile")) != base
    assert key(Mode().excluding("stabilize")) != base
    assert key(Mode(linker="c")) != base
    with change_flags(floatX="float32"):
        assert key() != base
    with change_flags(optimizer_excluding="merge"):  # the tag of cse
        assert key() != base
    assert codecache.cache_key(Mode(linker="py"), module, "") is None  # the interpreter
    with change_flags(compile_cache=False):
        assert codecache.cache_key(Mode(), module, "") is None
    # constants that print alike still differ in the key
    x = T.dvector("x")
    k1 = codecache.ir_text(arignote.function([x], x * 0.1, mode=Mode(linker="py")).module)
    k2 = codecache.ir_text(
        arignote.function([x], x * np.nextafter(0.1, 1), mode=Mode(linker="py")).module
    )
    assert k1 != k2


def test_broken_entries_are_misses(cachedir: Path) -> None:
    inputs, outputs = graph()
    arignote.function(inputs, outputs)
    [entry] = cachedir.glob("*" + cache.SUFFIX)
    data = entry.read_bytes()
    a, b = np.arange(3, dtype=np.float32), np.ones(3, np.float32)
    for broken in (data[: len(data) // 2], data[:-1] + bytes([data[-1] ^ 1]), b"", b"junk"):
        entry.write_bytes(broken)
        before = dict(codecache.stats())
        f = arignote.function(inputs, outputs)
        changes = delta(before)
        assert changes["miss"] == 1 and changes["store"] == 1
        assert changes.get("corrupt", 0) == 1
        np.testing.assert_array_equal(f(a, b)[0], a * 2 + b)
        assert entry.read_bytes() == data  # rewritten whole
    assert cache.unpack(data) is not None


def test_unwritable_directory_is_not_an_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with change_flags(compile_cache=True, compiledir=str(blocker)):
        before = dict(codecache.stats())
        x = T.fvector("x")
        f = arignote.function([x], x + 1)
        assert delta(before) == {"miss": 1, "write_error": 1}
        np.testing.assert_array_equal(f(np.zeros(2, np.float32)), [1, 1])


def test_other_modes_are_not_cached(cachedir: Path) -> None:
    x = T.fvector("x")
    for mode in (Mode(linker="py"), "DebugMode", "NanGuardMode"):
        arignote.function([x], x + 1, mode=mode)
    assert not cachedir.exists() or not list(cachedir.iterdir())


def test_pruning_removes_the_least_recently_used(cachedir: Path) -> None:
    x = T.fvector("x")
    with change_flags(compile_cache=False):
        fn = arignote.function([x], x + 1)._compiled.run.native
    size = len(cache.pack(fn))
    for i in range(5):
        assert cache.store(str(cachedir), f"k{i}", fn, 10 * size)
        os.utime(cachedir / f"k{i}{cache.SUFFIX}", (1000.0 + i, 1000.0 + i))
    cache.load(str(cachedir), "k0")  # a hit makes k0 the most recently used
    stale = cachedir / ".tmp-crashed.agc"
    stale.write_bytes(b"partial")
    os.utime(stale, (0, 0))
    assert cache.prune(str(cachedir), 3 * size) == 2
    names = sorted(p.name for p in cachedir.iterdir())  # the stale temporary file is gone
    assert names == [f"k{i}{cache.SUFFIX}" for i in (0, 3, 4)]
    with change_flags(compile_cache_max_mb=0):  # every store then prunes everything
        x2 = T.fvector("x2")
        arignote.function([x2], x2 - 1)
    assert list(cachedir.iterdir()) == []


CONCURRENT = """
import json, sys
import numpy as np
import arignote, arignote.tensor as T
from arignote.compile import codecache
from arignote.runtime import cache
from arignote.runtime.threadpool import OBJECT_PREFIX
x = T.fvector("x")
fn = arignote.function([x], T.exp(x) + 1)._compiled.run.native
directory = codecache.cache_directory()
for _ in range(60):
    assert cache.store(directory, "shared", fn, 2**30)
    got = cache.load(directory, "shared")
    assert got is not None
    assert np.allclose(got(np.zeros(2, np.float32))[0], 2.0)
print(json.dumps(dict(codecache.stats())))
"""


def test_concurrent_writers(tmp_path: Path) -> None:
    env = dict(os.environ, ARIGNOTE_FLAGS=f"compiledir={tmp_path}")
    env.pop("ARIGNOTERC", None)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CONCURRENT],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        stats = json.loads(out.strip().splitlines()[-1])
        assert stats.get("corrupt", 0) == 0 and stats["hit"] == 60
    directory = tmp_path / codecache.SUBDIRECTORY
    names = sorted(p.name for p in directory.iterdir())
    assert "shared" + cache.SUFFIX in names
    assert not [n for n in names if n.startswith(".tmp-")]  # no temporary file left
    assert cache.unpack((directory / ("shared" + cache.SUFFIX)).read_bytes()) is not None


def test_code_bound_to_this_process_is_not_stored(cachedir: Path) -> None:
    x = T.dvector("x")
    with change_flags(compile_cache=False):
        fn = arignote.function([x], (x % 1.5).sum())._compiled.run.native
    module = fn._module
    assert "fmod" in module.imports and cache.portable(module.imports)  # libm, entry
    module.imports = (*module.imports, "arignote_callback_only_in_this_jit")
    before = dict(codecache.stats())
    assert not cache.store(str(cachedir), "bound", fn, 2**30)
    assert delta(before) == {"uncacheable": 1}
    assert not cachedir.exists() or not list(cachedir.iterdir())
