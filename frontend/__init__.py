"""arignote: Theano's programming model as an MLIR-style compiler on xDSL.

    import arignote
    import arignote.tensor as T

    x = T.dmatrix("x")
    f = arignote.function([x], (x + 1) * 2)

The public names load on first use, so that `arignote-opt` and the subpackages
(`arignote.lowering`, `arignote.runtime`, `arignote.dialects`) do not pay for the
frontend.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# before any op class is defined: xDSL parses assembly formats when it needs them
from arignote.dialects import lazy_formats as _lazy_formats  # noqa: E402

_lazy_formats.install()

_LAZY = {
    "tensor": ("arignote.tensor", None),
    "compile": ("arignote.compile", None),
    "check_install": ("arignote.install_check", "check_install"),
    "function_dump": ("arignote.compile.function", "function_dump"),
    "function": ("arignote.compile", "function"),
    "Function": ("arignote.compile", "Function"),
    "Mode": ("arignote.compile", "Mode"),
    "get_mode": ("arignote.compile", "get_mode"),
    "ProfileStats": ("arignote.compile.profiling", "ProfileStats"),
    "DebugMode": ("arignote.compile.debugmode", "DebugMode"),
    "NanGuardMode": ("arignote.compile.nanguardmode", "NanGuardMode"),
    "MonitorMode": ("arignote.compile.monitormode", "MonitorMode"),
    "MissingInputError": ("arignote.compile", "MissingInputError"),
    "config": ("arignote.configuration", "config"),
    "change_flags": ("arignote.configuration", "change_flags"),
    "Apply": ("arignote.graph", "Apply"),
    "Op": ("arignote.graph", "Op"),
    "Variable": ("arignote.graph", "Variable"),
    "shared": ("arignote.compile.sharedvalue", "shared"),
    "SharedVariable": ("arignote.compile.sharedvalue", "SharedVariable"),
    "In": ("arignote.compile.io", "In"),
    "Out": ("arignote.compile.io", "Out"),
    "Param": ("arignote.compile.io", "Param"),
    "clone": ("arignote.compile.clone", "clone"),
    "grad": ("arignote.gradient", "grad"),
    "Lop": ("arignote.gradient", "Lop"),  # issue 13 item 6: theano's gradient names
    "Rop": ("arignote.gradient", "Rop"),
    "subgraph_grad": ("arignote.gradient", "subgraph_grad"),
    "gradient": ("arignote.gradient", None),
    "printing": ("arignote.printing", None),
    "pp": ("arignote.printing", "pp"),
    "dot": ("arignote.tensor", "dot"),
    "scalar": ("arignote.scalar", None),
    "scan": ("arignote.scan_module", "scan"),
    "map": ("arignote.scan_module", "map"),
    "reduce": ("arignote.scan_module", "reduce"),
    "foldl": ("arignote.scan_module", "foldl"),
    "foldr": ("arignote.scan_module", "foldr"),
    "scan_checkpoints": ("arignote.scan_module", "scan_checkpoints"),
    "scan_module": ("arignote.scan_module", None),
    "ifelse": ("arignote.ifelse", None),
    # custom ops (issue 13 item 8)
    "OpFromGraph": ("arignote.compile.builders", "OpFromGraph"),
    "as_op": ("arignote.compile.ops", "as_op"),
    "gof": ("arignote.gof", None),
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    entry = _LAZY.get(name)
    if entry is None:
        raise AttributeError(f"module 'arignote' has no attribute {name!r}")
    module = importlib.import_module(entry[0])
    value = module if entry[1] is None else getattr(module, entry[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
