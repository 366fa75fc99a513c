"""`arignote.compile.ops`: Theano's module path for the shape ops it defines (`shape`,
`shape_i`, `Shape_i`), re-exported from where arignote defines them."""

from __future__ import annotations

from arignote.graph import Shape_i
from arignote.tensor.basic import shape, shape_i

__all__ = ["Shape_i", "shape", "shape_i"]
