"""Pieces the training examples share: the digits data set, progress, the loss-curve image.

- `load_digits_split(...)`: scikit-learn's bundled handwritten digits (1797 images of 8x8
  pixels, values 0..16; no download), scaled to [0, 1], shuffled with a fixed seed and
  split into train / validation / test arrays;
- `progress(total, quiet)`: a tqdm bar, shown only on a terminal and without `--quiet`;
- `plot_curves(path, curves, ...)`: a PNG of one or more per-epoch curves (matplotlib's
  Agg backend, so no display is needed);
- `common_parser(doc, ...)`: the options every example takes (`--epochs`, `--seed`,
  `--plot`, `--quiet`);
- `report_classifier(args, history, title, ylabel)`: the classifiers' end (MLP, LeNet):
  their curves and the test accuracy line.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np


@dataclass
class Split:
    """Images (rows of 64 pixels in [0, 1]) and their integer labels, per subset."""

    train_x: np.ndarray
    train_y: np.ndarray
    valid_x: np.ndarray
    valid_y: np.ndarray
    test_x: np.ndarray
    test_y: np.ndarray


def load_digits_split(
    n_train: int = 1000, n_valid: int = 297, seed: int = 0, dtype: str = "float64"
) -> Split:
    """scikit-learn's digits, shuffled by `seed`: `n_train` for training, `n_valid` for
    validation, the rest (500 by default) for the test."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    order = np.random.default_rng(seed).permutation(len(digits.target))
    x = (digits.data[order] / 16.0).astype(dtype)
    y = digits.target[order].astype("int32")
    if not 0 < n_train < n_train + n_valid < len(y):
        raise ValueError(
            f"n_train={n_train} and n_valid={n_valid} must leave a test set of the {len(y)} digits"
        )
    a, b = n_train, n_train + n_valid
    return Split(x[:a], y[:a], x[a:b], y[a:b], x[b:], y[b:])


def progress(total: int, quiet: bool, desc: str = "epochs"):
    """A tqdm progress bar; off with `quiet`, and off when stderr is not a terminal."""
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, disable=True if quiet else None, leave=False)


def plot_curves(
    path: str | os.PathLike[str],
    curves: Mapping[str, Sequence[float]],
    title: str,
    xlabel: str = "epoch",
    ylabel: str = "loss",
    secondary: Mapping[str, Sequence[float]] | None = None,
    secondary_label: str = "error (%)",
    logy: bool = False,
) -> Path:
    """Write a PNG of `curves` (and of `secondary` on a right-hand axis); its path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4), dpi=100)
    for label, ys in curves.items():
        ax.plot(np.arange(1, len(ys) + 1), ys, label=label)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    handles, labels = ax.get_legend_handles_labels()
    if secondary:
        ax2 = ax.twinx()
        for i, (label, ys) in enumerate(secondary.items()):
            ax2.plot(np.arange(1, len(ys) + 1), ys, linestyle="--", color=f"C{i + 3}", label=label)
        ax2.set_ylabel(secondary_label)
        more_h, more_l = ax2.get_legend_handles_labels()
        handles, labels = handles + more_h, labels + more_l
    ax.legend(handles, labels, loc="upper right")
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    plt.close(fig)
    return out


def common_parser(doc: str, epochs: int, plot: str) -> argparse.ArgumentParser:
    """The options every example takes; each example adds its own sizes."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--epochs", type=int, default=epochs, help="passes over the training set")
    p.add_argument("--seed", type=int, default=1234, help="seed of the initial weights")
    p.add_argument("--plot", default=plot, help="where to write the loss-curve PNG")
    p.add_argument("--quiet", action="store_true", help="no progress bar, no per-epoch lines")
    return p


def report_classifier(
    args: Any, history: Mapping[str, Any], title: str, ylabel: str
) -> Mapping[str, Any]:
    """A classifier example's end: its training curve with the validation and test error
    (`args.plot`) and its test accuracy at the best validation error; `history`."""
    plot_curves(
        args.plot,
        {"train cost": history["train cost"]},
        title=title,
        ylabel=ylabel,
        secondary={
            "validation error": [100 * e for e in history["validation error"]],
            "test error": [100 * e for e in history["test error"]],
        },
    )
    print(
        f"test accuracy {100 * history['test accuracy']:.2f} % after {args.epochs} epochs "
        f"(at the best validation error); loss curve: {args.plot}"
    )
    return history
