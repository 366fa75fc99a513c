#!/usr/bin/env python
"""Draw the pictures of docs/: `python docs/make_images.py` (needs pydot and graphviz's
`dot`, see docs/printing.md).

`docs/images/logreg_train.png`: `pydotprint` of the training function of the
logistic-regression seed program (examples/theano_tutorial/06_logreg_train.py), its
optimized graph as `train.maker.fgraph` holds it. Its DOT source is kept beside it
(`logreg_train.dot`), and the PNG carries the SHA-256 of that source in a `tEXt` chunk
(`arignote-source`), so the suite checks that the picture is current without graphviz:
the source drawn today must equal the kept one, and the PNG must have been drawn from it
(`test/docs/test_generated_pages.py`).
"""

from __future__ import annotations

import hashlib
import struct
import zlib
from pathlib import Path

import numpy

import arignote
import arignote.tensor as tt
from arignote.configuration import change_flags
from arignote.printing import pydotprint

IMAGES = Path(__file__).resolve().parent / "images"
STAMP_KEY = b"arignote-source"
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def logreg_train() -> arignote.Function:
    """The training function of seed 06 (float32, 784 features)."""
    with change_flags(floatX="float32"):
        rng = numpy.random.default_rng(0)
        feats = 784
        x = tt.matrix("x")
        y = tt.vector("y")
        w = arignote.shared(rng.standard_normal(feats).astype("float32"), name="w")
        b = arignote.shared(numpy.asarray(0.0, dtype="float32"), name="b")
        p_1 = 1 / (1 + tt.exp(-tt.dot(x, w) - b))
        prediction = p_1 > 0.5
        xent = -y * tt.log(p_1) - (1 - y) * tt.log(1 - p_1)
        cost = tt.cast(xent.mean(), "float32") + 0.01 * (w**2).sum()
        gw, gb = tt.grad(cost, [w, b])
        return arignote.function(
            inputs=[x, y],
            outputs=[prediction, xent],
            updates={w: w - 0.01 * gw, b: b - 0.01 * gb},
            name="train",
        )


def logreg_train_source() -> str:
    """The DOT text of the picture (needs no graphviz)."""
    return pydotprint(logreg_train(), format="dot", return_image=True, var_with_name_simple=True)


def source_digest(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()


def stamp_png(png: bytes, digest: str) -> bytes:
    """`png` with a `tEXt` chunk `arignote-source=<digest>` after its header chunk."""
    if not png.startswith(_PNG_SIGNATURE):
        raise ValueError("stamp_png: expected PNG data")
    payload = STAMP_KEY + b"\0" + digest.encode()
    chunk = (
        struct.pack(">I", len(payload))
        + b"tEXt"
        + payload
        + struct.pack(">I", zlib.crc32(b"tEXt" + payload))
    )
    header_end = len(_PNG_SIGNATURE) + 8 + 13 + 4  # the IHDR chunk
    return png[:header_end] + chunk + png[header_end:]


def png_stamp(png: bytes) -> str | None:
    """The digest `stamp_png` wrote into `png`, or None."""
    at = len(_PNG_SIGNATURE)
    while at + 8 <= len(png):
        length, kind = struct.unpack(">I4s", png[at : at + 8])
        data = png[at + 8 : at + 8 + length]
        if kind == b"tEXt" and data.startswith(STAMP_KEY + b"\0"):
            return data[len(STAMP_KEY) + 1 :].decode()
        at += 12 + length
    return None


def main() -> None:
    from arignote.printing import _render

    IMAGES.mkdir(exist_ok=True)
    source = logreg_train_source()
    (IMAGES / "logreg_train.dot").write_text(source)
    png = stamp_png(_render(source, "png"), source_digest(source))
    (IMAGES / "logreg_train.png").write_bytes(png)


if __name__ == "__main__":
    main()
