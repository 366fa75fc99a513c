"""`arignote.misc.pkl_utils` (Theano's `theano.misc.pkl_utils`): pickling to a zip file
whose NumPy arrays are stored as separate NPY files.

`dump(obj, f)` writes a zip file holding `pkl` (the pickle of `obj`) and one NPY file
per distinct array it holds: named after its shared variable when it is the value of a
named one (`W`, a second `W` as `W_2`), else `array_0`, `array_1`, ... (`numpy.load`
reads them). `load(f)` gives the object back. Compiled functions, shared variables and
graphs pickle as with `pickle` (see `arignote.compile.function.Function.__reduce__`).

```python
import io
import numpy
import arignote
from arignote.misc.pkl_utils import dump, load

foo_1 = arignote.shared(0, name="foo")
foo_2 = arignote.shared(1, name="foo")
buffer = io.BytesIO()
dump((foo_1, foo_2, numpy.array(2)), buffer)
names = sorted(numpy.load(io.BytesIO(buffer.getvalue())).keys())
assert names == ["array_0", "foo", "foo_2", "pkl"]
foo_1, foo_2, array = load(io.BytesIO(buffer.getvalue()))
assert foo_2.get_value() == 1 and array == 2
```
"""

from __future__ import annotations

import pickle
import zipfile
from collections import defaultdict
from collections.abc import Callable
from contextlib import closing
from io import BytesIO
from typing import IO, Any

import numpy as np

from arignote.compile.sharedvalue import SharedVariable

__all__ = [
    "PersistentNdarrayID",
    "PersistentNdarrayLoad",
    "PersistentSharedVariableID",
    "dump",
    "load",
    "zipadd",
]

DEFAULT_PROTOCOL = pickle.DEFAULT_PROTOCOL


def zipadd(func: Callable[[IO[bytes]], None], zip_file: zipfile.ZipFile, name: str) -> None:
    """Calls `func` with a file object whose contents become `name` in `zip_file`."""
    buffer = BytesIO()
    func(buffer)
    zip_file.writestr(name, buffer.getvalue())


class PersistentNdarrayID:
    """Stores each distinct ndarray met while pickling as an NPY file of `zip_file`
    (`array_0`, ...); its persistent id is `ndarray.<name>`."""

    def __init__(self, zip_file: zipfile.ZipFile):
        self.zip_file = zip_file
        self.count = 0
        self.seen: dict[int, str] = {}
        self._alive: list[Any] = []  # keeps the arrays seen alive: their ids stay theirs

    def _resolve_name(self, obj: np.ndarray) -> str:
        name = f"array_{self.count}"
        self.count += 1
        return name

    def __call__(self, obj: Any) -> str | None:
        if type(obj) is not np.ndarray:
            return None
        if id(obj) not in self.seen:
            name = self._resolve_name(obj)
            zipadd(lambda f: np.lib.format.write_array(f, obj), self.zip_file, name)
            self.seen[id(obj)] = f"ndarray.{name}"
            self._alive.append(obj)
        return self.seen[id(obj)]


class PersistentSharedVariableID(PersistentNdarrayID):
    """Names the NPY file of a named shared variable's value after the variable (`x`,
    then `x_2`, `x_3` for others of the same name); other arrays as usual.
    `allow_unnamed=False`: an unnamed shared variable is a ValueError;
    `allow_duplicates=False`: two of the same name are."""

    def __init__(
        self, zip_file: zipfile.ZipFile, allow_unnamed: bool = True, allow_duplicates: bool = True
    ):
        super().__init__(zip_file)
        self.name_counter: defaultdict[str, int] = defaultdict(int)
        self.ndarray_names: dict[int, str] = {}
        self.allow_unnamed = allow_unnamed
        self.allow_duplicates = allow_duplicates

    def _resolve_name(self, obj: np.ndarray) -> str:
        name = self.ndarray_names.get(id(obj))
        if name is None:
            return super()._resolve_name(obj)
        count = self.name_counter[name]
        self.name_counter[name] += 1
        if not count:
            return name
        if not self.allow_duplicates:
            raise ValueError(f"multiple shared variables with the name `{name}` found")
        return f"{name}_{count + 1}"

    def __call__(self, obj: Any) -> str | None:
        if isinstance(obj, SharedVariable):
            if obj.name:
                if obj.name == "pkl":
                    raise ValueError("can't pickle shared variable with name `pkl`")
                value = obj.get_value(borrow=True)
                self.ndarray_names[id(value)] = obj.name
                self._alive.append(value)
            elif not self.allow_unnamed:
                raise ValueError(f"unnamed shared variable, {obj}")
        return super().__call__(obj)


class PersistentNdarrayLoad:
    """Reads the arrays `PersistentNdarrayID` stored in `zip_file`."""

    def __init__(self, zip_file: zipfile.ZipFile):
        self.zip_file = zip_file
        self.cache: dict[str, np.ndarray] = {}

    def __call__(self, persid: str) -> np.ndarray:
        kind, name = persid.split(".", 1)
        if kind != "ndarray":
            raise pickle.UnpicklingError(f"unknown persistent id {persid!r}")
        if name not in self.cache:
            with self.zip_file.open(name) as f:
                self.cache[name] = np.lib.format.read_array(f)
        return self.cache[name]


def dump(
    obj: Any,
    file_handler: IO[bytes],
    protocol: int = DEFAULT_PROTOCOL,
    persistent_id: Callable[[zipfile.ZipFile], Any] = PersistentSharedVariableID,
) -> None:
    """Pickles `obj` to a zip file written to `file_handler` (see the module doc)."""
    with closing(
        zipfile.ZipFile(file_handler, "w", zipfile.ZIP_DEFLATED, allowZip64=True)
    ) as zip_file:

        def write(f: IO[bytes]) -> None:
            pickler = pickle.Pickler(f, protocol=protocol)
            pickler.persistent_id = persistent_id(zip_file)  # type: ignore[method-assign]
            pickler.dump(obj)

        zipadd(write, zip_file, "pkl")


def load(
    f: IO[bytes], persistent_load: Callable[[zipfile.ZipFile], Any] = PersistentNdarrayLoad
) -> Any:
    """The object `dump` wrote to the zip file `f`."""
    with closing(zipfile.ZipFile(f, "r")) as zip_file:
        unpickler = pickle.Unpickler(BytesIO(zip_file.open("pkl").read()))
        unpickler.persistent_load = persistent_load(zip_file)  # type: ignore[method-assign]
        return unpickler.load()
