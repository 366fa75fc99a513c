"""arignote.distributed: the API without MPI (in this process), and programs run by
`mpiexec -n 2` in subprocesses (skipped where mpi4py or mpiexec is not installed):
values of `ag.allreduce` native and interpreted, broadcast/scatter, parameters
bit-identical across ranks after training, a graph that differs between ranks, a rank
that hangs and one that dies. The subprocess timeouts only guard against hangs."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote import distributed

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
SCENARIOS = HERE / "mpi_scenarios.py"
GUARD = 240  # seconds: a hang guard for a launch on a loaded machine, not a timing check


def _mpiexec() -> str | None:
    beside = Path(sys.executable).parent / "mpiexec"
    return str(beside) if beside.exists() else shutil.which("mpiexec")


MPIEXEC = _mpiexec()
needs_mpi = pytest.mark.skipif(
    importlib.util.find_spec("mpi4py") is None or MPIEXEC is None,
    reason="needs mpi4py and mpiexec (pip install arignote[mpi])",
)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["OPENBLAS_NUM_THREADS"] = "1"
    env["ARIGNOTE_FLAGS"] = "openmp=False"
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


def _launch(n: int, *args: str, options: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    assert MPIEXEC is not None
    command = [MPIEXEC, *options, "-n", str(n), sys.executable, *args]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=GUARD, env=_env(), cwd=ROOT
    )


def _ranks(out: str) -> dict[int, list[str]]:
    lines: dict[int, list[str]] = {}
    for match in re.finditer(r"^rank (\d+): (.*)$", out, re.MULTILINE):
        lines.setdefault(int(match.group(1)), []).append(match.group(2))
    return lines


# --- without MPI -------------------------------------------------------------------------


@pytest.fixture
def single(monkeypatch):
    """This process as the only one (whether or not mpi4py is installed)."""
    monkeypatch.setattr(distributed, "world", lambda: None)


def test_one_process_allreduce_is_the_identity(single):
    x = T.vector("x")
    assert distributed.allreduce(x) is x
    assert distributed.average_gradients([x, 2 * x])[0] is x
    assert (distributed.rank(), distributed.size(), distributed.is_distributed()) == (0, 1, False)
    w = arignote.shared(np.arange(3.0))
    distributed.broadcast([w])
    data = np.arange(4)
    assert distributed.scatter(data) is data
    np.testing.assert_array_equal(w.get_value(), np.arange(3.0))


def test_api_errors(single):
    x = T.vector("x")
    with pytest.raises(ValueError, match="allreduce: op must be one of"):
        distributed.allreduce(x, "max")
    with pytest.raises(TypeError, match="op='mean' needs a float tensor, got dtype int64"):
        distributed.allreduce(T.lvector("i"), "mean")
    with pytest.raises(ValueError, match="timeout must be a number of seconds >= 0"):
        distributed.allreduce(x, timeout=-1)
    with pytest.raises(ValueError, match="init: timeout must be a number of seconds >= 0"):
        distributed.init(timeout=-2)
    with pytest.raises(TypeError, match="average_gradients: expected a list of gradients"):
        distributed.average_gradients(x)
    with pytest.raises(TypeError, match="broadcast: expected shared variables"):
        distributed.broadcast([np.zeros(3)])


SINGLETON = """
import numpy as np, arignote, arignote.tensor as T
from arignote.dialects import ag
from arignote.graph import apply_op
x = T.matrix("x")
outs = [apply_op(ag.AllreduceOp(x.value, "mean", 1000)), apply_op(ag.AllreduceOp((2 * x).value))]
a = np.arange(6.0).reshape(2, 3)
native = arignote.function([x], outs)(a)
interpreted = arignote.function([x], outs, mode=arignote.Mode(linker="py"))(a)
for got in (native, interpreted):
    np.testing.assert_array_equal(got[0], a)
    np.testing.assert_array_equal(got[1], 2 * a)
print("ok")
"""


@needs_mpi
def test_allreduce_on_a_single_mpi_process():
    """Native code calls the MPI library in a process that mpiexec did not start (MPI's
    singleton): the collective over one process is the identity, as interpreted."""
    result = subprocess.run(
        [sys.executable, "-c", SINGLETON],
        capture_output=True,
        text=True,
        timeout=GUARD,
        env=_env(),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


OTHER_ABI = """
import numpy as np, arignote, arignote.tensor as T
from arignote.dialects import ag
from arignote.graph import apply_op
from arignote.runtime import mpi
mpi.MPICH_HANDLES["COMM_WORLD"] = 0x1234  # as if mpi4py ran on an MPI of another ABI
x = T.vector("x")
try:
    arignote.function([x], apply_op(ag.AllreduceOp(x.value)))
except mpi.DistributedError as e:
    print(e)
"""


@needs_mpi
def test_library_of_another_abi_is_refused_clearly():
    """Native code uses MPICH's handles: a library whose handles differ (Open MPI's are
    addresses) is refused with a DistributedError naming it, never called."""
    result = subprocess.run(
        [sys.executable, "-c", OTHER_ABI],
        capture_output=True,
        text=True,
        timeout=GUARD,
        env=_env(),
    )
    assert result.returncode == 0, result.stderr
    assert "native ag.allreduce supports MPI libraries with MPICH's ABI" in result.stdout
    assert "mpi4py runs on MPICH" in result.stdout


# --- under mpiexec -n 2 ------------------------------------------------------------------


@needs_mpi
@pytest.mark.slow
def test_allreduce_values_on_two_processes():
    result = _launch(2, str(SCENARIOS), "values")
    assert result.returncode == 0, result.stdout + result.stderr
    expected = (
        "[[0.0, 3.0, 6.0, 9.0, 12.0], [0.0, 3.0, 6.0], [[0.5, 0.5], [0.5, 0.5], [0.5, 0.5]],"
        " [1, 3, 5], 30.0]"
    )
    lines = _ranks(result.stdout)
    for r in (0, 1):
        # FAST_RUN, FAST_COMPILE and the interpreter, then the gradient (the adjoint of
        # a sum over processes is the sum of the output gradients)
        # and the gradients averaged in one allreduce per dtype equal those averaged
        # one by one (the mean of sum(x): (10 + 20) / 2)
        grad = "grad [0.0, 12.0, 24.0, 36.0, 48.0]"
        assert lines[r] == [expected] * 3 + [grad, "bucketed True 15.0"], lines


@needs_mpi
@pytest.mark.slow
def test_broadcast_and_scatter():
    result = _launch(2, str(SCENARIOS), "shares")
    assert result.returncode == 0, result.stdout + result.stderr
    lines = _ranks(result.stdout)
    assert lines[0] == [
        "[1.0, 1.0, 1.0, 1.0] [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]] [0, 1, 2] [0, 1, 2, 3]"
    ]
    assert lines[1] == ["[1.0, 1.0, 1.0, 1.0] [[6.0, 7.0], [8.0, 9.0]] [3, 4] [4, 5, 6]"]


@needs_mpi
@pytest.mark.slow
def test_parameters_bit_identical_across_ranks():
    """The MLP example trained on two processes for 64 steps: the hash of every
    parameter's bytes is the same on both ranks."""
    args = ["examples/mpi_mlp.py", "--epochs", "2", "--train", "2048", "--digest"]
    result = _launch(2, *args)
    assert result.returncode == 0, result.stdout + result.stderr
    found = re.findall(r"rank (\d+): parameters ([0-9a-f]{16})", result.stdout)
    digests = {int(r): digest for r, digest in found}
    assert set(digests) == {0, 1}
    assert digests[0] == digests[1], digests
    accuracy = float(re.search(r"test accuracy=([\d.]+)", result.stdout).group(1))
    assert accuracy > 0.5, result.stdout  # 10 classes: far above chance


@needs_mpi
@pytest.mark.slow
def test_graph_differing_between_ranks_fails_on_every_rank():
    result = _launch(2, str(SCENARIOS), "mismatch")
    lines = _ranks(result.stdout)
    for r in (0, 1):
        assert len(lines.get(r, [])) == 1, result.stdout + result.stderr
        assert "DistributedError" in lines[r][0]
        assert "compiled on ranks [1] differs from rank 0's" in lines[r][0]


@needs_mpi
@pytest.mark.slow
def test_hanging_rank_fails_the_others_within_the_timeout():
    """Rank 1 stops joining (it sleeps 60 s): rank 0's allreduce raises after its 5 s
    timeout, and the uncaught DistributedError aborts the job, rank 1 included."""
    start = time.monotonic()
    result = _launch(2, str(SCENARIOS), "hang")
    assert time.monotonic() - start < 55, "the job waited for the sleeping rank"
    assert result.returncode != 0
    assert "did not join the collective within 5 s" in result.stdout + result.stderr


@needs_mpi
@pytest.mark.slow
def test_dead_rank_fails_the_others():
    """Rank 1 exits after the first step: MPICH's launcher ends rank 0 at once."""
    start = time.monotonic()
    result = _launch(2, str(SCENARIOS), "death")
    assert time.monotonic() - start < GUARD / 2
    assert result.returncode != 0
    assert "survived" not in result.stdout


@needs_mpi
@pytest.mark.slow
def test_dead_rank_fails_the_others_by_the_deadline():
    """The same under a launcher that leaves the others running (Hydra's
    -disable-auto-cleanup): rank 0's allreduce gives up at its 5 s deadline with a
    message, and the job aborts."""
    start = time.monotonic()
    result = _launch(2, str(SCENARIOS), "death", options=("-disable-auto-cleanup",))
    assert time.monotonic() - start < GUARD / 2
    assert result.returncode != 0
    assert "survived" not in result.stdout
    # (the end of stderr in the report: pytest's repr of `result` cuts it)
    assert "did not join the collective within 5 s" in result.stderr, result.stderr[-3000:]


def test_abort_waits_until_the_launcher_has_read_stderr():
    """Before MPI_Abort the hook waits until the pipe to the launcher is drained (the
    launcher stops forwarding once it kills the job): it returns only after the reader
    has taken every byte, and returns at its limit when nobody reads."""
    import threading

    read_end, write_end = os.pipe()
    with os.fdopen(read_end, "rb", buffering=0) as reader, os.fdopen(write_end, "w") as writer:
        writer.write("Traceback ...\nDistributedError: did not join\n")
        writer.flush()
        distributed._wait_for_the_reader(writer, limit=0.05)  # nobody reads: gives up at its limit
        got = []
        thread = threading.Thread(target=lambda: (time.sleep(0.2), got.append(reader.read(4096))))
        thread.start()
        distributed._wait_for_the_reader(writer, limit=GUARD)
        assert got == [b"Traceback ...\nDistributedError: did not join\n"]
        thread.join()


@needs_mpi
@pytest.mark.slow
def test_bench_mpi_smoke(tmp_path, capsys):
    """`python -m bench mpi` at a tiny size: a throughput row per launch, a bandwidth
    row per message size, and the SVG figure."""
    from bench import mpi as bench_mpi

    figure = tmp_path / "mpi.svg"
    argv = ["--batch", "4", "--steps", "2", "--procs", "2", "--sizes", "8e3", "--svg"]
    bench_mpi.main([*argv, str(figure)])
    out = capsys.readouterr().out
    assert re.search(r"^1 \(no mpiexec\) .*1\.00x", out, re.MULTILINE), out
    assert re.search(r"^2 \(mpiexec\) ", out, re.MULTILINE), out
    assert re.search(r"^\s+8000\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+[\d.]+$", out, re.MULTILINE), out
    assert figure.read_text().startswith("<svg")


def test_the_loop_lowering_imports_xdsls_mpi_only_when_a_function_communicates():
    """`lowering/loops/ag_mpi` takes MPICH's handles from xDSL's `lower-mpi` (which loads
    xDSL's `mpi` dialect) at the first function that communicates, not at the first
    compile of any function (a first-use import users pay in their first compile)."""
    script = (
        "import sys, numpy as np, arignote, arignote.tensor as T\n"
        "x = T.dvector('x')\n"
        "arignote.function([x], T.exp(x).sum())(np.ones(3))\n"
        "print('xdsl.transforms.lower_mpi' in sys.modules)\n"
        "from arignote.lowering.loops import ag_mpi\n"
        "print(ag_mpi.info().MPI_COMM_WORLD == ag_mpi.info().MPI_COMM_WORLD != 0)\n"
        "print('xdsl.transforms.lower_mpi' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=True
    )
    assert out.stdout.split() == ["False", "True", "True"], out.stdout
