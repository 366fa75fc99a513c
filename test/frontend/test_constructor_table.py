"""Every typed constructor of Theano's table (`b w i l f d c z` x scalar ... tensor7, the
generic ones and the plurals of the library reference) makes a variable of its dtype and
broadcast pattern, under `arignote.tensor` and `arignote.tensor.basic`."""

from __future__ import annotations

import pytest

import arignote.tensor as T
import arignote.tensor.basic as B

RANKS = {
    "scalar": (),
    "vector": (False,),
    "row": (True, False),
    "col": (False, True),
    "matrix": (False, False),
    "tensor3": (False,) * 3,
    "tensor4": (False,) * 4,
    "tensor5": (False,) * 5,
    "tensor6": (False,) * 6,
    "tensor7": (False,) * 7,
}
DTYPES = {
    "b": "int8",
    "w": "int16",
    "i": "int32",
    "l": "int64",
    "f": "float32",
    "d": "float64",
    "c": "complex64",
    "z": "complex128",
}
# the names written out, as a reader searches for them
TYPED = [
    "bscalar",
    "wscalar",
    "iscalar",
    "lscalar",
    "fscalar",
    "dscalar",
    "cscalar",
    "zscalar",
    "bvector",
    "wvector",
    "ivector",
    "lvector",
    "fvector",
    "dvector",
    "cvector",
    "zvector",
    "brow",
    "wrow",
    "irow",
    "lrow",
    "frow",
    "drow",
    "crow",
    "zrow",
    "bcol",
    "wcol",
    "icol",
    "lcol",
    "fcol",
    "dcol",
    "ccol",
    "zcol",
    "bmatrix",
    "wmatrix",
    "imatrix",
    "lmatrix",
    "fmatrix",
    "dmatrix",
    "cmatrix",
    "zmatrix",
    "btensor3",
    "wtensor3",
    "itensor3",
    "ltensor3",
    "ftensor3",
    "dtensor3",
    "ctensor3",
    "ztensor3",
    "btensor4",
    "wtensor4",
    "itensor4",
    "ltensor4",
    "ftensor4",
    "dtensor4",
    "ctensor4",
    "ztensor4",
    "btensor5",
    "wtensor5",
    "itensor5",
    "ltensor5",
    "ftensor5",
    "dtensor5",
    "ctensor5",
    "ztensor5",
    "btensor6",
    "wtensor6",
    "itensor6",
    "ltensor6",
    "ftensor6",
    "dtensor6",
    "ctensor6",
    "ztensor6",
    "btensor7",
    "wtensor7",
    "itensor7",
    "ltensor7",
    "ftensor7",
    "dtensor7",
    "ctensor7",
    "ztensor7",
]
GENERIC = [
    "scalar",
    "vector",
    "row",
    "col",
    "matrix",
    "tensor3",
    "tensor4",
    "tensor5",
    "tensor6",
    "tensor7",
]
PLURALS = [
    "iscalars",
    "lscalars",
    "fscalars",
    "dscalars",
    "ivectors",
    "lvectors",
    "fvectors",
    "dvectors",
    "irows",
    "lrows",
    "frows",
    "drows",
    "icols",
    "lcols",
    "fcols",
    "dcols",
    "imatrices",
    "lmatrices",
    "fmatrices",
    "dmatrices",
]


def _kind(name: str) -> str:
    return next(
        k
        for k in RANKS
        if name.endswith(k)
        or name.endswith(k + "s")
        or (k == "matrix" and name.endswith("matrices"))
    )


@pytest.mark.parametrize("name", TYPED)
def test_typed_constructors(name: str) -> None:
    for module in (T, B):
        v = getattr(module, name)("v")
        assert v.dtype == DTYPES[name[0]], name
        assert v.broadcastable == RANKS[_kind(name)], name
        assert v.type == getattr(module, name)  # the constructor is the type, as in Theano


@pytest.mark.parametrize("name", GENERIC)
def test_generic_constructors_take_a_dtype(name: str) -> None:
    v = getattr(T, name)("v", dtype="uint8")
    assert v.dtype == "uint8" and v.broadcastable == RANKS[name]
    assert getattr(B, name) is getattr(T, name)


@pytest.mark.parametrize("name", PLURALS)
def test_plural_constructors(name: str) -> None:
    a, b = getattr(T, name)("a", "b")
    assert (a.name, b.name) == ("a", "b") and a.dtype == DTYPES[name[0]]
    assert a.broadcastable == RANKS[_kind(name)]
    assert len(getattr(B, name)(3)) == 3
