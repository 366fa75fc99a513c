"""`In` and `Out`: how `function()` treats one input or output (Theano's
`theano.compile.io`)."""

from __future__ import annotations

import warnings
from typing import Any

from arignote.graph import Variable


class In:
    """An input of `function()` with options.

    `name`: the keyword to pass the value by (by default the variable's name).
    `value`: a default value, used when the call gives none. `update`: an expression
    (of the inputs, with the type of `variable`) whose value replaces the default value
    after each call, making the input implicit state. `strict`: only accept an ndarray of
    exactly the input's dtype. `allow_downcast`: accept lossy conversions of this input
    (None: only safe ones; as in Theano, the `allow_input_downcast` of `function()`
    applies to plain variables, not to `In` inputs). `implicit=True`: the input always
    takes its value (a default value is required) and a call that provides one raises
    a TypeError, as in Theano. `mutable` and `borrow` are
    accepted; the compiled code never overwrites or keeps its inputs.
    """

    def __init__(
        self,
        variable: Variable,
        name: str | None = None,
        value: Any = None,
        update: Any = None,
        mutable: bool | None = None,
        strict: bool = False,
        allow_downcast: bool | None = None,
        autoname: bool = True,
        implicit: bool | None = None,
        borrow: bool | None = None,
        shared: bool = False,
    ):
        if not isinstance(variable, Variable):
            raise TypeError(f"In: expected a symbolic variable, got {type(variable).__name__}")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"In: name must be a string, got {name!r}")
        if mutable is None:
            mutable = update is not None
        if borrow is None:
            borrow = mutable
        if mutable and not borrow:
            raise AssertionError(
                f"Symbolic input for variable {variable} (name={name}) has flags "
                "mutable=True, borrow=False. This combination is incompatible since "
                "mutable=True implies that the input variable may be both aliased "
                "(borrow=True) and overwritten."
            )
        if implicit and value is None:
            raise TypeError("An implicit input must be given a default value")
        self.variable = variable
        self.name = variable.name if name is None and autoname else name
        self.value = value
        self.update = update
        self.mutable = mutable
        self.strict = strict
        self.allow_downcast = allow_downcast
        self.autoname = autoname
        self.implicit = bool(implicit)
        self.borrow = borrow
        self.shared = shared

    def __repr__(self) -> str:
        return f"In({self.variable}, name={self.name!r}, value={self.value!r})"


class Out:
    """An output of `function()`: `borrow=True` allows the function to return an array
    it may overwrite at its next call. arignote's native code writes a result into the
    array of the previous call only once the caller has dropped that array (see
    `Function.free`), which needs no permission: a borrowed result stays valid, and
    `borrow` changes nothing."""

    def __init__(self, variable: Variable, borrow: bool = False):
        self.variable = variable
        self.borrow = borrow

    def __repr__(self) -> str:
        return f"Out({self.variable}, borrow={self.borrow})"


class Param(In):
    """Deprecated: use `In` (Theano's `Param`). `Param(x, default=N)` is
    `In(x, value=N)`; constructing one warns with a `DeprecationWarning`."""

    def __init__(
        self,
        variable: Variable,
        default: Any = None,
        name: str | None = None,
        mutable: bool = False,
        strict: bool = False,
        allow_downcast: bool | None = None,
        implicit: bool | None = None,
        borrow: bool | None = None,
    ):
        warnings.warn(
            "The Param class is deprecated. Replace Param(default=N) by arignote.In(value=N)",
            DeprecationWarning,
            stacklevel=2,
        )
        super().__init__(
            variable,
            name=name,
            value=default,
            mutable=mutable,
            strict=strict,
            allow_downcast=allow_downcast,
            implicit=implicit,
            borrow=borrow,
        )


SymbolicInput = In
SymbolicOutput = Out
