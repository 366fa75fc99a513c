#!/usr/bin/env python
"""Write docs/logreg_ir.md: the seed logistic-regression training function's IR as
emitted by the frontend and after the FAST_RUN graph pipeline, with its optimized graph.

    python docs/make_logreg_ir.py
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS))

from make_images import logreg_train  # noqa: E402

from arignote.lowering.pipelines import GRAPH_PIPELINES  # noqa: E402

HEADER = """# The seed logistic-regression step, optimized

The training function of `examples/theano_tutorial/06_logreg_train.py` (float32, 784
features: outputs `[prediction, xent]`, updates of `w` and `b`), as `train.dump_ir(stage)`
shows it. Regenerate with `python docs/make_logreg_ir.py`. The FAST_RUN graph pipeline is
`{pipeline}` (docs/passes.md describes each pass).
"""


def render() -> str:
    """The page's text, from a fresh compile of the training function."""
    train = logreg_train()
    parts = [HEADER.format(pipeline=GRAPH_PIPELINES["fast_run"])]
    parts.append("## The optimized graph (`train.maker.fgraph.toposort()`)\n")
    parts.append("```")
    parts.extend(str(node) for node in train.maker.fgraph.toposort())
    parts.append("```\n")
    for stage, title in (
        ("emitted", "As emitted by the frontend"),
        ("optimized", "After the FAST_RUN graph passes"),
    ):
        parts.append(f'## {title} (`dump_ir("{stage}")`)\n')
        parts.append("```mlir")
        parts.append(train.dump_ir(stage).rstrip())
        parts.append("```\n")
    return "\n".join(parts)


PAGE = DOCS / "logreg_ir.md"


def main() -> None:
    PAGE.write_text(render())


if __name__ == "__main__":
    main()
