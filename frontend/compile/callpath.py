"""The fast call of a function with state: a Python closure, generated per function,
around the native entry point (`arignote.runtime.entry`) for a function that reads or
updates shared variables.

`Function.__call__` hands positional arguments to `Function._direct` when it has one.
For a function without state that is the entry point itself. For one that reads shared
variables and stores updates, `stateful_call` builds the equivalent of

```python
def call(*args):
    r = entry(*args, s0.value, s1.value)   # the shared variables' current values
    if r is None:                          # anything unusual: the Python path
        return None
    u0.value = r[2]                        # store the updates (after the call, so
    u1.value = r[3]                        # every result is computed from old values)
    del r[2:]
    return r                               # (or r[0] for a single output)
```

with the storages bound as constants of the closure (`s<i>` the storage of each shared
variable read, `u<j>` of each one updated), unrolled: half the Python time of a loop
over the storages (about 0.7 µs instead of 2 µs per call of the logistic-regression
step). With one result in all, the entry point returns that array rather than a list:
the closure stores it as the update, or returns it as the output (a function reading
a shared variable into one output, or only updating one, takes this path too).

The body runs holding the locks of those shared variables (taken in the global
order of `arignote.compile.sharedvalue.ordered_locks`, released in reverse), so that it
reads the values and stores the updates as one step for every other thread (see
docs/threads.md). Each lock costs an `acquire` and a `release` call (about 60 ns
together); a function without state takes none.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

NESTED_LOCKS = 8
"""Up to this many locks are taken in nested `try` blocks; more in a loop (Python allows
20 statically nested blocks, and a training function may update hundreds of shared
variables)."""


def _holding(n_locks: int, body: Sequence[str]) -> list[str]:
    """`body` (lines indented by 4) run holding `n_locks` locks, whose bound `acquire`
    and `release` methods are `acquire<k>` and `release<k>`: each taken, then released
    whatever happens, in nested `try`/`finally` (cheaper than `with`, which looks up
    and calls `__enter__` and `__exit__`). Beyond `NESTED_LOCKS`, the tuples `acquires`
    and `releases` are walked instead, releasing only the locks taken."""
    lines = list(body)
    if n_locks > NESTED_LOCKS:
        return [
            "    taken = 0",
            "    try:",
            "        for acquire in acquires:",
            "            acquire()",
            "            taken += 1",
            *("    " + line for line in lines),
            "    finally:",
            "        for release in releases[n_locks - taken:]:",
            "            release()",
        ]
    for k in reversed(range(n_locks)):
        lines = [
            f"    acquire{k}()",
            "    try:",
            *("    " + line for line in lines),
            "    finally:",
            f"        release{k}()",
        ]
    return lines


def _build(name: str, lines: Sequence[str], scope: dict[str, Any]) -> Callable[..., Any]:
    exec("\n".join(lines), scope)  # noqa: S102 - code built from counts and names only
    return scope[name]


def stateful_call(
    entry: Callable[..., Any],
    read: Sequence[Any],
    updated: Sequence[Any],
    n_out: int,
    single: bool,
    locks: Sequence[Any] = (),
) -> Callable[..., Any] | None:
    """The closure described above: `entry` the native entry point, `read` the storages
    of the shared variables it takes after the explicit inputs, `updated` the storages
    its results after the `n_out` outputs are stored into, `locks` the locks held
    meanwhile (in the order to take them); `single`: return the one output itself
    rather than a list. With one result in all, the entry point returns it as an array
    rather than a list (an update stored, or the output returned); with none, or a
    single output asked of several, None (the general path handles it)."""
    n_results = n_out + len(updated)
    if n_results == 0 or (single and n_out != 1):
        return None
    values = ", ".join(f"s{i}.value" for i in range(len(read)))
    body = [
        f"    r = entry(*args, {values})" if read else "    r = entry(*args)",
        "    if r is None:",
        "        return None",
    ]
    if n_results == 1:  # r is the array
        body += ["    u0.value = r"] if updated else []
        result = "[]" if updated else ("r" if single else "[r]")
        tail = [f"    return {result}"]
    else:
        body += [f"    u{j}.value = r[{n_out + j}]" for j in range(len(updated))]
        tail = ["    return r[0]"] if single else [f"    del r[{n_out}:]", "    return r"]
    lines = ["def call(*args):", *_holding(len(locks), body), *tail]
    scope: dict[str, Any] = {"entry": entry}
    scope.update({f"s{i}": s for i, s in enumerate(read)})
    scope.update({f"u{j}": u for j, u in enumerate(updated)})
    for k, lock in enumerate(locks):  # the bound methods: no attribute lookup per call
        scope[f"acquire{k}"], scope[f"release{k}"] = lock.acquire, lock.release
    scope["acquires"] = tuple(lock.acquire for lock in locks)
    scope["releases"] = tuple(lock.release for lock in reversed(locks))
    scope["n_locks"] = len(locks)
    return _build("call", lines, scope)
