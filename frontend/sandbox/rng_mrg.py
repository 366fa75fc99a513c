"""Theano's `theano.sandbox.rng_mrg`: `MRG_RandomStreams`, L'Ecuyer's MRG31k3p
generator with many streams (docs/random_mrg.md).

A draw is the `ag.mrg_uniform` op (native loops on the `cvm` linker, NumPy on the `py`
linker): it takes a stream state (an `n x 6` `int32` shared variable) and a size, and
returns the new state and the samples, in Theano's order and with Theano's float
conversion, so a seed gives Theano's numbers. The state's `default_update` is the new
state, so each call of a compiled function advances it, as in Theano.

The stream states are made here, on the host, as Theano makes them: stream `k + 1`
starts `2**72` steps after stream `k` (`ff_2p72`), and each `uniform` call moves the
generator's own state `2**134` steps on (`inc_rstate`, `ff_2p134`), with the jump
matrices of L'Ecuyer, Simard, Chen and Kelton (2002).

`normal` (Box-Muller), `binomial` (`uniform < p`), `multinomial`
(`MultinomialFromUniform`) and `choice` (`ChoiceFromUniform`) are compositions over
`uniform`'s samples, as in Theano.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import f32, f64

from arignote.compile.sharedvalue import SharedVariable, shared
from arignote.configuration import config
from arignote.dialects import ag
from arignote.gradient import undefined_grad
from arignote.graph import _OP_VIEWS, Variable, apply_op
from arignote.graph import Op as GraphOp
from arignote.runtime import interpreter_random
from arignote.runtime.dtypes import element_type
from arignote.sandbox import multinomial
from arignote.scalar import upcast
from arignote.tensor import basic as T
from arignote.tensor import subtensor as S
from arignote.tensor.basic_utils import get_vector_length
from arignote.tensor.grad_rules import RULES
from arignote.tensor.shape_ops import nonzero

M1 = np.asarray(np.int32(2147483647))
"""2**31 - 1, the first recurrence's modulus."""
M2 = np.asarray(np.int32(2147462579))
"""2**31 - 21069, the second recurrence's modulus."""
MASK12 = np.int32(511)
MASK13 = np.int32(16777215)
MASK2 = np.int32(65535)
MULT2 = np.int32(21069)
NORM = 4.656612873077392578125e-10
"""2**-31."""

# The jump matrices of MRG31k3p (L'Ecuyer et al.): A1^(2^72), A2^(2^72) and
# A1^(2^134), A2^(2^134) modulo M1 and M2.
A1p72 = np.asarray(
    [
        [1516919229, 758510237, 499121365],
        [1884998244, 1516919229, 335398200],
        [601897748, 1884998244, 358115744],
    ],
    dtype="int64",
)
A2p72 = np.asarray(
    [
        [1228857673, 1496414766, 954677935],
        [1133297478, 1407477216, 1496414766],
        [2002613992, 1639496704, 1407477216],
    ],
    dtype="int64",
)
A1p134 = np.asarray(
    [
        [1702500920, 1849582496, 1656874625],
        [828554832, 1702500920, 1512419905],
        [1143731069, 828554832, 102237247],
    ],
    dtype="int64",
)
A2p134 = np.asarray(
    [
        [796789021, 1464208080, 607337906],
        [1241679051, 1431130166, 1464208080],
        [1401213391, 1178684362, 1431130166],
    ],
    dtype="int64",
)
np_int32_vals = [np.int32(i) for i in (0, 7, 9, 15, 16, 22, 24)]


# --- jumps -------------------------------------------------------------------------------


def matVecModM(A: Any, s: Any, m: Any) -> np.ndarray:  # noqa: N802, N803 - Theano's names
    """`(A s) mod m` for an `int64` matrix `A` and a vector `s`, as `int32`."""
    A = np.asarray(A)  # noqa: N806
    if A.dtype != np.int64:
        raise TypeError(f"matVecModM: A must be int64, got {A.dtype}")
    return np.int32(np.sum((A * np.asarray(s, dtype=np.int64)) % m, 1) % m)


def multMatVect(v: Any, A: Any, m1: Any, B: Any, m2: Any) -> np.ndarray:  # noqa: N802, N803
    """`[(A v[:3]) mod m1, (B v[3:]) mod m2]` as an `int32` vector of 6."""
    v = np.asarray(v)
    return np.concatenate((matVecModM(A, v[:3], m1), matVecModM(B, v[3:], m2)))


def _jump(rows: list[list[int]], matrix: Any, modulus: int, words: Sequence[int]) -> list[int]:
    """`(matrix words) mod modulus` in Python integers (exact, no overflow)."""
    return [sum(a * w for a, w in zip(row, words, strict=True)) % modulus for row in rows]


_JUMPS = {
    "72": (A1p72.tolist(), A2p72.tolist()),
    "134": (A1p134.tolist(), A2p134.tolist()),
}


def _advance(state: Sequence[int], which: str) -> list[int]:
    a1, a2 = _JUMPS[which]
    words = [int(w) for w in state]
    return _jump(a1, None, int(M1), words[:3]) + _jump(a2, None, int(M2), words[3:])


def ff_2p134(rstate: Any) -> np.ndarray:
    """The state `2**134` steps after `rstate` (the next stream's start)."""
    return np.asarray(_advance(np.asarray(rstate).tolist(), "134"), dtype=np.int32)


def ff_2p72(rstate: Any) -> np.ndarray:
    """The state `2**72` steps after `rstate` (the next substream's start)."""
    return np.asarray(_advance(np.asarray(rstate).tolist(), "72"), dtype=np.int32)


class DotModulo:
    """Theano's `DotModulo()(A, s, m, A2, s2, m2)`: `[(A s) mod m, (A2 s2) mod m2]`
    (`A`, `A2` int64 matrices, `s`, `s2` int32 vectors, `m`, `m2` int32 scalars), as a
    symbolic graph of `s`'s dtype."""

    __props__ = ()

    def __call__(self, A: Any, s: Any, m: Any, A2: Any, s2: Any, m2: Any) -> Variable:  # noqa: N803
        parts = [_dot_mod(A, s, m), _dot_mod(A2, s2, m2)]
        dtype = T.as_tensor_variable(s).dtype
        return T.cast(S.concatenate(parts), dtype)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self))


def _dot_mod(A: Any, s: Any, m: Any) -> Variable:  # noqa: N803
    a = T.cast(T.as_tensor_variable(A), "int64")
    v = T.cast(T.as_tensor_variable(s), "int64")
    modulus = T.cast(T.as_tensor_variable(m), "int64")
    return T.sum((a * v.dimshuffle("x", 0)) % modulus, axis=1) % modulus


def mrg_next_value(rstate: Any, new_rstate: Any, NORM: Any, mask: Any, offset: Any) -> Any:  # noqa: N803
    """One step of the stream `rstate` (6 `int32`), written into `new_rstate`; the
    sample `(((k & mask) + offset) * NORM)` of the integer `k` in `1..M1`."""
    words = np.asarray(rstate, dtype=np.int32).reshape(1, 6)
    new, value = interpreter_random.mrg_step(words)
    new_rstate[...] = new[0]
    k = int(value[0])
    return ((k & int(mask)) + offset) * NORM


# --- the op ----------------------------------------------------------------------------


class mrg_uniform_base:  # noqa: N801 - Theano's name
    """Theano's base of the draw ops: `output_type` (the samples' type) and `inplace`
    (accepted; the native draw always writes the new state to its own buffer)."""

    __props__ = ("output_type", "inplace")

    def __init__(self, output_type: Any, inplace: bool = False):
        self.output_type = output_type
        self.inplace = inplace

    def __str__(self) -> str:
        kind = "inplace" if self.inplace else "no_inplace"
        return f"{type(self).__name__}{{{self.output_type},{kind}}}"


class mrg_uniform(mrg_uniform_base):  # noqa: N801 - Theano's name
    """`mrg_uniform(output_type)(rstate, size)` → `[new_rstate, sample]`: samples of
    `size` uniform on (0, 1) from the streams of `rstate` (the `ag.mrg_uniform` op)."""

    def __call__(self, rstate: Any, size: Any) -> list[Variable]:
        return _draw(rstate, size, self.output_type.ndim, self.output_type.dtype)

    @classmethod
    def new(cls, rstate: Any, ndim: int | None, dtype: str, size: Any) -> list[Variable]:
        """`[new_rstate, sample]` of `ndim` dimensions and `dtype` (Theano's `new`)."""
        return _draw(rstate, size, ndim, dtype)


def _size_entries(size: Any, ndim: int | None) -> list[Any]:
    """The entries (ints or integer scalars) of a size tuple or vector."""
    if isinstance(size, tuple | list | T.SymbolicShape):
        entries = list(size)
    else:
        v = T.as_tensor_variable(size)
        if v.ndim != 1:
            raise TypeError(f"size must be a vector, got {v.ndim} dimensions")
        length = get_vector_length(v) if ndim is None else ndim
        entries = [v[i] for i in range(length)]
    if ndim is not None and ndim != len(entries):
        raise ValueError(f"size has {len(entries)} entries but ndim is {ndim}")
    return entries


def _draw(rstate: Any, size: Any, ndim: int | None, dtype: str) -> list[Variable]:
    if dtype not in ("float32", "float64"):
        raise TypeError(f"mrg_uniform: dtype must be 'float32' or 'float64', got {dtype!r}")
    state = T.as_tensor_variable(rstate)
    if state.dtype != "int32" or state.ndim != 2:
        raise TypeError(f"mrg_uniform: rstate must be an int32 matrix, got {state.type}")
    static, dynamic = _size_operands(size, ndim)
    element = f32 if dtype == "float32" else f64
    op = ag.MrgUniformOp(state.value, static, [d.value for d in dynamic], element)
    new_state = apply_op(op)
    return [new_state, Variable(op.results[1])]


def _size_operands(size: Any, ndim: int | None) -> tuple[list[int], list[Variable]]:
    """The `shape` entries of a draw (ints, `DYNAMIC_VALUE` for a run-time length) and
    its dynamic operands."""
    static: list[int] = []
    dynamic: list[Variable] = []
    for e in _size_entries(size, ndim):
        static.append(_entry(e, dynamic))
    return static, dynamic


def _entry(e: Any, dynamic: list[Variable]) -> int:
    if isinstance(e, int | np.integer) and not isinstance(e, bool):
        if int(e) < 0:
            raise ValueError(f"mrg_uniform: negative length {e} in size")
        return int(e)
    v = T.as_tensor_variable(e)
    if v.ndim != 0 or v.dtype not in ("int8", "int16", "int32", "int64", "uint8", "uint16"):
        raise TypeError(f"size entries must be integer scalars, got {v} of type {v.type}")
    constant = _constant_int(v)
    if constant is not None:
        return constant
    dynamic.append(T.cast(v, "int64"))
    return ag.DYNAMIC_VALUE


def _constant_int(v: Variable) -> int | None:
    from arignote.tensor.basic_utils import NotScalarConstantError, get_scalar_constant_value

    try:
        value = int(get_scalar_constant_value(v))
    except NotScalarConstantError:
        return None
    return value if value >= 0 else None


def guess_n_streams(size: Any, warn: bool = False) -> int:
    """Theano's guess of a number of streams: for a size of Python ints, the element
    count (divided by 6 above 6), at most `60 * 256`; otherwise `60 * 256` (with a
    warning if `warn`)."""
    if isinstance(size, tuple | list) and all(
        isinstance(i, int) and not isinstance(i, bool) for i in size
    ):
        r = 1
        for s in size:
            r *= s
        if r > 6:
            r = r // 6
        return min(r, 60 * 256)
    if warn:
        warnings.warn(
            f"MRG_RandomStreams Can't determine #streams from size ({size}), guessing 60*256",
            stacklevel=3,
        )
    return 60 * 256


# --- the streams -------------------------------------------------------------------------


class MRG_RandomStreams:  # noqa: N801 - Theano's name
    """Random streams with NumPy's interface (Theano's `MRG_RandomStreams(seed=12345)`):
    `seed` is an int (used for all six state words) or six ints (the first three below
    `M1` and not all 0, the last three below `M2` and not all 0)."""

    def __init__(self, seed: Any = 12345):
        self.state_updates: list[tuple[SharedVariable, Variable, Any, Any]] = []
        self.default_instance_seed = seed
        self.set_rstate(seed)

    def updates(self) -> list[tuple[SharedVariable, Variable, Any, Any]]:
        """The `(state, new_state, size, nstreams)` of every draw made so far."""
        return list(self.state_updates)

    def set_rstate(self, seed: Any) -> None:
        """Set the generator's state from `seed` (see the class)."""
        if isinstance(seed, int | np.integer) and not isinstance(seed, bool):
            if seed == 0:
                raise ValueError("seed should not be 0", seed)
            if seed >= M2:
                raise ValueError(f"seed should be less than {int(M2)}", seed)
            self.rstate = np.asarray([seed] * 6, dtype="int32")
            return
        if not isinstance(seed, Sequence | np.ndarray) or len(seed) != 6:
            raise TypeError("seed should be 1 integer or 6 integers")
        _check_seed_words(seed)
        self.rstate = np.asarray(seed, dtype="int32")

    def seed(self, seed: Any = None) -> None:
        """Re-initialise every stream made so far from `seed` (default: the
        constructor's), as a fresh `MRG_RandomStreams(seed)` would make them."""
        if seed is None:
            seed = self.default_instance_seed
        self.set_rstate(seed)
        for old_r, _new_r, size, nstreams in self.state_updates:
            if nstreams is None:
                nstreams = self.n_streams(size)
            rstates = self.get_substream_rstates(nstreams, "float32")
            old_r.set_value(rstates, borrow=True)

    def inc_rstate(self) -> None:
        """Move the generator's state `2**134` steps on (the next stream's start)."""
        self.rstate = ff_2p134(self.rstate)

    def get_substream_rstates(
        self, n_streams: int, dtype: str, inc_rstate: bool = True
    ) -> np.ndarray:
        """`n_streams x 6` `int32` states, `2**72` steps apart, the first the
        generator's state (then moved on by `inc_rstate` unless False)."""
        n = int(n_streams)
        if not 0 < n < 2**72:
            raise ValueError(f"get_substream_rstates: n_streams must be positive, got {n_streams}")
        rows = [self.rstate.tolist()]
        for _ in range(1, n):
            rows.append(_advance(rows[-1], "72"))
        if inc_rstate:
            self.inc_rstate()
        return np.asarray(rows, dtype="int32")

    def n_streams(self, size: Any) -> int:
        """`guess_n_streams(size)`."""
        return guess_n_streams(size)

    def pretty_return(
        self,
        node_rstate: SharedVariable,
        new_rstate: Variable,
        sample: Variable,
        size: Any,
        nstreams: Any,
    ) -> Variable:
        """Record a draw: `sample.rstate`, `sample.update`, the state's
        `default_update`, and `state_updates` (for `seed`)."""
        sample.rstate = node_rstate  # type: ignore[attr-defined]
        sample.update = (node_rstate, new_rstate)  # type: ignore[attr-defined]
        self.state_updates.append((node_rstate, new_rstate, size, nstreams))
        node_rstate.default_update = new_rstate
        return sample

    # --- distributions -------------------------------------------------------------

    def uniform(
        self,
        size: Any,
        low: Any = 0.0,
        high: Any = 1.0,
        ndim: int | None = None,
        dtype: str | None = None,
        nstreams: int | None = None,
        **kwargs: Any,
    ) -> Variable:
        """Samples of `size` uniform on (`low`, `high`) (both excluded), of `dtype`
        (default: of `low` and `high`, at least `floatX`)."""
        low, high = T.as_tensor_variable(low), T.as_tensor_variable(high)
        if dtype is None:
            dtype = upcast(config.floatX, low.dtype, high.dtype)
        low = undefined_grad(T.cast(low, dtype))
        high = undefined_grad(T.cast(high, dtype))
        _check_uniform_size(size)
        kwargs.pop("target", None)
        if kwargs:
            raise TypeError(f"uniform() got unexpected keyword arguments {list(kwargs)}")
        orig_nstreams = nstreams
        if nstreams is None:
            nstreams = self.n_streams(size)
        node_rstate = shared(self.get_substream_rstates(nstreams, dtype))
        node_rstate.tag.is_rng = True
        new_rstate, u = mrg_uniform.new(node_rstate, ndim, dtype, size)
        u = self.pretty_return(node_rstate, new_rstate, u, size, orig_nstreams)
        r = u * (high - low) + low
        if u.broadcastable != r.broadcastable:
            raise NotImplementedError(
                "Increase the size to match the broadcasting pattern of `low` and `high` arguments"
            )
        return r

    def binomial(
        self,
        size: Any = None,
        n: Any = 1,
        p: Any = 0.5,
        ndim: int | None = None,
        dtype: str = "int64",
        nstreams: int | None = None,
        **kwargs: Any,
    ) -> Variable:
        """`cast(uniform(size) < p, dtype)` (only `n == 1`). With a scalar float `p` the
        comparison runs inside the generating loop (`ag.mrg_binomial`): the same values
        and state, and no array of uniforms (a dropout mask)."""
        if not (isinstance(n, int | np.integer) and n == 1):
            raise NotImplementedError("MRG_RandomStreams.binomial with n > 1")
        p = undefined_grad(T.as_tensor_variable(p))
        drawn = upcast(
            config.floatX, T.as_tensor_variable(0.0).dtype, T.as_tensor_variable(1.0).dtype
        )
        compared = upcast(drawn, p.dtype)
        fusable = (
            p.ndim == 0 and compared in ("float32", "float64") and drawn in ("float32", "float64")
        )
        if not fusable or "target" in kwargs:
            x = self.uniform(size=size, nstreams=nstreams, **kwargs)
            return T.cast(T.lt(x, p), dtype)
        if kwargs:
            raise TypeError(f"uniform() got unexpected keyword arguments {list(kwargs)}")
        _check_uniform_size(size)
        orig_nstreams = nstreams
        if nstreams is None:
            nstreams = self.n_streams(size)
        node_rstate = shared(self.get_substream_rstates(nstreams, drawn))
        node_rstate.tag.is_rng = True
        static, dynamic = _size_operands(size, ndim)
        state = T.as_tensor_variable(node_rstate)
        op = ag.MrgBinomialOp(
            state.value,
            T.cast(p, compared).value,
            static,
            [d.value for d in dynamic],
            element_type(drawn),
            element_type(dtype),
        )
        new_rstate = apply_op(op)
        mask = Variable(op.results[1])
        return self.pretty_return(node_rstate, new_rstate, mask, size, orig_nstreams)

    def multinomial(
        self,
        size: Any = None,
        n: Any = 1,
        pvals: Any = None,
        ndim: int | None = None,
        dtype: str = "int64",
        nstreams: int | None = None,
        **kwargs: Any,
    ) -> Variable:
        """Counts of `n` draws from each row of the matrix `pvals` (`size` and `ndim`
        must be None)."""
        if pvals is None:
            raise TypeError("You have to specify pvals")
        pvals = undefined_grad(T.as_tensor_variable(pvals))
        if size is not None:
            if any(isinstance(i, int) and i <= 0 for i in size):
                raise ValueError("The specified size contains a dimension with value <= 0", size)
            raise ValueError(
                "Provided a size argument to MRG_RandomStreams.multinomial, which does not "
                "use the size argument."
            )
        if ndim is not None:
            raise ValueError(
                "Provided an ndim argument to MRG_RandomStreams.multinomial, which does not "
                "use the ndim argument."
            )
        if pvals.ndim != 2:
            raise NotImplementedError(
                "MRG_RandomStreams.multinomial only implemented for pvals.ndim = 2"
            )
        count = (T.shape(pvals)[0] * n,)
        unis = self.uniform(size=T.stack(count), ndim=1, nstreams=nstreams, **kwargs)
        return multinomial.MultinomialFromUniform(dtype)(pvals, unis, T.as_tensor_variable(n))

    def choice(
        self,
        size: Any = 1,
        a: Any = None,
        replace: bool = True,
        p: Any = None,
        ndim: int | None = None,
        dtype: str = "int64",
        nstreams: int | None = None,
        **kwargs: Any,
    ) -> Variable:
        """`size` indices drawn without replacement from each row of `p` (only
        `replace=False`, `a=None`)."""
        if replace:
            raise NotImplementedError(
                "MRG_RandomStreams.choice only works without replacement for now."
            )
        if a is not None:
            raise TypeError(
                "For now, a has to be None in MRG_RandomStreams.choice. Sampled values are "
                "between 0 and p.shape[1]-1"
            )
        if p is None:
            raise TypeError("For now, p has to be specified in MRG_RandomStreams.choice.")
        p = undefined_grad(T.as_tensor_variable(p))
        if ndim is not None:
            raise ValueError("ndim argument to MRG_RandomStreams.choice is not used.")
        if p.ndim != 2:
            raise NotImplementedError("MRG_RandomStreams.choice is only implemented for p.ndim = 2")
        count = (T.shape(p)[0] * size,)
        unis = self.uniform(size=T.stack(count), ndim=1, nstreams=nstreams, **kwargs)
        return multinomial.ChoiceFromUniform(odtype=dtype)(p, unis, T.as_tensor_variable(size))

    def multinomial_wo_replacement(
        self,
        size: Any = None,
        n: Any = 1,
        pvals: Any = None,
        ndim: int | None = None,
        dtype: str = "int64",
        nstreams: int | None = None,
        **kwargs: Any,
    ) -> Variable:
        """Deprecated: `choice(size=n, replace=False, p=pvals)`."""
        warnings.warn(
            "MRG_RandomStreams.multinomial_wo_replacement() is deprecated and will be removed "
            "in the next release of Theano. Please use MRG_RandomStreams.choice() instead.",
            stacklevel=2,
        )
        if size is not None:
            raise ValueError("multinomial_wo_replacement: size must be None")
        return self.choice(
            size=n,
            a=None,
            replace=False,
            p=pvals,
            dtype=dtype,
            nstreams=nstreams,
            ndim=ndim,
            **kwargs,
        )

    def normal(
        self,
        size: Any,
        avg: Any = 0.0,
        std: Any = 1.0,
        ndim: int | None = None,
        dtype: str | None = None,
        nstreams: int | None = None,
        truncate: bool = False,
        **kwargs: Any,
    ) -> Variable:
        """Normal samples of `size` by Box-Muller on an even number of uniforms
        (`truncate`: values beyond 2 standard deviations redrawn, as Theano)."""
        size_v = _check_size(size)
        avg = undefined_grad(T.as_tensor_variable(avg))
        std = undefined_grad(T.as_tensor_variable(std))
        if dtype is None:
            dtype = upcast(config.floatX, avg.dtype, std.dtype)
        avg, std = T.cast(avg, dtype), T.cast(std, dtype)
        n_odd = T.prod(size_v, dtype="int64")
        n_even = n_odd + n_odd % 2
        uniform = self.uniform(
            T.stack([n_even]), low=0.0, high=1.0, ndim=1, dtype=dtype, nstreams=nstreams, **kwargs
        )
        half = n_even // 2
        u1, u2 = uniform[:half], uniform[half:]
        r = T.sqrt(-2.0 * T.log(u1))
        theta = np.array(2.0 * np.pi, dtype=dtype) * u2
        cos_theta, sin_theta = T.cos(theta), T.sin(theta)
        z0, z1 = r * cos_theta, r * sin_theta
        if truncate:
            norm_samples = self._truncated(z0, z1, (cos_theta, sin_theta), dtype, nstreams, kwargs)
        else:
            norm_samples = S.concatenate([z0, z1])
        samples = S.reshape(norm_samples[:n_odd], size_v, ndim=ndim)
        return samples * std + avg

    def _truncated(
        self,
        z0: Variable,
        z1: Variable,
        trig: tuple[Variable, Variable],
        dtype: str,
        nstreams: Any,
        kwargs: dict[str, Any],
    ) -> Variable:
        """Theano's redraw of the samples beyond +-2: new radii from uniforms on
        (e**-2, 1) with the same angles."""
        cos_theta, sin_theta = trig
        bad0 = T.or_(T.lt(z0, -2.0), T.gt(z0, 2.0))
        bad1 = T.or_(T.lt(z1, -2.0), T.gt(z1, 2.0))
        z0_valid = z0[nonzero(T.invert(bad0))]
        z1_valid = z1[nonzero(T.invert(bad1))]
        fix0, fix1 = nonzero(bad0)[0], nonzero(bad1)[0]
        n_fix = T.shape(fix0)[0] + T.shape(fix1)[0]
        lower = T.constant(1.0 / np.e**2, dtype=dtype)
        u_fix = self.uniform(
            T.stack([n_fix]), low=lower, high=1.0, ndim=1, dtype=dtype, nstreams=nstreams, **kwargs
        )
        r_fix = T.sqrt(-2.0 * T.log(u_fix))
        n0 = T.shape(fix0)[0]
        z0_fixed = r_fix[:n0] * cos_theta[fix0]
        z1_fixed = r_fix[n0:] * sin_theta[fix1]
        return S.concatenate([z0_valid, z0_fixed, z1_valid, z1_fixed])

    def truncated_normal(
        self,
        size: Any,
        avg: Any = 0.0,
        std: Any = 1.0,
        ndim: int | None = None,
        dtype: str | None = None,
        nstreams: int | None = None,
        **kwargs: Any,
    ) -> Variable:
        """A normal truncated at 2 standard deviations, scaled so that its standard
        deviation is `std`."""
        std = std / T.constant(0.87962566103423978)
        return self.normal(
            size=size,
            avg=avg,
            std=std,
            truncate=True,
            ndim=ndim,
            dtype=dtype,
            nstreams=nstreams,
            **kwargs,
        )


def _check_seed_words(seed: Any) -> None:
    if seed[0] == 0 and seed[1] == 0 and seed[2] == 0:
        raise ValueError("The first 3 values of seed should not be all 0", seed)
    if seed[3] == 0 and seed[4] == 0 and seed[5] == 0:
        raise ValueError("The last 3 values of seed should not be all 0", seed)
    if seed[0] >= M1 or seed[1] >= M1 or seed[2] >= M1:
        raise ValueError(f"The first 3 values of seed should be less than {int(M1)}", seed)
    if seed[3] >= M2 or seed[4] >= M2 or seed[5] >= M2:
        raise ValueError(f"The last 3 values of seed should be less than {int(M2)}", seed)


def _check_uniform_size(size: Any) -> None:
    """Theano's `uniform` size rules: a tuple of ints (positive) and integer scalars, or
    a 1-d variable."""
    if isinstance(size, tuple):
        if not all(isinstance(i, int | np.integer | Variable) for i in size):
            raise TypeError("size must be a tuple of int or a Theano variable")
        if any(isinstance(i, int | np.integer) and i <= 0 for i in size):
            raise ValueError("The specified size contains a dimension with value <= 0", size)
        return
    if isinstance(size, T.SymbolicShape):  # `x.shape`, a vector in Theano
        return
    if not (isinstance(size, Variable) and size.ndim == 1):
        raise TypeError(
            f"size must be a tuple of int or a Theano Variable with 1 dimension, got {size} "
            f"of type {type(size)}"
        )


def _check_size(size: Any) -> Variable:
    """`size` as a 1-d integer variable (Theano's `_check_size`): an int, a tuple or
    list of ints (positive) and integer scalars, or a 0-d or 1-d variable."""
    if isinstance(size, T.SymbolicShape):
        return T.as_tensor_variable(size)
    if isinstance(size, Variable):
        return _check_size_variable(size)
    if isinstance(size, int | np.integer):
        return T.as_tensor_variable(np.asarray([size], dtype="int64"))
    if not isinstance(size, tuple | list):
        raise ValueError("Size must be a int, tuple, list or Theano variable.", size)
    for i in size:
        _check_size_entry(size, i)
    if all(isinstance(i, int | np.integer) for i in size):
        return T.as_tensor_variable(np.asarray(size, dtype="int64"))
    return T.stack([T.cast(i, "int64") for i in size])


def _check_size_variable(size: Variable) -> Variable:
    if size.ndim == 1:
        return size
    if size.ndim == 0:
        return T.stack([size])
    raise ValueError("Theano variable must have 1 dimension to be a valid size.", size)


def _check_size_entry(size: Any, i: Any) -> None:
    if isinstance(i, Variable):
        if i.ndim != 0:
            raise ValueError("Non-scalar Theano variable in size", size, i)
    elif isinstance(i, int | np.integer):
        if i <= 0:
            raise ValueError("Non-positive dimensions not allowed in size.", size, i)
    else:
        raise ValueError("Only Theano variables and integers are allowed in a size-tuple.", size, i)


def _no_gradient(op: Any, inputs: Any, outputs: Any, grads: Any) -> list[Any]:
    """The draws carry no gradient to their operands (the state and sizes are integers;
    `binomial`'s `p` reaches the mask through a comparison)."""
    return [None] * len(inputs)


class _DrawView(GraphOp):
    """How a draw shows in printed graphs: Theano's `mrg_uniform{TensorType(float32,
    matrix),no_inplace}` style, as `mrg_uniform{float32}` / `mrg_binomial{float32}`."""

    def __str__(self) -> str:
        assert self.ir_op is not None
        kind = self.ir_op.name.removeprefix("ag.")
        return f"{kind}{{{Variable(self.ir_op.results[1]).dtype}}}"

    __repr__ = __str__


# random streams (issue 14, mrg)
RULES.update({ag.MrgUniformOp: _no_gradient, ag.MrgBinomialOp: _no_gradient})
_OP_VIEWS.update({ag.MrgUniformOp: _DrawView, ag.MrgBinomialOp: _DrawView})
