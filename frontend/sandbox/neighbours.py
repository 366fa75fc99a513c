"""Theano's `theano.sandbox.neighbours`: the names of `arignote.tensor.nnet.neighbours`,
kept at their old path for compatibility (as Theano does)."""

from __future__ import annotations

from arignote.tensor.nnet.neighbours import Images2Neibs, images2neibs, neibs2images

__all__ = ["Images2Neibs", "images2neibs", "neibs2images"]
