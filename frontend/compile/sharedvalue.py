"""`arignote.shared`: variables with a persistent value (Theano's `theano.shared`).

A `SharedVariable` is an input variable (the argument of a detached block, like
`make_input`'s) that also owns a value. `function()` makes every shared variable its
graph reads an extra argument of the compiled function, fed from that value at each
call, and an update replaces the value by the array the call computed. Native code
computes most updates in the stored array itself (the `inplace-update` pass: `W - lr * g`
becomes a BLAS gemm accumulating into `W`'s buffer), and allocates a new array when it
cannot (another shape, a non-contiguous or read-only array, or one sharing memory with
another input); the reference interpreter always returns a new array. Either way no
array returned by `get_value()` (a copy) changes; an array from `get_value(borrow=True)`
or given to `shared`/`set_value` with `borrow=True` may, as in Theano.

Threads (docs/threads.md): each value has a re-entrant lock. A call of a compiled
function holds the locks of every shared variable it reads or updates, taken in one
global order (the order the values were created in, so two functions over {a, b} and
{b, a} cannot deadlock), from reading the values to storing the updates; `get_value()`
copies and `set_value()` stores under the lock. A reader therefore never sees a
half-applied update, concurrent updates are never lost, and calls on different shared
variables run in parallel. `get_value(borrow=True)` takes no lock: the array it returns
is the stored one, which a call running in another thread may be updating.
"""

from __future__ import annotations

import copy
import itertools
import sys
import threading
import warnings
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from xdsl.ir import Block, BlockArgument, SSAValue

from arignote.compile.device import check_device
from arignote.configuration import config
from arignote.graph import Variable
from arignote.tensor.type import TensorType

_OWNER = "_arignote_shared"
"""The attribute of a shared variable's block argument that holds the variable: the
graph keeps its shared variables (and their values) alive."""


_ORDER = itertools.count()
"""The global order of the state locks: their creation order."""


class StateLock:
    """A re-entrant lock over some state of compiled functions (a shared variable's
    value, a function's `In(update=...)` values), with its place in the one order every
    call takes its locks in (`order`). Re-entrant, so that a print hook running inside a
    call may read the variables that call holds."""

    __slots__ = ("lock", "order")

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.order = next(_ORDER)  # atomic under the GIL


def ordered_locks(states: Iterable[StateLock]) -> tuple[Any, ...]:
    """The distinct locks of `states` in the global order: the order to take them in."""
    unique = {id(s): s for s in states}
    return tuple(s.lock for s in sorted(unique.values(), key=lambda s: s.order))


class _LockSet:
    """Several locks taken together: `acquire` takes them in the order given, `release`
    releases them in reverse."""

    __slots__ = ("locks",)

    def __init__(self, locks: tuple[Any, ...]):
        self.locks = locks

    def acquire(self) -> None:
        taken = 0
        try:
            for lock in self.locks:
                lock.acquire()
                taken += 1
        except BaseException:  # (an interrupt while waiting): release what was taken
            for lock in reversed(self.locks[:taken]):
                lock.release()
            raise

    def release(self) -> None:
        for lock in reversed(self.locks):
            lock.release()


def holding(locks: tuple[Any, ...]) -> Any:
    """What holds `locks` (in the order to take them) with `acquire()` and `release()`:
    None when there are none, the lock itself when there is one, else a `_LockSet`.
    (Callers write `acquire(); try: ... finally: release()`, cheaper than `with`.)"""
    if not locks:
        return None
    return locks[0] if len(locks) == 1 else _LockSet(locks)


class _Storage(StateLock):
    """The value of a shared variable; clones of the variable share it (and its lock).

    With a GPU device the value may live on the device (`config.device=cuda`): a GPU
    function's update stores a device array, `value` then copies it to the host once
    (kept until the next update), and `device_value()` gives a GPU function the device
    array, copying a host value to the device once."""

    __slots__ = ("_host", "_device")

    def __init__(self, value: np.ndarray):
        super().__init__()
        self.value = value

    @property
    def value(self) -> np.ndarray:
        host = self._host
        if host is None:
            host = self._host = self._device.get()
        return host

    @value.setter
    def value(self, value: Any) -> None:
        if type(value).__name__ == "GPUArray":
            self._host, self._device = None, value
        else:
            self._host, self._device = value, None

    def device_value(self) -> Any:
        """The value as a device array (copied to the device once)."""
        device = self._device
        if device is None:
            from arignote.runtime.cuda import to_device

            if config.warn_transfers:
                from arignote.compile.function import TransferWarning

                warnings.warn(
                    f"a shared value ({self._host.dtype}, shape {self._host.shape}) copied "
                    "from the host to the GPU",
                    TransferWarning,
                    stacklevel=3,
                )
            device = self._device = to_device(self._host)
        return device

    @property
    def on_device(self) -> bool:
        """Whether the value lives on the device (the host copy may be stale)."""
        return self._device is not None and self._host is None

    # A copy (`copy.deepcopy`, `pickle`) carries the value and gets a lock of its own: a
    # lock cannot be pickled, and the copy shares nothing with the original.
    def __getstate__(self) -> np.ndarray:
        return self.value

    def __setstate__(self, value: np.ndarray) -> None:
        self.__init__(value)


def filter_value(
    type: TensorType, value: Any, strict: bool = False, allow_downcast: bool | None = None
) -> np.ndarray:
    """`value` as an array of `type` (Theano's `TensorType.filter`): with `strict` only an
    ndarray of exactly the dtype is accepted; a Python float is accepted for a `floatX`
    type unless `allow_downcast` is False."""
    if strict:
        if not isinstance(value, np.ndarray):
            raise TypeError(f"{type} expected an ndarray object (strict=True), got {value!r}")
        if value.dtype != type.numpy_dtype:
            raise TypeError(
                f"{type} expected an ndarray with dtype={type.dtype} (strict=True), "
                f"got dtype={value.dtype}"
            )
    if (
        allow_downcast is None
        and isinstance(value, float)
        and type.dtype == config.floatX
        and type.ndim == 0
    ):
        allow_downcast = True
    return type.filter(value, allow_downcast)


class SharedVariable(Variable):
    """A variable with a persistent value, usable in any expression and by any number
    of functions: `get_value`, `set_value`; a `default_update` attribute, when set, is
    the update every function that reads the variable applies unless it is told not to
    (`no_default_updates`)."""

    def __init__(
        self,
        name: str | None,
        type: TensorType,
        value: Any,
        strict: bool = False,
        allow_downcast: bool | None = None,
        container: _Storage | None = None,
    ):
        block = Block(arg_types=[type.to_ir()])
        arg = block.args[0]
        if name is not None and BlockArgument.is_valid_name(name):
            arg.name_hint = name
        super().__init__(arg, name)
        setattr(arg, _OWNER, self)
        self._type = type
        self.strict = strict
        self.allow_downcast = allow_downcast
        if container is not None:
            self._storage = container
        else:
            self._storage = _Storage(filter_value(type, value, strict, allow_downcast))

    @property
    def type(self) -> TensorType:
        return self._type

    def get_value(self, borrow: bool = False, return_internal_type: bool = False) -> np.ndarray:
        """The value; a copy unless `borrow=True`, which returns the stored array itself
        (which a later update may modify in place, or replace: see the module doc)."""
        storage = self._storage
        if return_internal_type and storage.on_device:  # a GPU array (config.device=cuda)
            device = storage.device_value()
            return device if borrow else device.copy()
        if borrow:
            return storage.value
        storage.lock.acquire()  # not while a call updates it in place
        try:
            return storage.value.copy()
        finally:
            storage.lock.release()

    def set_value(self, new_value: Any, borrow: bool = False) -> None:
        """Store `new_value` (checked and converted like a function input); it is copied
        unless `borrow=True`, in which case the array itself is stored when it already
        has the right dtype (later changes to it are seen by the functions, and their
        updates may write into it)."""
        array = filter_value(self._type, new_value, self.strict, self.allow_downcast)
        if (
            not borrow
            and isinstance(new_value, np.ndarray)
            and np.may_share_memory(array, new_value)
        ):
            array = array.copy()
        storage = self._storage
        storage.lock.acquire()  # after any call using the old value has stored its update
        try:
            storage.value = array
        finally:
            storage.lock.release()

    def zero(self, borrow: bool = False) -> None:
        """Set the value to zeros of the same shape."""
        self.set_value(np.zeros_like(self._storage.value), borrow=True)

    def clone(self) -> SharedVariable:
        """A new shared variable of the same type and name sharing this one's value."""
        cp = SharedVariable(
            self.name, self._type, None, self.strict, self.allow_downcast, self._storage
        )
        cp.tag = copy.copy(self.tag)
        return cp

    def __repr__(self) -> str:
        return self.name if self.name is not None else f"<SharedVariable {self._type}>"

    __str__ = __repr__


def shared_of(value: SSAValue) -> SharedVariable | None:
    """The shared variable whose SSA value is `value`, if any."""
    return getattr(value, _OWNER, None) if isinstance(value, BlockArgument) else None


def _is_random_state(value: Any) -> bool:
    """Whether `value` is a `numpy.random.RandomState`, without importing `numpy.random`
    (about 20 ms, which `np.random` costs at first use in NumPy 2): a program holding one
    has imported it."""
    random = sys.modules.get("numpy.random")
    return random is not None and isinstance(value, random.RandomState)


def shared(
    value: Any,
    name: str | None = None,
    strict: bool = False,
    allow_downcast: bool | None = None,
    *,
    borrow: bool = False,
    broadcastable: Sequence[bool] | None = None,
    target: str = "cpu",
) -> SharedVariable:
    """A shared variable holding `value` (Theano's `theano.shared`).

    `value` is a NumPy array (it keeps its dtype; copied unless `borrow=True`) or a
    number (a 0-d variable: Python ints give int64, floats float64, NumPy scalars keep
    their dtype), or a `numpy.random.RandomState` (a `RandomStateSharedVariable`, see
    `arignote.tensor.shared_randomstreams`). Array dimensions are not broadcastable,
    even of length 1, unless `broadcastable` says so.
    """
    if isinstance(value, Variable):
        raise TypeError(
            "Shared variable constructor needs numeric values and not symbolic variables."
        )
    if target != "cpu":
        raise TypeError(f"shared: unsupported target {target!r}; only 'cpu' is available")
    check_device("shared()")
    if _is_random_state(value):  # Theano's randomstate_constructor
        from arignote.tensor.shared_randomstreams import randomstate_constructor

        return randomstate_constructor(value, name, strict, allow_downcast, borrow)
    if isinstance(value, np.ndarray):
        array = value if borrow else value.copy()
        if broadcastable is None:
            broadcastable = (False,) * array.ndim
    elif isinstance(value, bool | int | float | np.number | np.bool_):
        array = np.asarray(value)
        if broadcastable is None:
            broadcastable = ()
    else:
        raise TypeError(
            f"shared: no shared variable can hold a {type(value).__name__}; expected a "
            "NumPy array or a number"
        )
    broadcastable = tuple(broadcastable)
    if len(broadcastable) != array.ndim:
        raise TypeError(
            f"shared: broadcastable {broadcastable} has {len(broadcastable)} dimensions, "
            f"the value {array.ndim}"
        )
    type_ = TensorType(array.dtype, broadcastable)
    return SharedVariable(name, type_, array, strict, allow_downcast)
