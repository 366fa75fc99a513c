"""The compile cache's key read from the frontend graph (`codecache.graph_text`): a hit
emits no module, the key tells apart exactly the functions whose emitted modules
`ir_text` tells apart, and graphs it cannot spell fall back to the emitted module."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.compile import codecache
from arignote.compile.function import MissingInputError
from arignote.compile.io import In, Out
from arignote.compile.mode import Mode
from arignote.configuration import change_flags
from arignote.ifelse import ifelse


@pytest.fixture
def cachedir(tmp_path: Path):
    with change_flags(compile_cache=True, compiledir=str(tmp_path)):
        yield Path(codecache.cache_directory())


def mlp(layers: int = 2, lr: float = 0.01, name: str | None = None) -> arignote.Function:
    """A small training function (the same source lines for every call)."""
    x, y = T.dmatrix("x"), T.ivector("y")
    h, params = x, []
    for i in range(layers):
        params += [
            arignote.shared(np.full((4, 4), 0.1 * (i + 1)), name=f"W{i}"),
            arignote.shared(np.zeros(4), name=f"b{i}"),
        ]
        h = T.tanh(T.dot(h, params[-2]) + params[-1])
    cost = -T.mean(T.log(T.nnet.softmax(h))[T.arange(y.shape[0]), y])
    grads = arignote.grad(cost, params)
    updates = [(p, p - lr * g) for p, g in zip(params, grads, strict=True)]
    return arignote.function([x, y], cost, updates=updates, name=name)


ARGS = (np.arange(12.0).reshape(3, 4) / 10, np.array([0, 1, 3], "int32"))


def test_a_hit_emits_no_module(cachedir: Path) -> None:
    first = mlp()
    assert first._compiled._module is not None  # a miss compiles the emitted module
    before = codecache.stats()
    second = mlp()
    assert codecache.stats()["hit"] == before["hit"] + 1
    assert second._compiled._module is None
    got, want = second(*ARGS), first(*ARGS)
    np.testing.assert_array_equal(got, want)
    # the views of the graph emit it when asked
    assert codecache.ir_text(second.module) == codecache.ir_text(first.module)
    assert [str(n.op) for n in second.maker.fgraph.toposort()] == [
        str(n.op) for n in first.maker.fgraph.toposort()
    ]


def functions() -> dict[str, arignote.Function]:
    """Functions whose graphs differ in one thing each (`same`, `same_again`: none)."""
    interp = Mode(linker="py")  # (nothing is compiled: only the texts are compared)
    x, y = T.dvector("x"), T.dvector("y")
    w = arignote.shared(np.ones(3), name="w")

    def f(inputs, outputs, **kw):
        return arignote.function(inputs, outputs, mode=interp, **kw)

    total, moved = x.sum(), w + x  # (one op each: the two functions differ in the updates)

    def same():
        return f([x, y], [x * 0.1 + y, (x - y).sum()])

    return {
        "same": same(),
        "same_again": same(),
        "nextafter": f([x, y], [x * np.nextafter(0.1, 1) + y, (x - y).sum()]),
        "inputs_swapped": f([y, x], [x * 0.1 + y, (x - y).sum()]),
        "outputs_swapped": f([x, y], [(x - y).sum(), x * 0.1 + y]),
        "one_output": f([x, y], [x * 0.1 + y]),
        "float32_constant": f([x, y], [x * np.float32(0.1) + y, (x - y).sum()]),
        "named": f([x, y], [x * 0.1 + y, (x - y).sum()], name="named"),
        "update": f([x], total, updates=[(w, moved)]),
        "update_as_output": f([x], [total, moved]),
        "update_twice": f([x], x.sum(), updates=[(w, w + 2 * x)]),
        "shared_read": f([x], (x * w).sum()),
        "mlp_a": mlp(1),
        "mlp_lr": mlp(1, lr=0.02),
        "mlp_deeper": mlp(2),
    }


def test_the_graph_key_tells_apart_what_ir_text_tells_apart() -> None:
    fns = functions()
    graph = {k: f._compiled.graph_text() for k, f in fns.items()}
    emitted = {k: codecache.ir_text(f.module) for k, f in fns.items()}
    assert all(text is not None for text in graph.values())
    for a in fns:
        for b in fns:
            assert (graph[a] == graph[b]) == (emitted[a] == emitted[b]), (a, b)
    assert graph["same"] == graph["same_again"]
    assert len(set(graph.values())) == len(graph) - 1  # all others differ


def test_graphs_it_cannot_spell_fall_back_to_the_emitted_module(cachedir: Path) -> None:
    x = T.dvector("x")
    c = T.dscalar("c")
    branchy = arignote.function([c, x], ifelse(c > 0, x.sum(), x.mean()))
    assert branchy._compiled.graph_text() is None  # the branches' ops move into them
    printing = arignote.function([x], arignote.printing.Print("x")(x) * 2)
    assert printing._compiled.graph_text() is None
    before = codecache.stats()
    again = arignote.function([c, x], ifelse(c > 0, x.sum(), x.mean()))
    # the emitted module's key, which leaves out the source lines of the node labels
    assert codecache.stats()["hit"] == before["hit"] + 1
    assert again(1.0, np.arange(3.0)) == 3.0 and again(-1.0, np.arange(3.0)) == 1.0


def test_a_missing_input_is_still_an_error(cachedir: Path) -> None:
    x, y = T.dvector("x"), T.dvector("y")
    with pytest.raises(MissingInputError):
        arignote.function([x], x + y)
    with pytest.raises(MissingInputError):
        arignote.function([x], y, on_unused_input="ignore")


def featured() -> dict[str, arignote.Function]:
    """Functions using what `function()` does around the graph (same lines each call)."""
    x, y, acc = T.dvector("x"), T.dvector("y"), T.dvector("acc")
    w = arignote.shared(np.ones(3), name="w")
    return {
        "givens": arignote.function([x], (x * y).sum(), givens={y: x + 1}),
        "in_update": arignote.function([x, In(acc, value=np.zeros(3), update=acc + x)], acc.sum()),
        "default": arignote.function([x, In(y, value=np.ones(3))], x + y),
        "updates": arignote.function([x], (x * w).sum(), updates=[(w, w * 2)]),
        "borrowed": arignote.function([x], Out(x * 2, borrow=True)),
    }


def test_what_function_does_around_the_graph_works_on_a_hit(cachedir: Path) -> None:
    """Givens, `In` updates and defaults, shared updates, `Out(borrow=True)`: a hit
    (nothing emitted) computes what the compiled function does, twice (the updates), and
    its views, pickle and copy emit the module when asked."""
    first = featured()
    before = codecache.stats()["hit"]
    second = featured()
    assert codecache.stats()["hit"] - before == len(second)
    a = np.arange(3.0)
    for name, f in second.items():
        assert f._compiled._module is None, name
        for _ in range(2):
            np.testing.assert_allclose(f(a), first[name](a), err_msg=name)
        assert [str(n.op) for n in f.maker.fgraph.toposort()], name
        again, copied = pickle.loads(pickle.dumps(f)), f.copy()
        (from_copy,) = copied(a)  # (a copy returns a list, as Theano's)
        np.testing.assert_allclose(again(a), from_copy, err_msg=name)


PROGRAM = """
x, y, z = T.dvector("x"), T.dvector("y"), T.dvector("z")
f = arignote.function([x, y, z], T.exp(x) * 2 + y + z)
"""


def built_at(source: str, line: int) -> arignote.Function:
    """The function `f` that `source` makes, run as lines `line`, ... of `prog.py`."""
    namespace = {"T": T, "arignote": arignote}
    exec(compile("\n" * (line - 1) + source, "prog.py", "exec"), namespace)
    return namespace["f"]


def shape_error(f: arignote.Function, bad: int) -> str:
    """The message of `f` called with input #`bad` one element longer."""
    args = [np.ones(3), np.ones(3), np.ones(3)]
    args[bad] = np.ones(4)
    with pytest.raises(ValueError) as e:
        f(*args)
    return str(e.value)


def test_a_graph_built_on_other_lines_finds_its_entry_and_quotes_its_lines(cachedir: Path) -> None:
    """The key leaves out the source lines of the node labels (a script edited above its
    model finds its functions again); the messages of a hit quote the caller's lines."""
    first = built_at(PROGRAM, 1)
    assert "[Elemwise{add} at prog.py:3]" in shape_error(first, 1)
    before = codecache.stats()
    moved = built_at(PROGRAM, 11)
    assert codecache.stats()["hit"] == before["hit"] + 1
    assert moved._compiled._module is None
    message = shape_error(moved, 2)
    assert "[Elemwise{add} at prog.py:13]" in message and "prog.py:3]" not in message
    args = [np.arange(3.0), np.ones(3), np.full(3, 2.0)]
    np.testing.assert_array_equal(moved(*args), first(*args))


def test_labels_that_do_not_pair_up_compile_again(cachedir: Path) -> None:
    """One stored label standing for two lines of the caller (an expression split over
    two lines) cannot say which line a message means: a miss, which stores the entry
    again with the caller's labels."""
    one_line = 'x, y, z = T.dvector("x"), T.dvector("y"), T.dvector("z")\n' + (
        "f = arignote.function([x, y, z], x + y + z)\n"
    )
    two_lines = 'x, y, z = T.dvector("x"), T.dvector("y"), T.dvector("z")\n' + (
        "a = x + y\nf = arignote.function([x, y, z], a + z)\n"
    )
    assert "prog.py:2]" in shape_error(built_at(one_line, 1), 2)
    before = codecache.stats()
    split = built_at(two_lines, 1)
    assert codecache.stats()["hit"] == before["hit"]
    assert codecache.stats()["store"] == before["store"] + 1
    assert "[Elemwise{add} at prog.py:3]" in shape_error(split, 2)
    assert "[Elemwise{add} at prog.py:2]" in shape_error(split, 1)
    before = codecache.stats()
    again = built_at(two_lines, 5)  # the entry now has its labels: a hit
    assert codecache.stats()["hit"] == before["hit"] + 1
    assert "[Elemwise{add} at prog.py:7]" in shape_error(again, 2)
