"""Function attributes added to the LLVM IR that arignote translates from the `llvm`
dialect (xDSL's `convert_module` has no way to express them).

`"prefer-vector-width"="512"`: on AVX-512 hosts LLVM's X86 backend prefers 256-bit
vectors by default (the `prefer-256-bit` tuning of most AVX-512 CPUs, to avoid the clock
penalty of 512-bit instructions on older server parts); with the attribute the loop and
SLP vectorizers use 512-bit vectors (`<16 x float>`). Measured on the benchmark host
(docs/benchmarks.md): the elemwise workload's exp/tanh loop runs in 0.74x the time of the
256-bit code, the logistic-regression step's `gemv_pair` kernel in about 0.9x, the MLP
and RNN steps are unchanged or faster. The attribute is only a preference: on a host
without AVX-512 the widest legal vector (256 or 128 bits) is used, so the code is the
same as without it. It is part of the compile cache key (`attributes_text`).

`alwaysinline` on the private functions that one call site uses (`inline`, chosen by
`arignote.runtime.cpu`): the `@f__noalias` bodies and the `@f__par<k>__body` functions of the
outlined parallel loops, each called once (by `@f`, by the task `@f__par<k>`). The O3
inliner inlines them anyway, or keeps a large one (the logreg step's 940-line
`gemv_pair` row loop) out of line; either way it first weighs and simplifies each as a
function of its own. Inlined from the start, the logreg step's O3 pipeline took 135 ms
instead of 175 ms (docs/benchmarks.md, compile time), for code that runs as fast.
"""

from __future__ import annotations

from collections.abc import Collection

from llvmlite import ir

PREFER_VECTOR_WIDTH = 512
"""The widest vectors (in bits) that LLVM's vectorizers are asked to use."""

FUNCTION_ATTRIBUTES: tuple[tuple[str, str], ...] = (
    ("prefer-vector-width", str(PREFER_VECTOR_WIDTH)),
)
"""The string attributes `"key"="value"` of every function defined in the module."""


INLINE_ATTRIBUTE = "alwaysinline"
"""What `add_function_attributes` gives the functions it is asked to inline."""

NOINLINE_ATTRIBUTE = "noinline"
"""What it gives the kernels (each compiled once, whatever calls it)."""


def attributes_text() -> str:
    """The attributes as LLVM IR writes them (what the compile cache key includes)."""
    return " ".join(f'"{key}"="{value}"' for key, value in FUNCTION_ATTRIBUTES)


def add_function_attributes(
    module: ir.Module, inline: Collection[str] = (), never_inline: Collection[str] = ()
) -> ir.Module:
    """Give every function that `module` defines (not its declarations) the
    `FUNCTION_ATTRIBUTES`, those named in `inline` the `INLINE_ATTRIBUTE` and those named
    in `never_inline` (the kernels of `outline-kernels`) `noinline`; returns `module`."""
    for function in module.functions:
        if function.is_declaration:
            continue
        if function.name in inline:
            function.attributes.add(INLINE_ATTRIBUTE)
        elif function.name in never_inline:
            function.attributes.add(NOINLINE_ATTRIBUTE)
        for key, value in FUNCTION_ATTRIBUTES:
            # llvmlite's attribute set checks names against its enum attributes; a string
            # attribute is written as is
            set.add(function.attributes, f'"{key}"="{value}"')
    return module
