"""Function attributes pairing results with the arguments whose buffers they may take.

`arignote.function` compiles a graph into one `func.func` whose results end with the new
values of the updated shared variables, whose old values are arguments. Two attributes
of that `func.func`, both `i64` arrays of pairs `[r, a, ...]`, carry what a result has
to do with an argument:

- `ag.updates` (set by `arignote.function`): result `r` is the new value of argument `a`,
  which the caller stores in `a`'s place after the call (`a` is a shared variable).
- `ag.inplace_results` (set by the `inplace-update` pass): result `r` may be computed in
  the buffer of argument `a`: the caller may pass `a`'s array as `r`'s output buffer
  (when it has `r`'s shape and is contiguous, writable and aliases no other argument),
  and the code is correct whether or not it does. The pass sets it only for a pair of
  `ag.updates` whose producer reads `a` last (see `lowering/graph/inplace_update.py`).
"""

from __future__ import annotations

from collections.abc import Mapping

from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, i64
from xdsl.utils.exceptions import VerifyException

UPDATES_ATTRIBUTE = "ag.updates"
"""`func.func` attribute: `[r, a, ...]`, result `r` is the new value of argument `a`."""

INPLACE_RESULTS_ATTRIBUTE = "ag.inplace_results"
"""`func.func` attribute: `[r, a, ...]`, result `r` may be computed over argument `a`."""


def result_pairs(f: func.FuncOp, name: str) -> dict[int, int]:
    """The pairs of attribute `name` of `f` as result index → argument index (checked:
    in range, same types, each result and argument once)."""
    attr = f.attributes.get(name)
    if attr is None:
        return {}
    where = f"'func.func' @{f.sym_name.data} {name}"
    if not isinstance(attr, DenseArrayBase) or attr.elt_type != i64 or len(attr) % 2:
        raise VerifyException(f"{where} must be an i64 array of (result, argument) pairs")
    values = [int(v) for v in attr.get_values()]
    pairs = dict(zip(values[::2], values[1::2], strict=True))
    if len(pairs) != len(values) // 2 or len(set(pairs.values())) != len(pairs):
        raise VerifyException(f"{where} names a result or an argument twice")
    inputs, outputs = f.function_type.inputs.data, f.function_type.outputs.data
    for r, a in pairs.items():
        if not (0 <= r < len(outputs) and 0 <= a < len(inputs)):
            raise VerifyException(f"{where} pair ({r}, {a}) is out of range")
        if outputs[r] != inputs[a]:
            raise VerifyException(
                f"{where}: result #{r} ({outputs[r]}) cannot take the buffer of argument "
                f"#{a} ({inputs[a]})"
            )
    return pairs


def set_result_pairs(f: func.FuncOp, name: str, pairs: Mapping[int, int]) -> None:
    """Sets attribute `name` of `f` to `pairs` (result index → argument index), or
    removes it when `pairs` is empty."""
    if not pairs:
        f.attributes.pop(name, None)
        return
    flat = [v for r in sorted(pairs) for v in (r, pairs[r])]
    f.attributes[name] = DenseArrayBase.from_list(i64, flat)
