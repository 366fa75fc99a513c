"""Data-parallel training across processes and machines, on MPI (`arignote[mpi]`).

Launch one process per core or machine with `mpiexec -n 4 python train.py`; each runs
the same script on its shard of every minibatch, and averages its gradients with the
others' inside the compiled step (`average_gradients`, an `ag.allreduce` per gradient
lowered to calls of the MPI library), so every process ends each step with the same
parameters. See docs/distributed.md.

```python
import numpy as np
import arignote
import arignote.tensor as T
from arignote import distributed

distributed.init()
w = arignote.shared(np.zeros(3), name="w")
distributed.broadcast([w])                      # rank 0's initial values everywhere
x, y = T.matrix("x"), T.vector("y")
cost = T.mean((T.dot(x, w) - y) ** 2)
(g,) = distributed.average_gradients(arignote.grad(cost, [w]))
step = arignote.function([x, y], cost, updates=[(w, w - 0.1 * g)])
data = np.ones((8, 3)), np.ones(8)
xs, ys = distributed.scatter(data)              # this process's rows of rank 0's data
step(xs, ys)
```

Without MPI (mpi4py not installed, or a plain `python train.py`) there is one process:
`rank()` is 0, `size()` 1, `allreduce` returns its argument and `broadcast` / `scatter`
do nothing, so the same script runs unchanged.

Errors are raised on every process instead of deadlocking: a function whose compiled
graph differs between processes fails at its first call (the processes compare a hash
of its IR before its first collective); a collective whose peers do not arrive within
the timeout (a process died or hangs) raises `DistributedError`. An uncaught
`DistributedError` then aborts the whole MPI job (`MPI_Abort`) after its traceback, so
no process is left waiting.
"""

from __future__ import annotations

import array
import fcntl
import hashlib
import os
import stat
import sys
import termios
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from arignote.runtime.mpi import DistributedError, world

__all__ = [
    "DistributedError",
    "allreduce",
    "average_gradients",
    "broadcast",
    "init",
    "is_distributed",
    "rank",
    "scatter",
    "size",
]

DEFAULT_TIMEOUT = 300.0
"""Seconds a collective waits for the other processes unless `init(timeout=)` says."""

_timeout = [DEFAULT_TIMEOUT]


def init(timeout: float = DEFAULT_TIMEOUT) -> None:
    """Joins the MPI job (when launched by `mpiexec`; nothing otherwise) and sets how many
    seconds the collectives built from now on wait for the other processes before they
    raise `DistributedError` (0: forever)."""
    if not isinstance(timeout, int | float) or timeout < 0:
        raise ValueError(f"init: timeout must be a number of seconds >= 0, got {timeout!r}")
    _timeout[0] = float(timeout)
    if world() is not None:
        _install_abort_hook()


def is_distributed() -> bool:
    """Whether this process is one of several in an MPI job."""
    return world() is not None


def rank() -> int:
    """This process's rank in the MPI job (0 without one)."""
    comm = world()
    return 0 if comm is None else comm.Get_rank()


def size() -> int:
    """The number of processes of the MPI job (1 without one)."""
    comm = world()
    return 1 if comm is None else comm.Get_size()


# --- symbolic collectives ---------------------------------------------------------------


def _timeout_ms(timeout: float | None) -> int:
    seconds = _timeout[0] if timeout is None else timeout
    if not isinstance(seconds, int | float) or seconds < 0:
        raise ValueError(f"allreduce: timeout must be a number of seconds >= 0, got {timeout!r}")
    return round(seconds * 1000)


def allreduce(x: Any, op: str = "mean", timeout: float | None = None) -> Any:
    """The `op` (`"sum"` or `"mean"`) of the tensor `x` over every process, on every
    process (an `ag.allreduce` node; `x` itself without an MPI job). `timeout`: seconds
    to wait for the other processes (default: `init`'s)."""
    from arignote.dialects import ag
    from arignote.graph import apply_op
    from arignote.tensor.basic import as_tensor_variable

    if op not in ag.REDUCTIONS:
        raise ValueError(f"allreduce: op must be one of {ag.REDUCTIONS}, got {op!r}")
    var = as_tensor_variable(x)
    if op == "mean" and var.dtype not in ("float32", "float64"):
        raise TypeError(f"allreduce: op='mean' needs a float tensor, got dtype {var.dtype}")
    milliseconds = _timeout_ms(timeout)
    if world() is None:
        return var
    return apply_op(ag.AllreduceOp(var.value, op, milliseconds))


def average_gradients(
    grads: Sequence[Any], timeout: float | None = None, bucket: bool = False
) -> list[Any]:
    """The mean of each gradient over the processes: updates computed from them are the
    same on every process. Each gradient is averaged by its own allreduce, in place in
    the gradient's buffer (no copy). With `bucket`, the gradients of each dtype travel
    in one allreduce instead (flattened and concatenated, then split and reshaped): one
    collective per step, which pays for many small gradients (latency bound) but costs
    a copy of each, which large ones do not repay."""
    if isinstance(grads, str) or not isinstance(grads, Sequence):
        raise TypeError(f"average_gradients: expected a list of gradients, got {grads!r}")
    if not bucket or world() is None:
        return [allreduce(g, "mean", timeout) for g in grads]
    from arignote.tensor.basic import as_tensor_variable

    variables = [as_tensor_variable(g) for g in grads]
    averaged: list[Any] = list(variables)
    for dtype in dict.fromkeys(v.dtype for v in variables):
        indices = [i for i, v in enumerate(variables) if v.dtype == dtype]
        means = _bucketed([variables[i] for i in indices], timeout)
        for i, value in zip(indices, means, strict=True):
            averaged[i] = value
    return averaged


def _bucketed(grads: list[Any], timeout: float | None) -> list[Any]:
    """The mean of `grads` (one dtype) over the processes through one allreduce."""
    import arignote.tensor as T

    if len(grads) == 1:
        return [allreduce(grads[0], "mean", timeout)]
    total = allreduce(T.concatenate([g.flatten() for g in grads]), "mean", timeout)
    parts, start = [], 0
    for g in grads:
        stop = start + T.prod(g.shape) if g.ndim else start + 1
        parts.append(total[start:stop].reshape(g.shape, ndim=g.ndim))
        start = stop
    return parts


# --- values held in Python ------------------------------------------------------------


def _gather_checked(what: str, comm: Any, mine: object, root: int) -> None:
    """DistributedError on every process when `mine` differs from the root's."""
    every = comm.allgather(mine)
    wrong = [r for r, value in enumerate(every) if value != every[root]]
    if wrong:
        raise DistributedError(
            f"{what}: processes {wrong} hold {[every[r] for r in wrong]}, rank {root} holds "
            f"{every[root]}: every process must create the same shared variables"
        )


def _check_root(what: str, root: int, n: int) -> None:
    if not isinstance(root, int) or not 0 <= root < n:
        raise ValueError(f"{what}: root must be a rank in [0, {n}), got {root!r}")


def broadcast(shared_vars: Sequence[Any], root: int = 0) -> None:
    """Sets the value of each shared variable to the one it has on process `root` (call
    it on every process, with the same variables, after initializing them)."""
    from arignote.compile.sharedvalue import SharedVariable

    if isinstance(shared_vars, SharedVariable):
        shared_vars = [shared_vars]
    bad = [v for v in shared_vars if not isinstance(v, SharedVariable)]
    if bad:
        raise TypeError(f"broadcast: expected shared variables, got {bad[0]!r}")
    comm = world()
    if comm is None:
        return
    _check_root("broadcast", root, comm.Get_size())
    values = [np.ascontiguousarray(v.get_value(borrow=True)) for v in shared_vars]
    layout = [(v.name, a.shape, str(a.dtype)) for v, a in zip(shared_vars, values, strict=True)]
    _gather_checked("broadcast", comm, layout, root)
    for var, value in zip(shared_vars, values, strict=True):
        buffer = value.copy()
        comm.Bcast(buffer, root=root)
        var.set_value(buffer, borrow=True)


def _scatter_array(comm: Any, array: np.ndarray | None, root: int, index: int) -> np.ndarray:
    """This process's rows of the root's `array` (`np.array_split`'s shards)."""
    here, n = comm.Get_rank(), comm.Get_size()
    if here == root and not isinstance(array, np.ndarray):
        array = np.asarray(array)
    layout = (array.shape, array.dtype.str) if here == root else None  # type: ignore[union-attr]
    shape, dtype = comm.bcast(layout, root=root)
    if not shape:
        raise DistributedError(f"scatter: item {index} is a 0-d array: nothing to split")
    rows = [len(s) for s in np.array_split(np.arange(shape[0]), n)]
    row_size = int(np.prod(shape[1:], dtype=np.int64))
    counts = [r * row_size for r in rows]
    mine = np.empty((rows[here], *shape[1:]), dtype=np.dtype(dtype))
    send = [np.ascontiguousarray(array), counts] if here == root else None
    comm.Scatterv(send, mine, root=root)
    return mine


def scatter(dataset: Any, root: int = 0) -> Any:
    """This process's shard of `dataset` held by process `root`: an array (split along
    its first axis into `size()` nearly equal, consecutive parts, as `np.array_split`)
    or a tuple/list of arrays with the same first length (each split alike, e.g. `(x,
    y)`). The other processes may pass None. Without an MPI job, `dataset` itself."""
    comm = world()
    if comm is None:
        return dataset
    _check_root("scatter", root, comm.Get_size())
    here = comm.Get_rank()
    many = isinstance(dataset, tuple | list)
    # the root says how many arrays it splits (-1: one array, not a tuple)
    count = comm.bcast((len(dataset) if many else -1) if here == root else None, root=root)
    items = list(dataset) if here == root and many else [dataset] * max(count, 1)
    shards = [_scatter_array(comm, items[i], root, i) for i in range(max(count, 1))]
    return tuple(shards) if count >= 0 else shards[0]


# --- the checks around a compiled function -----------------------------------------------


def graph_digest(ir_text: str) -> bytes:
    """The hash the processes compare before a function's first collective."""
    return hashlib.sha256(ir_text.encode()).digest()


def check_same_graph(digest: bytes, what: str = "function") -> None:
    """DistributedError on every process unless every process has the same `digest`,
    or on this one when the others do not arrive within the timeout."""
    comm = world()
    if comm is None:
        return
    _install_abort_hook()
    mine = np.frombuffer(digest, dtype=np.uint8)
    every = np.empty((comm.Get_size(), mine.size), dtype=np.uint8)
    request = comm.Iallgather(mine, every)
    deadline = time.monotonic() + (_timeout[0] or float("inf"))
    while not request.Test():
        if time.monotonic() > deadline:
            raise DistributedError(
                f"rank {comm.Get_rank()}: the other processes did not reach the first call "
                f"of {what} within {_timeout[0]:g} s: a process died, hangs, or compiled "
                "another graph"
            )
        time.sleep(0.0002)
    differ = [r for r in range(len(every)) if bytes(every[r]) != bytes(every[0])]
    if differ:
        raise DistributedError(
            f"rank {comm.Get_rank()}: {what} compiled on ranks {differ} differs from rank "
            f"0's (IR hashes {bytes(every[differ[0]]).hex()[:12]} vs "
            f"{bytes(every[0]).hex()[:12]}): every process must build the same graph"
        )


class FirstCallCheck:
    """A compiled function's runner that compares the function's graph across the
    processes before its first call (`check_same_graph`), then runs it."""

    def __init__(self, run: Callable[..., Any], digest: bytes, name: str):
        self.run = run
        self.digest = digest
        self.name = name
        self.checked = False

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not self.checked:
            check_same_graph(self.digest, f"function {self.name!r}")
            self.checked = True
        return self.run(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.run, name)


_hook_installed = [False]


def _install_abort_hook() -> None:
    """An uncaught DistributedError aborts the MPI job after its traceback (the other
    processes may be waiting in a collective this one will never join)."""
    if _hook_installed[0]:
        return
    _hook_installed[0] = True
    previous = sys.excepthook

    def hook(kind: type[BaseException], error: BaseException, tb: Any) -> None:
        previous(kind, error, tb)
        comm = world()
        if isinstance(error, DistributedError) and comm is not None:
            sys.stderr.flush()
            _wait_for_the_reader(sys.stderr)
            comm.Abort(1)

    sys.excepthook = hook


def _wait_for_the_reader(stream: Any, limit: float = 2.0) -> None:
    """Wait (at most `limit` s) until the launcher has read what this process wrote to
    `stream`, when it is a pipe: MPI_Abort makes the launcher kill the job and stop
    forwarding output, so a traceback still in the pipe (its last lines, the message)
    would be lost."""
    try:
        fd = stream.fileno()
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return
        pending = array.array("i", [0])
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            fcntl.ioctl(fd, termios.FIONREAD, pending)
            if pending[0] == 0:
                return
            time.sleep(0.01)
    except (OSError, ValueError, AttributeError):
        return
