"""The LSTM example (examples/lstm.py) trains: a short run on both linkers."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

import lstm  # noqa: E402


@pytest.mark.slow
def test_lstm_trains_natively_and_matches_the_interpreter() -> None:
    native = lstm.train(4, "cvm", verbose=False)
    assert len(native) == 4 and native[-1] < native[0]
    reference = lstm.train(2, "py", verbose=False)
    np.testing.assert_allclose(native[:2], reference, rtol=1e-10)
