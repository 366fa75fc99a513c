"""`arignote.tensor`: symbolic tensors and the operations on them (Theano's `theano.tensor`)."""

from __future__ import annotations

from typing import Any

from arignote.configuration import config
from arignote.graph import TensorConstant, Variable
from arignote.tensor import nlinalg, nnet, slinalg, xlogx  # linear algebra (issue 13 item 5)
from arignote.tensor.basic import (
    TABLE_FUNCTIONS,
    abs,
    abs_,
    add,
    allclose,
    argmax,
    argmin,
    as_tensor_variable,
    cast,
    clip,
    constant,
    dimshuffle,
    dot,
    eq,
    fill,
    floor_div,
    ge,
    gt,
    int_div,
    iround,
    isclose,
    le,
    lt,
    max,
    max_and_argmax,
    maximum,
    mean,
    min,
    minimum,
    mod,
    mul,
    neg,
    neq,
    ones_like,
    outer,
    pow,
    prod,
    round,
    round_half_away_from_zero,
    round_half_to_even,
    second,
    shape,
    shape_i,
    std,
    sub,
    sum,
    switch,
    transpose,
    true_div,
    var,
    where,
    zeros_like,
)
from arignote.tensor.basic_utils import (
    NotScalarConstantError,
    cov,
    extract_constant,
    get_scalar_constant_value,
    get_vector_length,
    scalar_from_tensor,
    tensor_copy,
    tensor_from_scalar,
    transfer,
)
from arignote.tensor.subtensor import (
    alloc,
    arange,
    concatenate,
    flatten,
    inc_subtensor,
    join,
    ones,
    reshape,
    set_subtensor,
    stack,
    take,
    tensordot,
    zeros,
)
from arignote.tensor.type import TensorType

TensorVariable = Variable


def grad(cost: Any, wrt: Any, **kwargs: Any) -> Any:
    """`arignote.grad` (Theano's `T.grad`)."""
    from arignote.gradient import grad as _grad

    return _grad(cost, wrt, **kwargs)


# --- dtypes (issue 13 item 2): the constructor table, Theano's type tuples -------------

_PATTERNS = {
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
_PREFIXES = {
    "b": "int8",
    "w": "int16",
    "i": "int32",
    "l": "int64",
    "f": "float32",
    "d": "float64",
    "c": "complex64",
    "z": "complex128",
}


def _constructor(kind: str) -> Any:
    """The generic constructor of `kind` (`T.matrix(name=None, dtype=None)`, floatX)."""
    pattern = _PATTERNS[kind]

    def make(name: str | None = None, dtype: str | None = None) -> Variable:
        return TensorType(dtype or config.floatX, pattern)(name)

    make.__name__ = make.__qualname__ = kind
    make.__doc__ = (
        f"A new symbolic {kind} (broadcastable={pattern}) of dtype floatX unless `dtype` is given."
    )
    return make


# --- extra_ops and sort (issue 13 item 4): Theano's theano.tensor exports of them ---
# `T.sort` is the function, as in Theano (`from arignote.tensor.sort import ...` still
# reaches the module).
from arignote.tensor import extra_ops  # noqa: E402
from arignote.tensor.extra_ops import (  # noqa: E402
    DiffOp,
    bartlett,
    bincount,
    cumprod,
    cumsum,
    fill_diagonal,
    fill_diagonal_offset,
    inverse_permutation,
    permute_row_elements,
    ravel_multi_index,
    unravel_index,
)
from arignote.tensor.sort import argsort, argtopk, sort, topk, topk_and_argtopk  # noqa: E402


def _plural(single: Any, name: str) -> Any:
    """Theano's `_multi`: `T.dscalars("x", "y")`, `T.dscalars(3)` (unnamed)."""

    def make(*names: Any, dtype: str | None = None) -> Any:
        if len(names) == 1 and isinstance(names[0], int) and not isinstance(names[0], bool):
            return [_one(single, None, dtype) for _ in range(names[0])]
        # Theano's rule: one argument is the sequence of names (`scalars("xyz")` names
        # three variables x, y and z; `scalars(["a", "b"])` two; `scalars("x")` is one)
        if len(names) == 1 and isinstance(names[0], list | tuple | str):
            names = tuple(names[0])
        if len(names) == 1:
            return _one(single, names[0], dtype)
        return [_one(single, n, dtype) for n in names]

    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"Several {name[:-1]} variables: one per name, or `n` unnamed ones."
    return make


def _one(single: Any, name: str | None, dtype: str | None) -> Variable:
    if dtype is None:
        return single(name)
    return (
        TensorType(dtype, single.broadcastable)(name)
        if isinstance(single, TensorType)
        else single(name, dtype=dtype)
    )


def _plural_name(kind: str) -> str:
    return kind[:-1] + "ces" if kind.endswith("matrix") else kind + "s"


def _install() -> None:
    """`T.matrix`, `T.dmatrix` (a `TensorType`, as in Theano: `x.type == T.dmatrix`),
    their plurals `T.matrices`, `T.dmatrices`, ... for every prefix and pattern."""
    namespace = globals()
    for kind, pattern in _PATTERNS.items():
        namespace[kind] = _constructor(kind)
        namespace[_plural_name(kind)] = _plural(namespace[kind], _plural_name(kind))
        for prefix, dtype in _PREFIXES.items():
            name = prefix + kind
            namespace[name] = TensorType(dtype, pattern).register()
            namespace[_plural_name(name)] = _plural(namespace[name], _plural_name(name))


_install()

# --- theano.gradient names that theano.tensor exports (issue 13 item 6) -------------------
# Looked up on first use: arignote.gradient imports this package.
_GRADIENT_NAMES = (
    "Lop",
    "Rop",
    "consider_constant",
    "hessian",
    "jacobian",
    "numeric_grad",
    "verify_grad",
)


def __getattr__(name: str) -> Any:
    if name in _GRADIENT_NAMES:
        from arignote import gradient

        value = getattr(gradient, name)
        globals()[name] = value
        return value
    # random streams (issue 14): Theano's submodules, imported on first use
    if name in ("raw_random", "shared_randomstreams"):
        import importlib

        return importlib.import_module(f"arignote.tensor.{name}")
    raise AttributeError(f"module 'arignote.tensor' has no attribute {name!r}")


# --- end of the theano.gradient names ----------------------------------------------------

int_types = (bscalar, wscalar, iscalar, lscalar)  # noqa: F821 - made by _install
float_types = (fscalar, dscalar)  # noqa: F821
complex_types = (cscalar, zscalar)  # noqa: F821
int_scalar_types, float_scalar_types, complex_scalar_types = int_types, float_types, complex_types
int_dtypes = ["int8", "int16", "int32", "int64"]
uint_dtypes = ["uint8", "uint16", "uint32", "uint64"]
float_dtypes = ["float32", "float64"]
complex_dtypes = ["complex64", "complex128"]
discrete_dtypes = ["bool", *int_dtypes, *uint_dtypes]
continuous_dtypes = float_dtypes + complex_dtypes
all_dtypes = discrete_dtypes + continuous_dtypes
from arignote.tensor import basic as _basic  # noqa: E402 - (imported above already)

real, imag, conj, angle = _basic.real, _basic.imag, _basic.conj, _basic.angle
complex, complex_from_polar = _basic.complex, _basic.complex_from_polar  # noqa: A001

_DTYPE_NAMES = [  # (added to `__all__` at the end)
    "all_dtypes",
    "angle",
    "complex",
    "complex_dtypes",
    "complex_from_polar",
    "complex_scalar_types",
    "complex_types",
    "conj",
    "continuous_dtypes",
    "discrete_dtypes",
    "float_dtypes",
    "float_scalar_types",
    "float_types",
    "imag",
    "int_dtypes",
    "int_scalar_types",
    "int_types",
    "real",
    "uint_dtypes",
]
# --- end dtypes ------------------------------------------------------------------------

__all__ = [
    "TensorConstant",
    "TensorType",
    "TensorVariable",
    "Variable",
    "abs",
    "abs_",
    "add",
    "allclose",
    "alloc",
    "arange",
    "argmax",
    "argmin",
    "as_tensor_variable",
    "cast",
    "clip",
    "concatenate",
    "constant",
    "dimshuffle",
    "dot",
    "eq",
    "fill",
    "flatten",
    "floor_div",
    "ge",
    "gt",
    "inc_subtensor",
    "int_div",
    "iround",
    "isclose",
    "join",
    "le",
    "lt",
    "max",
    "max_and_argmax",
    "maximum",
    "mean",
    "min",
    "minimum",
    "mod",
    "mul",
    "neg",
    "neq",
    "nnet",
    "ones",
    "ones_like",
    "outer",
    "pow",
    "prod",
    "reshape",
    "round",
    "round_half_away_from_zero",
    "round_half_to_even",
    "second",
    "set_subtensor",
    "shape",
    "shape_i",
    "stack",
    "std",
    "sub",
    "sum",
    "switch",
    "take",
    "tensordot",
    "transpose",
    "true_div",
    "var",
    "where",
    "xlogx",
    "zeros",
    "zeros_like",
]

# issue 13 item 1: the rest of the elementwise math (the special functions are table ops)
from arignote.tensor.basic import (  # noqa: E402
    ceil_intdiv,
    chi2sf,
    divmod,
    mod_check,
    nan_to_num,
    power,
)

__all__ += ["ceil_intdiv", "chi2sf", "divmod", "mod_check", "nan_to_num", "power"]

__all__ += [  # extra_ops and sort (issue 13 item 4)
    "extra_ops",
    "DiffOp",
    "bartlett",
    "bincount",
    "cumprod",
    "cumsum",
    "fill_diagonal",
    "fill_diagonal_offset",
    "inverse_permutation",
    "permute_row_elements",
    "ravel_multi_index",
    "repeat",
    "squeeze",
    "unravel_index",
    "sort",
    "argsort",
    "argtopk",
    "topk",
    "topk_and_argtopk",
]

# The table-driven elementwise functions (`sin`, `arctan2`, `sqr`, ...; see `ag.TABLE`).
globals().update(TABLE_FUNCTIONS)
__all__ += sorted(TABLE_FUNCTIONS)  # noqa: PLE0605 - generated names

# The graph-reading helpers of Theano's `theano.tensor.basic` (`basic_utils`).
__all__ += [
    "NotScalarConstantError",
    "cov",
    "extract_constant",
    "get_scalar_constant_value",
    "get_vector_length",
    "scalar_from_tensor",
    "tensor_copy",
    "tensor_from_scalar",
    "transfer",
]

# --- shapes, creation and selection (issue 13 item 3) ---
from arignote.tensor import shape_ops  # noqa: E402
from arignote.tensor.shape_ops import (  # noqa: E402
    addbroadcast,
    all,
    any,
    batched_dot,
    batched_tensordot,
    choose,
    diag,
    diagonal,
    eye,
    flatnonzero,
    horizontal_stack,
    identity_like,
    largest,
    mgrid,
    nonzero,
    nonzero_values,
    ogrid,
    patternbroadcast,
    ptp,
    repeat,
    roll,
    shape_padaxis,
    shape_padleft,
    shape_padright,
    smallest,
    specify_shape,
    split,
    squeeze,
    stacklists,
    swapaxes,
    tile,
    trace,
    tri,
    tril,
    triu,
    unbroadcast,
    vertical_stack,
)

__all__ += [
    "shape_ops",
    "addbroadcast",
    "all",
    "any",
    "batched_dot",
    "batched_tensordot",
    "choose",
    "diag",
    "diagonal",
    "eye",
    "flatnonzero",
    "horizontal_stack",
    "identity_like",
    "largest",
    "mgrid",
    "nonzero",
    "nonzero_values",
    "ogrid",
    "patternbroadcast",
    "ptp",
    "repeat",
    "roll",
    "shape_padaxis",
    "shape_padleft",
    "shape_padright",
    "smallest",
    "specify_shape",
    "split",
    "squeeze",
    "stacklists",
    "swapaxes",
    "tile",
    "trace",
    "tri",
    "tril",
    "triu",
    "unbroadcast",
    "vertical_stack",
]

# linear algebra (issue 13 item 5): Theano's `theano.tensor.nlinalg` / `slinalg` modules
__all__ += ["nlinalg", "slinalg"]  # noqa: PLE0605

__all__ += _DTYPE_NAMES  # noqa: PLE0605 - the dtypes block above
