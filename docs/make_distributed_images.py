#!/usr/bin/env python
"""Draw the picture of docs/distributed.md: `mpiexec -n 2 python
docs/make_distributed_images.py` (needs pydot and graphviz's `dot`, see docs/printing.md;
two processes, or the graph has no allreduce).

`docs/images/mpi_train.png`: `pydotprint` of the data-parallel training step of
examples/mpi_mlp.py, its optimized graph as `train.maker.fgraph` holds it: the gradients
flattened into one vector, averaged by one `Allreduce{mean}`, split into the updates.
"""

from __future__ import annotations

import sys
from pathlib import Path

from arignote import distributed
from arignote.printing import pydotprint

ROOT = Path(__file__).resolve().parent.parent
IMAGES = ROOT / "docs" / "images"


def main() -> None:
    sys.path.insert(0, str(ROOT / "examples"))
    import mpi_mlp

    distributed.init()
    if distributed.size() < 2:
        raise SystemExit("run under mpiexec -n 2: one process has no allreduce to draw")
    _, train, _ = mpi_mlp.build(0.1)
    if distributed.rank() == 0:
        IMAGES.mkdir(exist_ok=True)
        pydotprint(train, outfile=str(IMAGES / "mpi_train.png"), var_with_name_simple=True)


if __name__ == "__main__":
    main()
