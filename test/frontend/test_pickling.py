"""Pickling (issue 13 item 9): compiled functions, shared variables, graphs and a model
object holding both, unpickled in this process and in a new one (where a function is
compiled again, from the compile cache); `arignote.misc.pkl_utils`; `In(implicit=True)`."""

from __future__ import annotations

import io
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.configuration import change_flags

LINKERS = ["py", "cvm"]

MODEL_SOURCE = textwrap.dedent(
    '''
    """The logistic regression model of Theano's tutorial, with its functions."""
    import numpy
    import arignote
    import arignote.tensor as T


    class LogisticRegression:
        def __init__(self, input, n_in, n_out, linker="cvm"):
            self.W = arignote.shared(numpy.zeros((n_in, n_out)), name="W", borrow=True)
            self.b = arignote.shared(numpy.zeros((n_out,)), name="b", borrow=True)
            self.p_y_given_x = T.nnet.softmax(T.dot(input, self.W) + self.b)
            self.y_pred = T.argmax(self.p_y_given_x, axis=1)
            self.params = [self.W, self.b]
            self.input = input
            y = T.lvector("y")
            cost = -T.mean(T.log(self.p_y_given_x)[T.arange(y.shape[0]), y])
            g_W, g_b = arignote.grad(cost, self.params)
            mode = arignote.Mode(linker=linker)
            self.train = arignote.function(
                [input, y], cost, updates=[(self.W, self.W - 0.5 * g_W),
                                           (self.b, self.b - 0.5 * g_b)], mode=mode)
            self.predict = arignote.function([input], self.y_pred, mode=mode)
    '''
)

CHILD = textwrap.dedent(
    """
    import pickle, sys
    import numpy
    import arignote
    from arignote.compile import codecache
    sys.path.insert(0, sys.argv[2])
    with open(sys.argv[1], "rb") as f:
        classifier, x_data = pickle.load(f)
    print(classifier.predict(x_data).tolist())
    # the tutorial's pattern: a new function from the unpickled graph
    predict_model = arignote.function(inputs=[classifier.input], outputs=classifier.y_pred)
    print(predict_model(x_data).tolist())
    classifier.train(x_data, numpy.array([0, 1, 1, 0]))
    print(classifier.W.get_value().round(6).tolist())
    print(dict(codecache.stats()))
    """
)


def _data() -> tuple[np.ndarray, np.ndarray]:
    x = np.array([[1.0, 0.0], [0.0, 1.0], [0.2, 0.9], [0.9, 0.1]])
    return x, np.array([0, 1, 1, 0])


def _run_child(script: Path, *args: str, compiledir: Path) -> list[str]:
    env = dict(os.environ, ARIGNOTE_FLAGS=f"compiledir={compiledir}")
    done = subprocess.run(
        [sys.executable, str(script), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,  # a hang guard: the child takes seconds
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_a_model_pickled_with_its_functions_runs_in_a_new_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "lr_model.py").write_text(MODEL_SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import lr_model  # type: ignore[import-not-found]

    x_data, y_data = _data()
    with change_flags(compile_cache=True, compiledir=str(tmp_path / "cache")):
        classifier = lr_model.LogisticRegression(T.dmatrix("x"), 2, 2)
        for _ in range(3):
            classifier.train(x_data, y_data)
        expected = classifier.predict(x_data).tolist()
        with open(tmp_path / "model.pkl", "wb") as f:
            pickle.dump((classifier, x_data), f)
        # what training once more gives, to compare with the child's
        again = pickle.loads(pickle.dumps(classifier))
        again.train(x_data, y_data)
        trained_w = again.W.get_value().round(6).tolist()
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    lines = _run_child(
        script, str(tmp_path / "model.pkl"), str(tmp_path), compiledir=tmp_path / "cache"
    )
    assert expected == [0, 1, 1, 0]
    assert lines[0] == str(expected) and lines[1] == str(expected)
    assert lines[2] == str(trained_w)
    stats = eval(lines[3])  # noqa: S307 - the child's dict of counters
    # both unpickled functions came from the cache (the new one is compiled)
    assert stats.get("hit", 0) >= 2, stats


@pytest.mark.parametrize("linker", LINKERS)
def test_a_function_pickles_with_its_state(linker: str) -> None:
    s = arignote.shared(np.ones(3), name="s")
    x, c = T.dvector("x"), T.dscalar("c")
    f = arignote.function(
        [x, arignote.In(c, value=1.5)],
        (x * s).sum() * c,
        updates=[(s, s * 2)],
        mode=arignote.Mode(linker=linker),
        name="f",
    )
    f(np.ones(3))
    g, s2 = pickle.loads(pickle.dumps((f, s)))
    assert g.name == "f" and g["c"] == 1.5
    assert g(np.ones(3)) == 2 * 3 * 1.5
    assert s2.get_value().tolist() == [4.0] * 3  # the unpickled function updates s2
    assert s.get_value().tolist() == [2.0] * 3  # and not the original
    assert g(np.ones(3), c=1.0) == 4 * 3


def test_shared_variables_pickle_their_value_name_and_type() -> None:
    value = np.arange(4.0)
    s = arignote.shared(value, name="w", borrow=True, strict=True)
    value[0] = 10.0  # borrowed: the variable sees it
    t = pickle.loads(pickle.dumps(s))
    assert t.name == "w" and t.type == s.type and t.strict
    assert t.get_value().tolist() == [10.0, 1.0, 2.0, 3.0]
    value[1] = 20.0  # the unpickled copy shares nothing with the original's value
    assert t.get_value()[1] == 1.0
    t.set_value(np.zeros(4))
    assert s.get_value()[0] == 10.0


@pytest.mark.parametrize("linker", LINKERS)
def test_a_graph_pickles_and_compiles_after_loading(linker: str) -> None:
    s = arignote.shared(np.array([1.0, 2.0]), name="s")
    x = T.dvector("x")
    y = T.tanh(x * s).sum()
    gy = arignote.grad(y, x)
    x2, y2, gy2, s2 = pickle.loads(pickle.dumps((x, y, gy, s)))
    assert x2.name == "x" and y2.owner.inputs[0].owner is not None
    f = arignote.function([x2], [y2, gy2], mode=arignote.Mode(linker=linker))
    value, gradient = f(np.array([0.5, -0.5]))
    np.testing.assert_allclose(value, np.tanh([0.5, -1.0]).sum())
    np.testing.assert_allclose(gradient, [1 - np.tanh(0.5) ** 2, 2 * (1 - np.tanh(-1.0) ** 2)])
    s2.set_value(np.zeros(2))
    assert f(np.ones(2))[0] == 0.0
    assert s.get_value().tolist() == [1.0, 2.0]


def test_a_function_with_a_custom_op_pickles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "my_ops.py").write_text(
        textwrap.dedent(
            """
            import arignote.tensor as T
            from arignote.compile.ops import as_op

            @as_op(itypes=[T.dvector], otypes=[T.dvector])
            def twice(a):
                return a * 2
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    from my_ops import twice  # type: ignore[import-not-found]

    x = T.dvector("x")
    f = arignote.function([x], twice(x).sum() + 1)
    g = pickle.loads(pickle.dumps(f))
    assert g(np.ones(3)) == 7.0
    with pytest.raises(pickle.PicklingError, match="Can't pickle as_op"):
        pickle.dumps(arignote.compile.ops.as_op([T.dvector], [T.dvector])(lambda a: a))


def test_pkl_utils_dump_and_load() -> None:
    from arignote.misc.pkl_utils import dump, load

    foo_1 = arignote.shared(0, name="foo")
    foo_2 = arignote.shared(1, name="foo")
    buffer = io.BytesIO()
    dump((foo_1, foo_2, np.array(2)), buffer)
    names = sorted(np.load(io.BytesIO(buffer.getvalue())).keys())
    assert names == ["array_0", "foo", "foo_2", "pkl"]
    foo_1, foo_2, array = load(io.BytesIO(buffer.getvalue()))
    assert foo_1.get_value() == 0 and foo_2.get_value() == 1 and array == 2
    x = T.dvector("x")
    f = arignote.function([x], x * foo_2)
    buffer = io.BytesIO()
    dump(f, buffer)
    assert load(io.BytesIO(buffer.getvalue()))(np.ones(2)).tolist() == [1.0, 1.0]


@pytest.mark.parametrize("linker", LINKERS)
def test_implicit_inputs(linker: str) -> None:
    x, y = T.dscalar("x"), T.dscalar("y")
    f = arignote.function(
        [x, arignote.In(y, value=3.0, implicit=True)], x * y, mode=arignote.Mode(linker=linker)
    )
    assert f(2.0) == 6.0
    with pytest.raises(TypeError, match="Tried to provide value for implicit input: y"):
        f(2.0, 4.0)
    with pytest.raises(TypeError, match="Tried to provide value for implicit input: y"):
        f(2.0, y=4.0)
    with pytest.raises(TypeError, match="An implicit input must be given a default value"):
        arignote.In(y, implicit=True)
