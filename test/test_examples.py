"""The training examples (examples/*.py) reach, in a small run, the accuracy their
docstrings state for it, and write their loss-curve PNG.

Each runs through its `main(argv)` with small sizes; the thresholds are the docstrings'
(set with a margin below what the model reaches from several seeds, not from one run).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
sys.path.insert(0, str(EXAMPLES))

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _assert_png(path: Path) -> None:
    assert path.is_file(), path
    assert path.read_bytes()[:8] == PNG_MAGIC


@pytest.mark.slow
def test_mlp_reaches_90_percent_in_5_epochs(tmp_path):
    import mlp

    plot = tmp_path / "sub" / "mlp.png"
    history = mlp.main(["--epochs", "5", "--quiet", "--plot", str(plot)])
    assert history["test accuracy"] >= 0.90, history
    assert len(history["train cost"]) == 5
    assert history["train cost"][-1] < history["train cost"][0]
    _assert_png(plot)


@pytest.mark.slow
def test_lenet_reaches_85_percent_in_4_epochs(tmp_path):
    import lenet  # needs arignote.tensor.nnet.conv2d and arignote.tensor.signal.pool

    plot = tmp_path / "lenet.png"
    history = lenet.main(
        ["--epochs", "4", "--nkerns", "6", "16", "--hidden", "100", "--quiet", "--plot", str(plot)]
    )
    assert history["test accuracy"] >= 0.85, history
    assert history["train cost"][-1] < history["train cost"][0]
    _assert_png(plot)


def test_lenet_images_are_upsampled_and_padded():
    import lenet

    x = np.arange(64, dtype=float).reshape(1, 64) / 64
    images = lenet.to_lenet_images(x).reshape(20, 20)
    assert np.all(images[:2] == 0) and np.all(images[:, -2:] == 0)
    np.testing.assert_array_equal(images[2:4, 2:4], x[0, 0])
    np.testing.assert_array_equal(images[16:18, 16:18], x[0, 63])


@pytest.mark.slow
def test_dae_denoises_after_5_epochs(tmp_path):
    import dae  # needs arignote.sandbox.rng_mrg.MRG_RandomStreams

    plot = tmp_path / "dae.png"
    h = dae.main(["--epochs", "5", "--hidden", "50", "--quiet", "--plot", str(plot)])
    assert h["cost"][-1] < h["cost"][0], h
    assert h["mse_reconstructed"] < 0.6 * h["mse_corrupted"], h
    assert h["ink_reconstructed"] >= h["ink_corrupted"] + 0.05, h
    _assert_png(plot)


@pytest.mark.slow
def test_lstm_reaches_80_percent_in_120_iterations(tmp_path):
    import lstm

    plot = tmp_path / "lstm.png"
    result = lstm.main(["--iterations", "120", "--quiet", "--plot", str(plot)])
    losses = result["losses"]
    assert len(losses) == 120
    assert losses[-1] < losses[0] / 50, (losses[0], losses[-1])
    assert result["accuracy"] >= 0.80, result["accuracy"]
    _assert_png(plot)


def test_mlp_runs_as_a_script_quietly(tmp_path):
    """The command line: `--quiet` prints only the summary line (no progress bar, no
    per-epoch lines), and the PNG goes where `--plot` says."""
    plot = tmp_path / "curve.png"
    done = subprocess.run(
        [
            sys.executable,
            str(EXAMPLES / "mlp.py"),
            "--epochs",
            "1",
            "--hidden",
            "10",
            "--quiet",
            "--plot",
            str(plot),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("test accuracy"), done.stdout
    assert "epochs:" not in done.stderr and "it/s" not in done.stderr, done.stderr  # no bar
    _assert_png(plot)


def test_digits_split_sizes_and_errors():
    from example_utils import load_digits_split

    split = load_digits_split(n_train=1000, n_valid=297)
    assert split.train_x.shape == (1000, 64) and split.valid_x.shape == (297, 64)
    assert split.test_x.shape == (500, 64) and split.test_y.dtype.name == "int32"
    assert 0.0 <= split.train_x.min() and split.train_x.max() <= 1.0
    with pytest.raises(ValueError, match="n_train=1700 and n_valid=297"):
        load_digits_split(n_train=1700, n_valid=297)
