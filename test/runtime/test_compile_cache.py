"""The on-disk compile cache (`arignote.runtime.cache`, `arignote.compile.codecache`):
hits skip compilation (in this process and in new ones), the key follows the flags that
change code, broken entries are misses, the directory is pruned, concurrent writers
leave whole entries."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.compile import codecache
from arignote.compile.mode import Mode
from arignote.configuration import change_flags
from arignote.runtime import cache, cachefile
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
    # (besides the thread pool's object code, when this process compiled the pool here,
    # and the directory's ledger of its size)
    names = [
        p.name
        for p in cachedir.iterdir()
        if not p.name.startswith(OBJECT_PREFIX) and p.name != cachefile.LEDGER
    ]
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
    assert cache.unpack(data, entry.stem) is not None


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
    size = len(cache.pack(fn, "k0"))
    for i in range(5):
        assert cache.store(str(cachedir), f"k{i}", fn, 10 * size)
        os.utime(cachedir / f"k{i}{cache.SUFFIX}", (1000.0 + i, 1000.0 + i))
    cache.load(str(cachedir), "k0")  # a hit makes k0 the most recently used
    stale = cachedir / ".tmp-crashed.agc"
    stale.write_bytes(b"partial")
    os.utime(stale, (0, 0))
    assert cache.prune(str(cachedir), 3 * size) == 2
    # the stale temporary file is gone; the ledger holds what the scan counted
    names = sorted(p.name for p in cachedir.iterdir())
    assert names == [cachefile.LEDGER] + [f"k{i}{cache.SUFFIX}" for i in (0, 3, 4)]
    assert (cachedir / cachefile.LEDGER).read_text().split()[0] == str(3 * size)
    with change_flags(compile_cache_max_mb=0):  # every store then prunes everything
        x2 = T.fvector("x2")
        arignote.function([x2], x2 - 1)
    assert [p.name for p in cachedir.iterdir()] == [cachefile.LEDGER]
    assert (cachedir / cachefile.LEDGER).read_text().split()[0] == "0"


def test_a_store_under_the_limit_lists_no_directory(cachedir: Path, monkeypatch) -> None:
    """A store scans the directory (`_entries`) only when its ledger is missing, damaged,
    older than `RESCAN_SECONDS` or over the limit: not on every store."""
    x = T.fvector("x")
    with change_flags(compile_cache=False):
        fn = arignote.function([x], x + 1)._compiled.run.native
    scans = []
    entries = cache._entries
    monkeypatch.setattr(cache, "_entries", lambda d: scans.append(d) or entries(d))
    ledger = cachedir / cachefile.LEDGER
    assert cache.store(str(cachedir), "k00", fn, 2**30) and len(scans) == 1  # (no ledger)
    size = (cachedir / f"k00{cache.SUFFIX}").stat().st_size  # (each entry's: keys of one length)
    for i in range(1, 4):
        assert cache.store(str(cachedir), f"k{i:02d}", fn, 10 * size)
    assert len(scans) == 1
    total = sum(p.stat().st_size for p in cachedir.glob("*" + cache.SUFFIX))
    assert int(ledger.read_text().split()[0]) == total
    ledger.write_text("damaged")
    assert cache.store(str(cachedir), "k04", fn, 10 * size) and len(scans) == 2
    ledger.write_text(f"{total} {time.time() - cachefile.RESCAN_SECONDS - 1}")
    assert cache.store(str(cachedir), "k05", fn, 10 * size) and len(scans) == 3
    for i in range(6, 10):  # up to the limit: no scan
        assert cache.store(str(cachedir), f"k{i:02d}", fn, 10 * size)
    assert len(scans) == 3
    os.utime(cachedir / f"k00{cache.SUFFIX}", (1000.0, 1000.0))
    assert cache.store(str(cachedir), "k10", fn, 10 * size)  # past it: a scan, a prune
    assert len(scans) == 4
    assert sorted(p.name for p in cachedir.glob("*" + cache.SUFFIX)) == sorted(
        f"k{i:02d}{cache.SUFFIX}" for i in range(1, 11)
    )


CONCURRENT = """
import json, sys
import numpy as np
import arignote, arignote.tensor as T
from arignote.compile import codecache
from arignote.runtime import cache
from arignote.runtime.threadpool import OBJECT_PREFIX
# compiled here, not loaded from the other process's entry (a loaded module does not
# know its external symbols, so `store` would refuse it: the test failed when one
# process ran late enough to find the other's entry)
arignote.config.compile_cache = False
x = T.fvector("x")
fn = arignote.function([x], T.exp(x) + 1)._compiled.run.native
arignote.config.compile_cache = True
directory = codecache.cache_directory()
for _ in range(60):
    assert cache.store(directory, "shared", fn, 2**30, verbose=True)  # (why: on stderr)
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
    entry = directory / ("shared" + cache.SUFFIX)
    assert cache.unpack(entry.read_bytes(), "shared") is not None


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


# --- entries this process did not write (each run in a new process, with a timeout: before
# the entries were sealed with their key, such an entry hung, crashed or ran another
# function's code) ---------------------------------------------------------------------------

FAULT_CHILD = """
import json, resource, signal, sys
import numpy as np
import arignote, arignote.tensor as T
from arignote.compile import codecache
which, fsize = sys.argv[1], int(sys.argv[2])
# a guard: a regression reading an endless file fails with MemoryError, not the machine
resource.setrlimit(resource.RLIMIT_DATA, (3 << 30, 3 << 30))
keys = []
load = codecache.load
codecache.load = lambda key: keys.append(key) or load(key)
if fsize:  # killed (SIGXFSZ) when writing the first file past `fsize` bytes
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # (Python ignores it)
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
x = T.fvector("x")
f = arignote.function([x], x * 2 + 1 if which == "A" else x * 3 - 1)
a = np.linspace(-1, 1, 300000, dtype=np.float32)
want = a * 2 + 1 if which == "A" else a * 3 - 1
print(json.dumps({"key": keys[0], "ok": bool(np.array_equal(f(a), want)),
                  "stats": dict(codecache.stats())}))
"""


def run_child(directory: Path, which: str, fsize: int = 0) -> subprocess.CompletedProcess:
    """Compile and check function `which` (A or B) in a new process whose compiledir is
    `directory`, with parallel loops (the thread pool's object is cached too); `fsize`:
    the most bytes the process may write to a file."""
    env = dict(os.environ, OMP_NUM_THREADS="2", PYTHONDONTWRITEBYTECODE="1")
    env["ARIGNOTE_FLAGS"] = f"compiledir={directory},openmp=True,openmp_elemwise_minsize=1000"
    env.pop("ARIGNOTERC", None)
    command = [sys.executable, "-c", FAULT_CHILD, which, str(fsize)]
    try:
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail(f"function() of {which} hung (a blocking read of the cache entry?)")


def child_result(directory: Path, which: str) -> dict:
    done = run_child(directory, which)
    assert done.returncode == 0, f"exit status {done.returncode}: {done.stderr[-3000:]}"
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["ok"], f"{which} computed something else (another entry's code?)"
    return result


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A compiledir holding the entries of functions A and B (and the pool's object),
    and their keys."""
    directory = tmp_path_factory.mktemp("pristine")
    keys = {which: child_result(directory, which)["key"] for which in "AB"}
    return directory, keys


def copy_of(pristine: tuple[Path, dict[str, str]], tmp_path: Path) -> tuple[Path, Path, Path]:
    """A copy of the pristine compiledir; (it, A's entry, B's entry)."""
    source, keys = pristine
    directory = tmp_path / "compiledir"
    shutil.copytree(source, directory)
    native = directory / codecache.SUBDIRECTORY
    return directory, *(native / (keys[w] + cache.SUFFIX) for w in "AB")


def truncate(entry: Path, other: Path) -> None:
    entry.write_bytes(entry.read_bytes()[: entry.stat().st_size // 2])


def swap(entry: Path, other: Path) -> None:
    """Rename `other` (another function's entry) to `entry`'s key."""
    os.replace(other, entry)


def copy(entry: Path, other: Path) -> None:
    shutil.copyfile(other, entry)


def fifo(entry: Path, other: Path) -> None:
    entry.unlink()
    os.mkfifo(entry)


def dev_zero(entry: Path, other: Path) -> None:
    entry.unlink()
    entry.symlink_to("/dev/zero")


def directory(entry: Path, other: Path) -> None:
    entry.unlink()
    entry.mkdir()


FAULTS = [truncate, swap, copy, fifo, dev_zero, directory]


@pytest.mark.parametrize("fault", FAULTS, ids=[f.__name__ for f in FAULTS])
def test_a_foreign_entry_is_removed_and_recompiled(pristine, tmp_path: Path, fault) -> None:
    """What lies under A's key but is not A's whole entry (truncated, B's entry renamed or
    copied there, a FIFO, a symbolic link to /dev/zero, a directory) is never loaded:
    counted corrupt, removed, A compiled and stored again."""
    compiledir, entry, other = copy_of(pristine, tmp_path)
    good = entry.read_bytes()
    fault(entry, other)
    result = child_result(compiledir, "A")
    assert result["stats"] == {"corrupt": 1, "miss": 1, "store": 1}
    assert entry.is_file() and not entry.is_symlink()
    assert entry.read_bytes() == good  # the same bytes, sealed with A's key


def test_a_writer_killed_midway_leaves_nothing_loaded(pristine, tmp_path: Path) -> None:
    """A process killed (SIGXFSZ) while writing A's entry leaves a temporary file only:
    the next process compiles A again (nothing corrupt is loaded) and, once that file is
    stale, a store deletes it."""
    compiledir, entry, other = copy_of(pristine, tmp_path)
    size = entry.stat().st_size
    entry.unlink()
    killed = run_child(compiledir, "A", fsize=size // 2)
    assert killed.returncode == -signal.SIGXFSZ, killed.stderr[-3000:]
    native = entry.parent
    [partial] = [p for p in native.iterdir() if p.name.startswith(".tmp-")]
    assert 0 < partial.stat().st_size < size
    result = child_result(compiledir, "A")
    assert result["stats"] == {"miss": 1, "store": 1}
    os.utime(partial, (0, 0))
    other.unlink()
    ledger = native / cachefile.LEDGER
    if ledger.exists():  # (a store scans when its ledger is old: this one will)
        total = ledger.read_text().split()[0]
        ledger.write_text(f"{total} {time.time() - cachefile.RESCAN_SECONDS - 1}")
    assert child_result(compiledir, "B")["stats"] == {"miss": 1, "store": 1}
    assert not partial.exists()


def test_relabel_maps_each_stored_label_to_the_callers() -> None:
    """`relabel`: label for label, in one pass (a label that begins another is not
    replaced inside it), escaped for `%` formatting too; None when a stored label
    stands for two of the caller's, or the counts differ."""
    stored = ["add at p.py:1", "add at p.py:12", "mul at 5%.py:3"]
    labels = ["add at p.py:12", "add at p.py:13", "mul at 5%.py:4"]
    texts = [
        "ag.add [add at p.py:1]: %d",
        "ag.add [add at p.py:12]: %d != %d",
        "ag.mul [mul at 5%%.py:3]",
        "mul at 5%.py:3",
    ]
    assert cache.relabel(texts, stored, labels) == [
        "ag.add [add at p.py:12]: %d",
        "ag.add [add at p.py:13]: %d != %d",
        "ag.mul [mul at 5%%.py:4]",
        "mul at 5%.py:4",
    ]
    assert cache.relabel(texts, stored, stored) == texts
    assert (
        cache.relabel(texts, ["a at p.py:1", "a at p.py:1"], ["a at p.py:1", "a at p.py:2"]) is None
    )
    assert cache.relabel(texts, stored, labels[:2]) is None
