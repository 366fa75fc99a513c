"""Theano's `theano.tensor.nnet.neighbours` (`arignote.tensor.nnet.neighbours`):
`images2neibs` in its five modes against a NumPy reference written neighbourhood by
neighbourhood (Theano's `Images2Neibs.perform`) on both linkers, `neibs2images`, the
gradients with `verify_grad`, and the errors.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.gradient import verify_grad
from arignote.tensor.nnet import neighbours
from arignote.tensor.nnet.neighbours import Images2Neibs, images2neibs, neibs2images

BACKENDS = ["py", "cvm"]
# (mode, neib_shape, neib_step, image shape): disjoint and overlapping steps, odd sizes
CASES = [
    ("valid", (2, 3), None, (2, 3, 4, 6)),
    ("valid", (2, 2), (1, 2), (1, 2, 5, 6)),
    ("half", (2, 3), (1, 1), (1, 1, 4, 5)),
    ("ignore_borders", (2, 3), (2, 2), (2, 1, 5, 8)),
    ("full", (2, 3), (1, 1), (1, 1, 3, 4)),
    ("wrap_centered", (3, 3), (2, 2), (1, 2, 5, 4)),
]


def mode(backend: str) -> arignote.Mode:
    return arignote.Mode(linker=backend)


def _positions(h: int, c: int, step: int, how: str) -> list[list[int]]:
    """For each neighbourhood along an axis, its image positions (-1: padding)."""
    if how == "wrap_centered":
        return [[(a * step + i - c // 2) % h for i in range(c)] for a in range(-(-h // step))]
    shift = {"half": c // 2, "full": c - 1}.get(how, 0)
    count = (h + 2 * shift - c) // step + 1
    return [
        [p if 0 <= p < h else -1 for p in (a * step + i - shift for i in range(c))]
        for a in range(count)
    ]


def reference(x: np.ndarray, shape: tuple[int, int], step: Any, how: str) -> np.ndarray:
    step = shape if step is None else step
    rows = _positions(x.shape[2], shape[0], step[0], how)
    cols = _positions(x.shape[3], shape[1], step[1], how)
    out = []
    for n, s in np.ndindex(*x.shape[:2]):
        for r in rows:
            for c in cols:
                out.append([x[n, s, i, j] if i >= 0 and j >= 0 else 0 for i in r for j in c])
    return np.array(out, dtype=x.dtype).reshape(-1, shape[0] * shape[1])


@pytest.mark.parametrize("backend", BACKENDS)
def test_images2neibs_modes(backend: str) -> None:
    """Every mode against the reference; float32 and float64 cases alternate (one
    compiled function)."""
    rng = np.random.RandomState(0)
    dtypes = ["float32", "float64"] * len(CASES)
    values = [rng.randn(*case[3]).astype(d) for case, d in zip(CASES, dtypes, strict=False)]
    inputs = [T.tensor4(f"x{k}", dtype=str(v.dtype)) for k, v in enumerate(values)]
    outs = [
        images2neibs(v, shape, step, how)
        for v, (how, shape, step, _) in zip(inputs, CASES, strict=True)
    ]
    results = arignote.function(inputs, outs, mode=mode(backend))(*values)
    for value, (how, shape, step, _), got in zip(values, CASES, results, strict=True):
        expected = reference(value, shape, step, how)
        assert got.dtype == value.dtype
        np.testing.assert_array_equal(got, expected, err_msg=f"{how} {shape} {step}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_theano_example(backend: str) -> None:
    """Theano's docstring example: one 10x10 image in disjoint 5x5 patches gives 4x25;
    and a literal 4x4 case in 2x2 patches."""
    images = T.tensor4("images")
    f = arignote.function([images], images2neibs(images, neib_shape=(5, 5)), mode=mode(backend))
    im_val = np.arange(100.0).reshape((1, 1, 10, 10)).astype(images.dtype)
    neibs_val = f(im_val)
    assert neibs_val.shape == (4, 25)
    np.testing.assert_array_equal(neibs_val[1, :5], [5, 6, 7, 8, 9])
    small = f(np.arange(400.0).reshape(1, 1, 20, 20).astype(images.dtype))
    assert small.shape == (16, 25)
    g = arignote.function([images], images2neibs(images, (2, 2)), mode=mode(backend))
    got = g(np.arange(16.0).reshape(1, 1, 4, 4).astype(images.dtype))
    np.testing.assert_array_equal(
        got, [[0, 1, 4, 5], [2, 3, 6, 7], [8, 9, 12, 13], [10, 11, 14, 15]]
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_neibs2images(backend: str) -> None:
    """The inverse of disjoint `images2neibs`: the images back (`valid`), with the
    dropped border zero (`ignore_borders`)."""
    x = T.dtensor4("x")
    valid = neibs2images(images2neibs(x, (2, 3)), (2, 3), x.shape)
    borders = neibs2images(
        images2neibs(x, (2, 3), mode="ignore_borders"), (2, 3), x.shape, mode="ignore_borders"
    )
    f = arignote.function([x], valid, mode=mode(backend))
    g = arignote.function([x], borders, mode=mode(backend))
    rng = np.random.RandomState(1)
    value = rng.randn(2, 3, 4, 6)
    np.testing.assert_array_equal(f(value), value)
    odd = rng.randn(2, 1, 5, 7)
    expected = odd.copy()
    expected[:, :, 4:] = 0
    expected[:, :, :, 6:] = 0
    np.testing.assert_array_equal(g(odd), expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradients(backend: str) -> None:
    """The gradient of `images2neibs` (every mode: it is a composition of slices) and of
    `neibs2images`."""
    rng = np.random.RandomState(2)

    def all_modes(x: Any) -> Any:
        parts = [
            T.flatten(images2neibs(x, shape, step, how))
            for how, shape, step in [
                ("ignore_borders", (3, 2), None),
                ("full", (3, 2), (2, 1)),
                ("wrap_centered", (3, 3), (2, 1)),
            ]
        ]
        return T.concatenate(parts)

    verify_grad(all_modes, [rng.randn(1, 2, 5, 4)], rng=rng, mode=mode(backend))

    def back(n: Any) -> Any:
        return neibs2images(n, (2, 2), (1, 2, 4, 2))

    verify_grad(back, [rng.randn(4, 4)], rng=rng, mode=mode(backend))


@pytest.mark.parametrize("backend", BACKENDS)
def test_inconsistent_shapes_at_run_time(backend: str) -> None:
    """`valid` needs `(h - r) % step == 0` (`half`, `full` likewise, after padding) and
    `wrap_centered` an image at least as large as the neighbourhood: ValueError when the
    function runs."""
    x = T.dtensor4("x")
    f = arignote.function([x], images2neibs(x, (2, 2)), mode=mode(backend))
    assert f(np.zeros((1, 1, 4, 4))).shape == (4, 4)
    with pytest.raises(ValueError, match=r"neib_shape\[0\]=2, neib_step\[0\]=2"):
        f(np.zeros((1, 1, 5, 4)))
    with pytest.raises(ValueError, match=r"neib_shape\[1\]=2, neib_step\[1\]=2"):
        f(np.zeros((1, 1, 4, 3)))
    g = arignote.function([x], images2neibs(x, (3, 3), mode="wrap_centered"), mode=mode(backend))
    with pytest.raises(ValueError, match="smaller then the patch shapes"):
        g(np.zeros((1, 1, 2, 4)))


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda x: images2neibs(x, (0, 2), (1, 1)), ValueError, "neib_shape values <=0"),
        (lambda x: images2neibs(x, (2, 2), (0, 1)), ValueError, "neib_step wrong step"),
        (lambda x: images2neibs(x, (2, 3), mode="wrap_centered"), TypeError, "odd shapes"),
        (lambda x: images2neibs(x, (2, 2), mode="same"), NotImplementedError, "Only modes"),
        (lambda x: images2neibs(x[0], (2, 2)), TypeError, "ten4 must be a 4-d tensor"),
        (lambda x: images2neibs(x, (2.0, 2.0)), TypeError, "neib_shape must be two ints"),
        (lambda x: images2neibs(x, (2, 2, 2)), TypeError, "neib_shape must be two ints"),
        (lambda x: images2neibs(x, x.shape[2:]), NotImplementedError, "known when the graph"),
        (
            lambda x: neibs2images(x[0, 0], (2, 2), x.shape, "half"),
            NotImplementedError,
            "mode=half",
        ),
    ],
)
def test_errors(call: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        call(T.dtensor4("x"))


def test_op_class_and_paths() -> None:
    assert str(Images2Neibs("half")) == "Images2Neibs{half}"
    assert Images2Neibs() == Images2Neibs("valid") != Images2Neibs("full")
    assert hash(Images2Neibs("full")) == hash(Images2Neibs("full"))
    import arignote.sandbox.neighbours as old

    assert old.images2neibs is neighbours.images2neibs
    assert arignote.tensor.nnet.neighbours.Images2Neibs is Images2Neibs
