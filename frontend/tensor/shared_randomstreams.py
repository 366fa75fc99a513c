"""`arignote.tensor.shared_randomstreams` (Theano's `theano.tensor.shared_randomstreams`):
`RandomStreams`, random variables whose generators are shared variables.

`RandomStreams(seed)` keeps a master `numpy.random.RandomState(seed)`. Each random
variable it makes (`srng.uniform(...)`, `normal`, `binomial`, ...) gets a generator of
its own, a `RandomStateSharedVariable` holding `RandomState(master.randint(2**30))`, and
a draw from it (`arignote.tensor.raw_random`); the generator's `default_update` is the
draw's new state, so every function that computes the variable advances its generator
after each call, unless the function is told otherwise (`no_default_updates`). The
variable is drawn once per call however often the graph uses it. The variable's
`.rng` is the generator, its `.update` the pair (generator, new state), and
`srng.state_updates` lists these pairs; `srng.seed(s)` reseeds every generator from
`RandomState(s).randint(2**30)` in creation order. These are Theano's rules, so a seed
gives Theano's numbers.

A `RandomStateSharedVariable`'s `get_value()` and `get_value(borrow=True)` return a
`RandomState` in the generator's current state, a new object each time (the graph
stores the state as an array, see `arignote.tensor.raw_random`): change it and
`set_value` it back to change the generator, as Theano's tutorial does.

```python
from arignote.tensor.shared_randomstreams import RandomStreams
import arignote

srng = RandomStreams(seed=234)
rv_u = srng.uniform((2, 2))
f = arignote.function([], rv_u)
assert (f() != f()).all()  # the generator advances at each call
```
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from arignote.compile.sharedvalue import SharedVariable, _Storage
from arignote.tensor import raw_random
from arignote.tensor.raw_random import RandomStateType, pack_state, unpack_state

__all__ = ["RandomStateSharedVariable", "RandomStreams", "randomstate_constructor"]


class RandomStateSharedVariable(SharedVariable):
    """A shared variable holding a `numpy.random.RandomState` (its type is
    `RandomStateType`; the value is stored as the packed state)."""

    def __init__(
        self,
        type: RandomStateType,
        value: Any,
        name: str | None = None,
        strict: bool = False,
        allow_downcast: bool | None = None,
        container: _Storage | None = None,
    ):
        if not isinstance(type, RandomStateType):
            raise TypeError(
                f"RandomStateSharedVariable: type must be a RandomStateType, got {type!r}"
            )
        packed = None if container is not None else type.filter(value)
        super().__init__(name, type, packed, strict, allow_downcast, container)

    def get_value(self, borrow: bool = False, return_internal_type: bool = False) -> Any:
        """A `RandomState` in the generator's current state (a new object: changing it
        changes the generator only once given to `set_value`); with
        `return_internal_type=True`, the packed state array itself."""
        storage = self._storage
        if return_internal_type:
            return storage.value if borrow else storage.value.copy()
        storage.lock.acquire()
        try:
            return unpack_state(storage.value)
        finally:
            storage.lock.release()

    def set_value(self, new_value: Any, borrow: bool = False) -> None:
        """Put the generator in the state of the `RandomState` `new_value`."""
        if not isinstance(new_value, np.random.RandomState):
            raise TypeError(
                f"{self}.set_value: expected a numpy.random.RandomState, got "
                f"{type(new_value).__name__}"
            )
        packed = pack_state(new_value)
        storage = self._storage
        storage.lock.acquire()
        try:
            storage.value = packed
        finally:
            storage.lock.release()

    def zero(self, borrow: bool = False) -> None:
        raise TypeError(f"{self}: a random state has no zero value")

    def clone(self) -> RandomStateSharedVariable:
        """A new variable of the same type and name sharing this one's value."""
        cp = RandomStateSharedVariable(
            self._type, None, self.name, self.strict, self.allow_downcast, self._storage
        )
        cp.tag = copy.copy(self.tag)
        return cp

    def __repr__(self) -> str:
        return self.name if self.name is not None else "<RandomStateType>"

    __str__ = __repr__


def randomstate_constructor(
    value: Any,
    name: str | None = None,
    strict: bool = False,
    allow_downcast: bool | None = None,
    borrow: bool = False,
) -> RandomStateSharedVariable:
    """The shared variable of a `RandomState` (what `arignote.shared` makes for one).
    The generator's state is copied: later draws from `value` itself do not change
    it, whatever `borrow` says."""
    if not isinstance(value, np.random.RandomState):
        raise TypeError(
            f"randomstate_constructor: expected a numpy.random.RandomState, got "
            f"{type(value).__name__}"
        )
    return RandomStateSharedVariable(
        type=raw_random.random_state_type,
        value=value,
        name=name,
        strict=strict,
        allow_downcast=allow_downcast,
    )


class RandomStreams(raw_random.RandomStreamsBase):
    """A container of random streams with `numpy.random`'s distributions (Theano's
    `RandomStreams`); `seed` (None or an int) seeds the master generator that seeds
    each new stream."""

    def __init__(self, seed: int | None = None):
        super().__init__()
        self.state_updates: list[tuple[RandomStateSharedVariable, Any]] = []
        """(generator, its new state) per random variable made, in creation order."""
        self.default_instance_seed = seed
        self.gen_seedgen = np.random.RandomState(seed)

    def updates(self) -> list[tuple[RandomStateSharedVariable, Any]]:
        """The (generator, new state) pairs of every stream, for `function(updates=)`."""
        return list(self.state_updates)

    def seed(self, seed: int | None = None) -> None:
        """Reseed every stream: the k-th stream made gets `RandomState(r)` with `r` the
        k-th `randint(2**30)` of `RandomState(seed)` (None: the constructor's seed)."""
        if seed is None:
            seed = self.default_instance_seed
        seedgen = np.random.RandomState(seed)
        for old_r, _ in self.state_updates:
            old_r_seed = seedgen.randint(2**30)
            old_r.set_value(np.random.RandomState(int(old_r_seed)), borrow=True)

    def __getitem__(self, item: RandomStateSharedVariable) -> np.random.RandomState:
        """The `RandomState` of the generator `item` (`item.get_value(borrow=True)`)."""
        return item.get_value(borrow=True)

    def __setitem__(self, item: RandomStateSharedVariable, val: np.random.RandomState) -> None:
        """Set the generator `item` to the state of `val`."""
        item.set_value(val, borrow=True)

    def gen(self, op: Any, *args: Any, **kwargs: Any) -> Any:
        """A new random stream: a generator seeded from the master generator, the draw
        `op(generator, *args, **kwargs)` (a `raw_random` function), the generator's
        `default_update` its new state. Returns the sample, with `.rng` (the generator)
        and `.update` (the pair) set."""
        seed = int(self.gen_seedgen.randint(2**30))
        random_state_variable = randomstate_constructor(np.random.RandomState(seed))
        random_state_variable.tag.is_rng = True
        new_r, out = op(random_state_variable, *args, **kwargs)
        out.rng = random_state_variable
        out.update = (random_state_variable, new_r)
        self.state_updates.append(out.update)
        random_state_variable.default_update = new_r
        return out
