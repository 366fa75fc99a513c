#!/usr/bin/env python
"""Write docs/theano_tutorials/*.md: the code of Theano's tutorial pages, run on arignote.

    python docs/make_theano_tutorials.py PATH_TO_THEANO_CHECKOUT

Reads `doc/tutorial/<page>.txt` at `HEAD` of a git checkout of github.com/Theano/Theano
and keeps what Sphinx's doctest builder runs: the `>>>` examples with their output, and
the `testsetup`/`testcode` blocks with their `testoutput`, under the page's section
titles. `theano` is renamed `arignote` in the code (the program a user runs after
renaming the import); each page first sets NumPy's printing to `legacy="1.13"`, the
format of the output Theano's pages show. Sections that need
what this page set leaves out are skipped, listed in `SKIPPED` with why. The test suite
runs every generated page (test/docs/test_docs.py) and compares the output.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

OUT = Path(__file__).resolve().parent / "theano_tutorials"
PAGES = {
    "adding": "Baby steps: algebra",
    "examples": "More examples",
    "gradients": "Derivatives",
    "conditions": "Conditions",
    "loop": "Loop",
    "printing_drawing": "Printing and drawing",
    "debug_faq": "Debugging",
    "aliasing": "Understanding memory aliasing",
    "broadcasting": "Broadcasting",
    "numpy": "NumPy refresher",
    "loading_and_saving": "Loading and saving",
    "modes": "Configuration settings and compiling modes",
    "profiling": "Profiling Theano function",
    "extending_theano": "Creating a new Op: Python implementation",
}
NOT_INCLUDED = {
    "`shape_info.txt`": "it shows Theano's shape-inference rewrites: `f = function([x, y], "
    "join(x, y).shape)` prints a graph without the join and does not check that the "
    "shapes join; arignote's graph computes the join and raises the shape error",
    "`using_gpu.txt`, `multi_cores.txt`, `sparse.txt`": "GPU and sparse topics of later issues",
    "`conv_arithmetic.txt`": "not generated yet: its `conv2d` calls run on arignote since "
    "issue 14, but the page is mostly figures of convolution shapes",
}
SKIPPED: dict[tuple[str, str], str] = {
    ("examples", "A Real Example: Logistic Regression"): "it trains for 10000 steps (minutes "
    "of suite time); the same model is the seed program "
    "`examples/theano_tutorial/06_logreg_train.py`, run by `test/test_seed_programs.py`",
}
"""(page, section title or a piece of a block's code) -> why its blocks are not run."""

_HEADING = re.compile(r"^([=\-~^\"'`#*+])\1{3,}\s*$")
_DIRECTIVE = re.compile(r"^(\s*)\.\. (testcode|testoutput|testsetup|doctest)::")


@dataclass
class Section:
    title: str
    chunks: list[tuple[str, str]] = field(default_factory=list)
    """(kind, text): kind "doctest", "code" or "output"."""


def show(repo: str, path: str) -> str:
    command = ["git", "-C", repo, "show", "HEAD:" + path]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


REWRITES = [
    (r"\btheano\b", "arignote", "the import renamed"),
    (r"\btime\.clock\(\)", "time.perf_counter()", "`time.clock` was removed in Python 3.8"),
    (r"from six\.moves import cPickle", "import pickle as cPickle", "Python 2's pickle"),
    (
        r"arignote\.function\(\[W, V, x\], JV\)",
        "arignote.function([W, V, x], JV, on_unused_input='ignore')",
        "arignote's R-op of `dot(x, W)` is `dot(x, V)`, which does "
        "not read `W`; Theano's also computed `dot(zeros_like(x), W)`",
    ),
]
"""(pattern, replacement, why) applied to the code, in order."""

SETUP = """```python
import arignote
import numpy
numpy.set_printoptions(legacy="1.13")
```
"""
"""Each page's first block: the pages print arrays as the NumPy of their time did, and
use `theano.` names before importing it (Theano's doc build had it imported)."""


def rewrite(code: str) -> str:
    for pattern, replacement, _ in REWRITES:
        code = re.sub(pattern, replacement, code)
    return code


def _block(lines: list[str], start: int, indent: int) -> tuple[list[str], int]:
    """The content of the directive at `start` (options dropped, dedented) and the index
    after it."""
    body: list[str] = []
    i = start + 1
    while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > indent):
        body.append(lines[i])
        i += 1
    body = [line for line in body if not line.strip().startswith(":")]
    while body and not body[-1].strip():
        body.pop()
    width = min((_indent(line) for line in body if line.strip()), default=0)
    return [line[width:] for line in body], i


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _doctest_paragraph(lines: list[str], start: int) -> tuple[str, int]:
    i = start
    while i < len(lines) and lines[i].strip():
        i += 1
    width = _indent(lines[start])
    text = "\n".join(line[width:] for line in lines[start:i])
    return _rename_doctest(text), i


def _rename_doctest(text: str) -> str:
    """The examples' code renamed; their output as it is."""
    out = []
    in_output = False
    for line in text.splitlines():
        is_code = line.startswith(">>>") or (line.startswith("...") and not in_output)
        in_output = not is_code
        out.append(rewrite(line) if is_code else line)
    return "\n".join(out)


def _in_literal_block(lines: list[str], start: int) -> bool:
    """Whether the `>>>` paragraph at `start` is the content of a `::` literal block
    (shown, not run by Sphinx) rather than a doctest block."""
    previous = start - 1
    while previous >= 0 and not lines[previous].strip():
        previous -= 1
    return (
        previous >= 0
        and lines[previous].rstrip().endswith("::")
        and (_indent(lines[start]) > _indent(lines[previous]))
    )


def sections(page: str) -> list[Section]:
    lines = page.splitlines()
    found = [Section("")]
    i = 0
    while i < len(lines):
        line = lines[i]
        if i + 1 < len(lines) and line.strip() and _HEADING.match(lines[i + 1]):
            found.append(Section(line.strip()))
            i += 2
            continue
        directive = _DIRECTIVE.match(line)
        if directive:
            body, i = _block(lines, i, len(directive[1]))
            kind = {"testoutput": "output", "doctest": "doctest"}.get(directive[2], "code")
            text = "\n".join(body)
            if kind == "doctest" and ">>>" not in text:
                continue  # no examples: Sphinx runs nothing
            text = _rename_doctest(text) if kind == "doctest" else text
            if kind == "output":
                text = text.strip("\n")
            found[-1].chunks.append((kind, rewrite(text) if kind == "code" else text))
            continue
        if line.lstrip().startswith(">>>"):
            text, end = _doctest_paragraph(lines, i)
            if not _in_literal_block(lines, i):
                found[-1].chunks.append(("doctest", text))
            i = end
            continue
        i += 1
    return found


GRAPH_PRINT = "arignote prints its own graph: its ops, casts and rewrites are not Theano's"
OUTPUT_DIFFERS: dict[tuple[str, str], str] = {
    ("gradients", "pp(gy)"): GRAPH_PRINT,
    ("printing_drawing", "printing.pprint(prediction)"): GRAPH_PRINT,
    ("printing_drawing", "printing.debugprint("): GRAPH_PRINT,
    ("debug_faq", "detect_nan"): GRAPH_PRINT,
    ("adding", ">>> type(x)"): "arignote's variables are `arignote.graph.Variable`, which "
    "`arignote.tensor.TensorVariable` names",
}
"""(page, a piece of an example's code) -> why its output is compared only in its first
character (the rest is `...`), with the reason as a comment."""

OUTPUT_REWRITES = [
    (r",no_inplace\}", "}", "arignote's op names do not say `no_inplace`"),
]
"""(pattern, replacement, why) applied to the output Theano's pages show."""


def rewrite_output(text: str) -> str:
    for pattern, replacement, _ in OUTPUT_REWRITES:
        text = re.sub(pattern, replacement, text)
    return text


def _elided(output: str) -> str:
    return output.lstrip()[:1] + "..."


def _output_differs(page: str, code: str) -> str | None:
    for (differs_page, match), reason in OUTPUT_DIFFERS.items():
        if differs_page == page and match in code:
            return reason
    return None


def _own_output(page: str, doctest: str) -> str:
    """The doctest text with the output of each example of `OUTPUT_DIFFERS` as `...`."""
    out: list[str] = []
    replacing = False
    in_output = False
    for line in doctest.splitlines():
        is_code = line.startswith(">>>") or (line.startswith("...") and not in_output)
        if line.startswith(">>>"):
            reason = _output_differs(page, line)
            replacing = reason is not None
            if replacing:
                out += [f">>> # {reason}:", line]
        if is_code and replacing and line.startswith(">>>"):
            in_output = False
            continue
        if not is_code and replacing:
            if not in_output:
                out.append(_elided(line))
        elif not is_code:
            out.append(rewrite_output(line))
        else:
            out.append(line)
        in_output = not is_code
    return "\n".join(out)


def _skip_reason(page: str, title: str, code: str) -> str | None:
    for (skip_page, match), reason in SKIPPED.items():
        if skip_page == page and (match == title or match in code):
            return reason
    return None


def render(name: str, title: str, page: str) -> str:
    out = [
        f"# Theano tutorial: {title}",
        "",
        f"The code of Theano's tutorial page `doc/tutorial/{name}.txt`, run on arignote with",
        "`theano` renamed `arignote` (generated by `docs/make_theano_tutorials.py`; the test",
        "suite runs it and compares the printed output). Changes to the code: "
        + "; ".join(f"`{p}` -> `{r}` ({why})" for p, r, why in REWRITES)
        + ". Changes to the output: "
        + "; ".join(f"`{p}` -> `{r}` ({why})" for p, r, why in OUTPUT_REWRITES)
        + "; a traceback is compared by its exception's type (arignote's messages are its"
        " own); where a comment says arignote prints its own graph, only the first"
        " character of the output is compared.",
        "",
        SETUP,
    ]
    for section in sections(page):
        if not section.chunks:
            continue
        if section.title:
            out += [f"## {section.title}", ""]
        differs = None
        for kind, text in section.chunks:
            skipped = _skip_reason(name, section.title, text)
            if kind == "code":
                differs = _output_differs(name, text)
                text = f"# {differs}\n{text}" if differs else text
            elif kind == "output":
                text = _elided(text) if differs else rewrite_output(text)
            if skipped and kind != "output":
                out.append(f"<!-- not-run: {skipped} -->")
            if kind == "doctest":
                text = _own_output(name, text)
            fence = "output" if kind == "output" else "python"
            out += [f"```{fence}", text, "```", ""]
    return "\n".join(out)


def index() -> str:
    lines = [
        "# Theano's tutorial, run on arignote",
        "",
        "The code of each page of Theano's tutorial listed below, with",
        "`theano` renamed `arignote`; the test suite runs every page and compares what it",
        "prints (`test/docs/test_docs.py`). Generated by `docs/make_theano_tutorials.py`",
        "from Theano's `doc/tutorial/`. Blocks that are not run say why.",
        "",
        "| Theano page | here |",
        "|---|---|",
    ]
    for name, title in PAGES.items():
        lines.append(f"| {title} (`doc/tutorial/{name}.txt`) | [{name}.md]({name}.md) |")
    skipped = sorted({f"`{page}`: {why}" for (page, _), why in SKIPPED.items()})
    lines += ["", "Not run: " + "; ".join(skipped) + ".", ""]
    lines += [f"Not included: {name} ({why})." for name, why in NOT_INCLUDED.items()]
    return "\n".join(lines) + "\n"


def main(repo: str) -> None:
    OUT.mkdir(exist_ok=True)
    for name, title in PAGES.items():
        page = show(repo, f"doc/tutorial/{name}.txt")
        (OUT / f"{name}.md").write_text(render(name, title, page))
        print(f"wrote docs/theano_tutorials/{name}.md", file=sys.stderr)
    (OUT / "index.md").write_text(index())


if __name__ == "__main__":
    main(sys.argv[1])
