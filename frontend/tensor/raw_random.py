"""`arignote.tensor.raw_random` (Theano's `theano.tensor.raw_random`): random draws from
`numpy.random.RandomState` generators held in the graph.

A generator is a value of `RandomStateType`. In the graph it travels as its state packed
into a `uint32` vector of `STATE_WORDS` words (the 624 Mersenne-Twister keys, the
position, the has-Gaussian flag and the cached Gaussian's two words), so a state is an
ordinary array: a shared variable stores it, an update replaces it, `scan` carries it
from step to step, and the reference interpreter and native code pass it like any
array. A draw is a `RandomFunction` node: from the state `r`, the requested `size` and
the distribution's parameters it computes the next state and the sample, calling the
same `numpy.random.RandomState` method with the same arguments as Theano's
`RandomFunction.perform`, so a seed gives Theano's numbers. The node is an
`ag.python_op` (Theano computes these draws in Python too): the interpreter runs it,
natively compiled code calls back into Python for this node alone (see
`arignote.compile.ops`); in the body of a `scan` such a node sends the function to the
interpreter. The node is a pure function of its inputs (the state goes in, the next
state comes out), so it is drawn once per call however many times its sample is used.

```python
import numpy
import arignote
from arignote.tensor import raw_random

rng = arignote.shared(numpy.random.RandomState(42))
new_rng, sample = raw_random.uniform(rng, size=(2, 3))
f = arignote.function([], sample, updates=[(rng, new_rng)])
assert numpy.allclose(f(), numpy.random.RandomState(42).uniform(size=(2, 3)))
```
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.ir import Block, BlockArgument

import arignote.tensor as T
from arignote.configuration import config
from arignote.graph import Apply, Op, Variable, _input_tag
from arignote.tensor.type import TensorType, upcast_dtypes

__all__ = [
    "RandomFunction",
    "RandomStateType",
    "RandomStreamsBase",
    "binomial",
    "choice",
    "choice_helper",
    "multinomial",
    "multinomial_helper",
    "normal",
    "permutation",
    "permutation_helper",
    "poisson",
    "random_integers",
    "random_integers_helper",
    "random_make_inplace",
    "random_state_type",
    "uniform",
]

_KEYS = 624
STATE_WORDS = _KEYS + 4
"""The length of a packed state: keys, position, has-Gaussian, cached Gaussian (2)."""


# --- the state of a generator as an array -------------------------------------------------


def pack_state(rng: np.random.RandomState) -> np.ndarray:
    """The state of `rng` as a `uint32` vector of `STATE_WORDS` words."""
    name, keys, pos, has_gauss, gauss = rng.get_state(legacy=True)
    packed = np.empty(STATE_WORDS, np.uint32)
    packed[:_KEYS] = keys
    packed[_KEYS] = pos
    packed[_KEYS + 1] = has_gauss
    packed[_KEYS + 2 :] = np.array([gauss], np.float64).view(np.uint32)
    return packed


def check_packed(array: Any, what: str) -> np.ndarray:
    """`array` if it is a packed state (a `uint32` vector of `STATE_WORDS` words whose
    position and flag are in range), else a TypeError naming `what`."""
    ok = (
        isinstance(array, np.ndarray)
        and array.dtype == np.uint32
        and array.shape == (STATE_WORDS,)
        and array[_KEYS] <= _KEYS
        and array[_KEYS + 1] <= 1
    )
    if not ok:
        raise TypeError(
            f"{what}: expected a numpy.random.RandomState (or its state packed as a uint32 "
            f"vector of {STATE_WORDS} words), got {_describe(array)}"
        )
    return array


def _describe(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"a {value.dtype} array of shape {value.shape}"
    return repr(value) if isinstance(value, int | float | str) else type(value).__name__


def unpack_state(packed: np.ndarray, rng: np.random.RandomState | None = None) -> Any:
    """A `RandomState` in the state `packed` (`rng` itself when given)."""
    packed = check_packed(packed, "RandomStateType")
    gauss = float(packed[_KEYS + 2 :].copy().view(np.float64)[0])
    state = ("MT19937", packed[:_KEYS], int(packed[_KEYS]), int(packed[_KEYS + 1]), gauss)
    rng = np.random.RandomState() if rng is None else rng
    rng.set_state(state)
    return rng


# --- the type -----------------------------------------------------------------------------


class RandomStateType(TensorType):
    """The type of a `numpy.random.RandomState` value (Theano's `RandomStateType`).

    Its values are `RandomState` objects where the user sees them (`shared`,
    `get_value`, `set_value`, function inputs) and the generator's state packed into a
    `uint32` vector of `STATE_WORDS` words inside the graph (see the module doc)."""

    def __init__(self) -> None:
        super().__init__("uint32", (False,), name="RandomStateType")

    def __call__(self, name: str | None = None) -> Variable:
        block = Block(arg_types=[self.to_ir()])
        value = block.args[0]
        if name is not None and BlockArgument.is_valid_name(name):
            value.name_hint = name
        var = RandomStateVariable(value, name)
        var.tag = _input_tag(var)
        return var

    def filter(
        self, data: Any, strict: bool = False, allow_downcast: bool | None = None
    ) -> np.ndarray:
        """The packed state of the `RandomState` `data` (a packed state is accepted as
        is); a TypeError for anything else."""
        if isinstance(data, np.random.RandomState):
            return pack_state(data)
        return check_packed(data, "RandomStateType")

    def is_valid_value(self, a: Any) -> bool:
        return type(a) is np.random.RandomState

    def values_eq(self, a: Any, b: Any) -> bool:
        """Whether two generators are in the same state (the cached Gaussian compared
        only when there is one)."""
        sa, sb = pack_state(_as_rng(a)), pack_state(_as_rng(b))
        if not np.array_equal(sa[: _KEYS + 2], sb[: _KEYS + 2]):
            return False
        return sa[_KEYS + 1] == 0 or np.array_equal(sa[_KEYS + 2 :], sb[_KEYS + 2 :])

    def get_shape_info(self, obj: Any) -> None:
        return None

    def get_size(self, shape_info: Any) -> int:
        return STATE_WORDS * 4

    @staticmethod
    def may_share_memory(a: Any, b: Any) -> bool:
        return a is b

    def __reduce__(self) -> Any:
        return _random_state_type, ()


def _random_state_type() -> RandomStateType:
    return random_state_type


def _as_rng(value: Any) -> np.random.RandomState:
    return value if isinstance(value, np.random.RandomState) else unpack_state(value)


random_state_type = RandomStateType()


class RandomStateVariable(Variable):
    """A variable of `RandomStateType` (the state output of a draw)."""

    @property
    def type(self) -> TensorType:
        return random_state_type


# --- the op ---------------------------------------------------------------------------------


class RandomFunction(Op):
    """The op drawing from a `numpy.random.RandomState` (Theano's `RandomFunction`).

    `fn` is the name of a `RandomState` method or a function `fn(random_state, *args,
    size)` (the helpers below); `outtype` the `TensorType` of the sample; `ndim_added`
    how many dimensions the sample has beyond `size`'s length (1 for `permutation` and
    `multinomial`). `inplace` is accepted for Theano's signature: a draw always returns
    a new state array (the state is small)."""

    __props__ = ("fn", "outtype", "inplace", "ndim_added")

    def __init__(
        self,
        fn: str | Callable[..., Any],
        outtype: TensorType,
        inplace: bool = False,
        ndim_added: int = 0,
    ):
        self.__setstate__(
            {"fn": fn, "outtype": outtype, "inplace": inplace, "ndim_added": ndim_added}
        )

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("exec_fn", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        fn = state["fn"]
        self.exec_fn = getattr(np.random.RandomState, fn) if isinstance(fn, str) else fn
        if not isinstance(state["outtype"], TensorType):
            raise TypeError(f"RandomFunction: outtype must be a TensorType, got {self.outtype!r}")

    def __eq__(self, other: object) -> bool:
        same = type(self) is type(other)
        return same and self._props() == other._props()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self), self.fn, self.outtype, self.inplace, self.ndim_added))

    def __str__(self) -> str:
        return f"RandomFunction{{{self.exec_fn.__name__}}}"

    def make_node(self, r: Any, shape: Any, *args: Any) -> Apply:
        """The draw from `r` (a variable of `RandomStateType`, e.g. a shared variable of a
        `RandomState`) of a sample of `shape` (an integer vector; empty: the shape numpy
        gives for the parameters `args`); outputs: the new state and the sample."""
        if not isinstance(r, Variable) or not isinstance(r.type, RandomStateType):
            raise TypeError(
                f"{self}: the first input must be a variable of RandomStateType (e.g. "
                f"arignote.shared(numpy.random.RandomState(seed))), got {r!r}"
            )
        shape = T.as_tensor_variable(shape, ndim=1) if not isinstance(shape, Variable) else shape
        if shape.ndim != 1 or shape.dtype not in ("int64", "int32"):
            raise TypeError(f"{self}: shape must be an int64 or int32 vector, got {shape.type}")
        inputs = [r, shape, *(T.as_tensor_variable(a) for a in args)]
        outputs = [random_state_type(), self.outtype()]
        node = Apply(self, inputs, outputs)
        # the graph keeps its variables weakly: the node keeps these (the state's type
        # is RandomStateType) until the caller holds them
        node.made_outputs = outputs  # type: ignore[attr-defined]
        return node

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        state, shape, *args = inputs
        rng = unpack_state(state)
        size = None if len(shape) == 0 else tuple(int(s) for s in shape)
        if size is not None and min(size) < 0:
            raise ValueError(f"{self}: size {size} has a negative dimension")
        if size is not None and self.outtype.ndim != len(size) + self.ndim_added:
            raise ValueError(
                f"Shape mismatch: self.outtype.ndim ({self.outtype.ndim}) != len(shape) "
                f"({len(size)}) + self.ndim_added ({self.ndim_added})"
            )
        sample = np.asarray(self.exec_fn(rng, *args, size), dtype=self.outtype.dtype)
        if size is None and sample.ndim == 0 and self.outtype.ndim > 0:
            sample = sample.reshape([1] * self.outtype.ndim)
        _check_sample(self, sample, size)
        output_storage[0][0] = pack_state(rng)
        output_storage[1][0] = sample

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Any]) -> list[Any]:
        from arignote.gradient import grad_undefined

        return [
            grad_undefined(self, k, x, "No gradient defined through raw random numbers op")
            for k, x in enumerate(inputs)
        ]

    def R_op(self, inputs: Sequence[Any], eval_points: Sequence[Any]) -> list[None]:  # noqa: N802
        return [None for _ in eval_points]


def _check_sample(op: RandomFunction, sample: np.ndarray, size: tuple[int, ...] | None) -> None:
    if sample.ndim != op.outtype.ndim:
        raise ValueError(
            f'Shape mismatch: "out" should have dimension {op.outtype.ndim}, but the value '
            f'produced by "perform" has dimension {sample.ndim}'
        )
    if size is None:
        return
    drawn = sample.shape[: sample.ndim - op.ndim_added]
    if drawn != size:
        raise ValueError(
            f'Shape mismatch: "out" should have shape {size}'
            + (f" (plus {op.ndim_added} extra dimensions)" if op.ndim_added else "")
            + f', but the value produced by "perform" has shape {sample.shape}'
        )
    for axis, b in enumerate(op.outtype.broadcastable):
        if b and sample.shape[axis] != 1:
            raise ValueError(
                f"{op}: the sample has shape {sample.shape}, but its type "
                f"{op.outtype} has length 1 on dimension {axis}"
            )


# --- the size argument ------------------------------------------------------------------------


def _auto_dim(i: int, ndim: int, args: Sequence[Variable]) -> tuple[Any, bool]:
    """Dimension `i` of a size entry -1: that of the first argument not broadcastable
    there (length 1 when all are)."""
    overlapping = [a for a in args if i >= ndim - a.ndim]
    for a in overlapping:
        axis = i + a.ndim - ndim
        if not a.broadcastable[axis]:
            return a.shape[axis], False
    if not overlapping:
        raise ValueError(
            "Auto-shape of -1 must overlap with the shape of one of the broadcastable inputs"
        )
    return T.as_tensor_variable(1), True


def _size_entries(
    shape: Sequence[Any], ndim: int, args: Sequence[Variable]
) -> tuple[list[Any], list[bool]]:
    dims, bcast = [], []
    for i, s in enumerate(shape):
        if isinstance(s, Variable):
            if s.ndim != 0 or not s.dtype.startswith(("int", "uint")):
                raise TypeError(
                    f"size: each entry must be an integer or a 0-d integer "
                    f"variable, got {s} of type {s.type}"
                )
            dims.append(s)
            bcast.append(False)
            continue
        if not isinstance(s, int | np.integer) or isinstance(s, bool):
            raise TypeError(
                f"size: each entry must be an integer or a 0-d integer variable, got {s!r}"
            )
        if s >= 0:
            dims.append(T.as_tensor_variable(int(s)))
            bcast.append(s == 1)
        elif s == -1:
            dim, b = _auto_dim(i, ndim, args)
            dims.append(dim)
            bcast.append(b)
        else:
            raise ValueError(
                f"size: negative shape {s} (only -1, meaning the shape of the "
                "parameters, is allowed)"
            )
    return dims, bcast


def _from_sequence(ndim: Any, shape: Sequence[Any], args: Sequence[Variable]) -> tuple:
    if ndim is None:
        ndim = len(shape)
    elif len(shape) != ndim:
        raise ValueError(
            f"ndim should be equal to len(shape), but ndim = {ndim}, len(shape) = "
            f"{len(shape)}, shape = {shape}"
        )
    dims, bcast = _size_entries(shape, ndim, args)
    if not dims:
        return ndim, T.constant(np.zeros(0, np.int64)), bcast
    return ndim, T.stack(*[T.cast(d, "int64") for d in dims]), bcast


def _from_parameters(args: Sequence[Variable]) -> tuple:
    if not args:
        raise TypeError("_infer_ndim_bcast cannot infer shape without either shape or args")
    template = args[0]
    for a in args[1:]:
        template = template + a
    return template.ndim, template.shape, list(template.broadcastable)


def _from_vector(ndim: Any, shape: Any) -> tuple:
    v_shape = shape if isinstance(shape, Variable) else T.as_tensor_variable(shape)
    if v_shape.ndim != 1:
        raise TypeError(f"shape must be a vector or list of scalar, got '{v_shape}'")
    if ndim is None:
        ndim = _length(v_shape)
    return ndim, v_shape, [False] * ndim


def _infer_ndim_bcast(ndim: Any, shape: Any, *args: Variable) -> tuple[int, Variable, tuple]:
    """(number of dimensions, the size as an int64 vector, broadcastable pattern) from
    `ndim`, the `size` argument and the distribution's parameters `args` (Theano's
    rules: a list or tuple may hold -1 for the corresponding dimension of the
    parameters; None takes the shape of the parameters broadcast together)."""
    if ndim is not None and (not isinstance(ndim, int | np.integer) or isinstance(ndim, bool)):
        raise TypeError(f"ndim must be None or an integer, got {ndim!r}")
    if isinstance(shape, tuple | list):
        ndim, v_shape, bcast = _from_sequence(ndim, shape, args)
    elif shape is None:
        ndim, v_shape, bcast = _from_parameters(args)
    else:
        ndim, v_shape, bcast = _from_vector(ndim, shape)
    v_shape = T.as_tensor_variable(v_shape)
    if v_shape.ndim != 1:
        raise TypeError(f"shape must be a vector or list of scalar, got '{v_shape}'")
    if not v_shape.dtype.startswith(("int", "uint")):
        raise TypeError(f"shape must be an integer vector or list, got dtype {v_shape.dtype}")
    args_ndim = max((a.ndim for a in args), default=0)
    if args_ndim > ndim:
        raise ValueError(
            f"ndim should be at least as big as required by args value: ndim = {ndim}, the "
            f"parameters have {args_ndim} dimensions"
        )
    return int(ndim), T.cast(v_shape, "int64"), tuple(bcast)


def _length(v_shape: Variable) -> int:
    from arignote.tensor.basic_utils import get_vector_length

    if not v_shape.dtype.startswith(("int", "uint")):
        raise TypeError(f"shape must be an integer vector or list, got dtype {v_shape.dtype}")
    try:
        return get_vector_length(v_shape)
    except ValueError:
        raise ValueError(
            f"size: the length of {v_shape} is known only at run time: give ndim, the "
            "number of dimensions of the sample"
        ) from None


def _dtype(dtype: Any) -> str:
    from arignote.tensor.type import check_dtype

    return check_dtype(dtype, "dtype")


# --- the distributions --------------------------------------------------------------------


def _float_dtype(dtype: Any, *params: Variable) -> str:
    if dtype is None:
        return upcast_dtypes(config.floatX, *(p.dtype for p in params))
    return _dtype(dtype)


def uniform(
    random_state: Any,
    size: Any = None,
    low: Any = 0.0,
    high: Any = 1.0,
    ndim: Any = None,
    dtype: Any = None,
) -> list[Variable]:
    """Samples uniform in [low, high) (`RandomState.uniform`); `size` None: the shape of
    `low` and `high` broadcast; `dtype` default: that of `low`, `high` and floatX
    upcast. Returns `[new random state, sample]`."""
    low, high = T.as_tensor_variable(low), T.as_tensor_variable(high)
    dtype = _float_dtype(dtype, low, high)
    ndim, size, bcast = _infer_ndim_bcast(ndim, size, low, high)
    op = RandomFunction("uniform", TensorType(dtype, bcast))
    return op(random_state, size, low, high)


def normal(
    random_state: Any,
    size: Any = None,
    avg: Any = 0.0,
    std: Any = 1.0,
    ndim: Any = None,
    dtype: Any = None,
) -> list[Variable]:
    """Samples from a normal distribution of mean `avg` and standard deviation `std`
    (`RandomState.normal`). Returns `[new random state, sample]`."""
    avg, std = T.as_tensor_variable(avg), T.as_tensor_variable(std)
    dtype = _float_dtype(dtype, avg, std)
    ndim, size, bcast = _infer_ndim_bcast(ndim, size, avg, std)
    op = RandomFunction("normal", TensorType(dtype, bcast))
    return op(random_state, size, avg, std)


def binomial(
    random_state: Any,
    size: Any = None,
    n: Any = 1,
    p: Any = 0.5,
    ndim: Any = None,
    dtype: Any = "int64",
    prob: Any = None,
) -> list[Variable]:
    """The number of successes of `n` trials of probability `p` (`RandomState.binomial`;
    `prob` is the deprecated name of `p`). Returns `[new random state, sample]`."""
    if prob is not None:
        p = prob
        print(
            "DEPRECATION WARNING: the parameter prob to the binomal fct have been renamed "
            "to p to have the same name as np.",
            file=sys.stderr,
        )
    n, p = T.as_tensor_variable(n), T.as_tensor_variable(p)
    ndim, size, bcast = _infer_ndim_bcast(ndim, size, n, p)
    op = RandomFunction("binomial", TensorType(_dtype(dtype), (False,) * ndim))
    return op(random_state, size, n, p)


def _broadcast_indices(
    out_shape: Sequence[int], *shapes: Sequence[int]
) -> list[list[tuple[int, ...]]]:
    """Per shape, the index of the element each element of `out_shape` reads (in
    `numpy.ndindex(out_shape)` order): the same index, or 0 along a dimension of length
    1 (Theano's `_generate_broadcasting_indices`; longer shapes' trailing dimensions are
    ignored)."""
    for shape in shapes:
        for dim, n in enumerate(out_shape):
            if shape[dim] not in (n, 1):
                raise ValueError(
                    f"shape[{dim}] ({shape[dim]}) should be equal to out_shape[{dim}] ({n}) "
                    f"or to 1",
                    shape,
                    out_shape,
                    shapes,
                )
    outs = list(np.ndindex(*out_shape))
    per_shape = [outs]
    for shape in shapes:
        ones = [dim for dim in range(len(out_shape)) if shape[dim] != out_shape[dim]]
        per_shape.append([tuple(0 if d in ones else i for d, i in enumerate(o)) for o in outs])
    return per_shape


_generate_broadcasting_indices = _broadcast_indices


def _lift(a: np.ndarray, ndim: int, what: str, size: Any) -> np.ndarray:
    if a.ndim > ndim:
        raise ValueError(
            f"{what}.ndim ({a.ndim}) should not be larger than len(size) ({ndim})", a, size
        )
    return a.reshape((1,) * (ndim - a.ndim) + a.shape)


def random_integers_helper(
    random_state: np.random.RandomState, low: np.ndarray, high: np.ndarray, size: Any
) -> np.ndarray:
    """Integers in [low, high] (both included), `low` and `high` broadcast: one
    `random_state.randint(low, high + 1)` per element, in index order."""
    out_ndim = len(size) if size is not None else max(low.ndim, high.ndim)
    low = _lift(np.asarray(low), out_ndim, "low", size)
    high = _lift(np.asarray(high), out_ndim, "high", size)
    if size is not None:
        out_size = tuple(size)
    else:
        out_size = tuple(max(low.shape[d], high.shape[d]) for d in range(out_ndim))
    out = np.ndarray(out_size)
    for oi, li, hi in zip(*_broadcast_indices(out_size, low.shape, high.shape), strict=True):
        out[oi] = random_state.randint(low=low[li], high=high[hi] + 1)
    return out


def random_integers(
    random_state: Any,
    size: Any = None,
    low: Any = 0,
    high: Any = 1,
    ndim: Any = None,
    dtype: Any = "int64",
) -> list[Variable]:
    """Integers between `low` and `high`, both included. Returns `[new random state,
    sample]`."""
    low, high = T.as_tensor_variable(low), T.as_tensor_variable(high)
    ndim, size, bcast = _infer_ndim_bcast(ndim, size, low, high)
    op = RandomFunction(random_integers_helper, TensorType(_dtype(dtype), bcast))
    return op(random_state, size, low, high)


def choice_helper(
    random_state: np.random.RandomState,
    a: np.ndarray,
    replace: np.ndarray,
    p: np.ndarray,
    size: Any,
) -> Any:
    """`random_state.choice(a, size, replace, p)`, with `replace` as a bool and an empty
    `p` meaning None (uniform)."""
    if a.ndim > 1:
        raise ValueError(f"a.ndim ({a.ndim}) must be 0 or 1")
    if p.ndim != 1:
        raise ValueError(f"p.ndim ({p.ndim}) must be 1")
    return random_state.choice(a, size, bool(replace), None if p.size == 0 else p)


def choice(
    random_state: Any,
    size: Any = None,
    a: Any = 2,
    replace: Any = True,
    p: Any = None,
    ndim: Any = None,
    dtype: Any = "int64",
) -> list[Variable]:
    """Values of `a` (a vector, or `arange(a)` for a scalar) with or without
    replacement, with probabilities `p` (default uniform); `size` None: one value.
    Returns `[new random state, sample]`."""
    a = T.as_tensor_variable(a)
    if isinstance(replace, bool):
        replace = T.constant(replace, dtype="int8")
    replace = T.as_tensor_variable(replace)
    p = T.as_tensor_variable(np.zeros(0) if p is None else p)
    ndim, size, bcast = _infer_ndim_bcast(ndim, size)
    op = RandomFunction(choice_helper, TensorType(_dtype(dtype), bcast))
    return op(random_state, size, a, replace, p)


def poisson(
    random_state: Any, size: Any = None, lam: Any = 1.0, ndim: Any = None, dtype: Any = "int64"
) -> list[Variable]:
    """Samples from a Poisson distribution of expectation `lam` (`RandomState.poisson`);
    `size` or `ndim` must be given. Returns `[new random state, sample]`."""
    lam = T.as_tensor_variable(lam)
    ndim, size, bcast = _infer_ndim_bcast(ndim, size)
    op = RandomFunction("poisson", TensorType(_dtype(dtype), bcast))
    return op(random_state, size, lam)


def permutation_helper(random_state: np.random.RandomState, n: np.ndarray, shape: Any) -> Any:
    """Permutations of `0 .. n-1`, one per index of `shape` (None: one): an array of
    shape `shape + (n,)`, one `random_state.permutation(n)` per row in index order."""
    if np.shape(n) != ():
        raise ValueError(f"permutation: n must be a scalar, got shape {np.shape(n)}")
    n = int(np.asarray(n).item())
    shape = () if shape is None else tuple(shape)
    out = np.empty((*shape, n), int)
    for i in np.ndindex(*shape):
        out[i] = random_state.permutation(n)
    return out


def permutation(
    random_state: Any, size: Any = None, n: Any = 1, ndim: Any = None, dtype: Any = "int64"
) -> list[Variable]:
    """Permutations of the integers `0 .. n-1`, as many as `size` asks: the sample has
    shape `size + (n,)` (one dimension more than `ndim`). Returns `[new random state,
    sample]`."""
    if size is None or (isinstance(size, tuple) and size == ()):
        if ndim not in (None, 1):
            raise TypeError(
                "You asked for just one permutation but asked for more then 1 dimensions."
            )
        size, bcast = np.zeros(0, np.int64), ()
    else:
        ndim, size, bcast = _infer_ndim_bcast(ndim, size)
    op = RandomFunction(
        permutation_helper, TensorType(_dtype(dtype), (*bcast, False)), ndim_added=1
    )
    return op(random_state, size, n)


def _multinomial_row(pvi: np.ndarray) -> np.ndarray:
    # numpy rejects probabilities whose sum exceeds 1 by rounding: scale them down a
    # little (Theano's correction, kept so that the draws are Theano's).
    total = np.sum(pvi)
    if 1.0 < total < 1.0 + 1e-5 or pvi[-1] < 5e-5:
        pvi = pvi * (1.0 - 5e-5)
        total = np.sum(pvi)
    if total > 1.0:
        raise ValueError(f"multinomial: the probabilities {pvi} sum to {total} > 1")
    return pvi.astype("float64")


def multinomial_helper(
    random_state: np.random.RandomState, n: np.ndarray, pvals: np.ndarray, size: Any
) -> np.ndarray:
    """Counts of one multinomial draw per row of `pvals` (`n` and the rows broadcast
    to `size`): an array of shape `size + (pvals.shape[-1],)`, one
    `random_state.multinomial` per row in index order."""
    n, pvals = np.asarray(n), np.asarray(pvals)
    ndim = len(size) if size is not None else max(n.ndim, pvals.ndim - 1)
    n = _lift(n, ndim, "n", size)
    if pvals.ndim - 1 > ndim:
        raise ValueError(
            f"pvals.ndim-1 ({pvals.ndim - 1}) should not be larger than len(size) ({ndim})",
            pvals,
            size,
        )
    pvals = pvals.reshape((1,) * (ndim - pvals.ndim + 1) + pvals.shape)
    if size is not None:
        size = tuple(size)
    else:
        size = tuple(max(n.shape[d], pvals.shape[d]) for d in range(ndim))
    out = np.ndarray((*size, pvals.shape[-1]))
    if pvals.size and pvals.min() < 0:
        raise ValueError("multinomial: pvals must not be negative")
    for mi, ni, pi in zip(*_broadcast_indices(size, n.shape, pvals.shape[:-1]), strict=True):
        out[mi] = random_state.multinomial(n=n[ni], pvals=_multinomial_row(pvals[pi]))
    return out


def multinomial(
    random_state: Any,
    size: Any = None,
    n: Any = 1,
    pvals: Any = (0.5, 0.5),
    ndim: Any = None,
    dtype: Any = "int64",
) -> list[Variable]:
    """Counts of `n` experiments per multinomial distribution in the last axis of
    `pvals` (whose other axes broadcast with `n` and `size`; a -1 in `size` takes the
    corresponding axis of `pvals`); the sample has `len(size) + 1` dimensions, the last
    of length `pvals.shape[-1]`. Returns `[new random state, sample]`."""
    n = T.as_tensor_variable(n)
    pvals = T.as_tensor_variable(list(pvals) if isinstance(pvals, tuple) else pvals)
    if pvals.ndim < 1:
        raise TypeError(f"multinomial: pvals must have at least 1 dimension, got {pvals.type}")
    first = pvals.T[0].T
    ndim, size, bcast = _infer_ndim_bcast(ndim, size, n, first)
    bcast = (*bcast, pvals.broadcastable[-1])
    op = RandomFunction(multinomial_helper, TensorType(_dtype(dtype), bcast), ndim_added=1)
    return op(random_state, size, n, pvals)


def random_make_inplace(node: Any) -> bool:
    """Theano's rewrite making a draw update its generator in place. Here the state
    is an array a draw returns anew (2.5 KB), so there is nothing to rewrite: returns
    False."""
    return False


# --- RandomStreamsBase ------------------------------------------------------------------------


class RandomStreamsBase:
    """The distributions of a stream container (Theano's `RandomStreamsBase`): each
    method calls `self.gen(distribution, ...)` which makes a new random stream and
    returns its sample."""

    gen: Callable[..., Variable]

    def binomial(
        self,
        size: Any = None,
        n: Any = 1,
        p: Any = 0.5,
        ndim: Any = None,
        dtype: Any = "int64",
        prob: Any = None,
    ) -> Variable:
        """Successes of `n` trials of probability `p` (`prob`: deprecated name)."""
        if prob is not None:
            p = prob
            print(
                "DEPRECATION WARNING: the parameter prob to the binomal fct have been "
                "renamed to p to have the same name as numpy.",
                file=sys.stderr,
            )
        return self.gen(binomial, size, n, p, ndim=ndim, dtype=dtype)

    def uniform(
        self,
        size: Any = None,
        low: Any = 0.0,
        high: Any = 1.0,
        ndim: Any = None,
        dtype: Any = None,
    ) -> Variable:
        """Samples uniform in [low, high)."""
        return self.gen(uniform, size, low, high, ndim=ndim, dtype=dtype)

    def normal(
        self,
        size: Any = None,
        avg: Any = 0.0,
        std: Any = 1.0,
        ndim: Any = None,
        dtype: Any = None,
    ) -> Variable:
        """Samples from a normal distribution of mean `avg`, standard deviation `std`."""
        return self.gen(normal, size, avg, std, ndim=ndim, dtype=dtype)

    def random_integers(
        self,
        size: Any = None,
        low: Any = 0,
        high: Any = 1,
        ndim: Any = None,
        dtype: Any = "int64",
    ) -> Variable:
        """Integers between `low` and `high`, both included."""
        return self.gen(random_integers, size, low, high, ndim=ndim, dtype=dtype)

    def choice(
        self,
        size: Any = None,
        a: Any = 2,
        replace: Any = True,
        p: Any = None,
        ndim: Any = None,
        dtype: Any = "int64",
    ) -> Variable:
        """Values of `a` (or of `arange(a)`) with or without replacement."""
        return self.gen(choice, size, a, replace, p, ndim=ndim, dtype=dtype)

    def poisson(
        self, size: Any = None, lam: Any = None, ndim: Any = None, dtype: Any = "int64"
    ) -> Variable:
        """Samples from a Poisson distribution of expectation `lam` (None: 1.0, numpy's
        default)."""
        return self.gen(poisson, size, 1.0 if lam is None else lam, ndim=ndim, dtype=dtype)

    def permutation(
        self, size: Any = None, n: Any = 1, ndim: Any = None, dtype: Any = "int64"
    ) -> Variable:
        """Permutations of `0 .. n-1`, shape `size + (n,)`."""
        return self.gen(permutation, size, n, ndim=ndim, dtype=dtype)

    def multinomial(
        self,
        size: Any = None,
        n: Any = 1,
        pvals: Any = (0.5, 0.5),
        ndim: Any = None,
        dtype: Any = "int64",
    ) -> Variable:
        """Multinomial counts, shape `size + (len(pvals),)`."""
        return self.gen(multinomial, size, n, pvals, ndim=ndim, dtype=dtype)

    def shuffle_row_elements(self, input: Any) -> Variable:
        """`input` with the elements of every row (last axis) shuffled; the permutation
        drawn is the result's `.permutation`."""
        input = T.as_tensor_variable(input)
        perm = self.permutation(size=input.shape[:-1], n=input.shape[-1], ndim=input.ndim - 1)
        shuffled = T.permute_row_elements(input, perm)
        shuffled.permutation = perm  # type: ignore[attr-defined]
        return shuffled
