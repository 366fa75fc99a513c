"""The Python code blocks of a Markdown page, and a runner that executes them.

`python doc_blocks.py PAGE NAME` runs the ```python blocks of the page PAGE in order, in
one namespace, as a reader copying them would, and exits with status 0 when all of them
ran as written. `NAME` is how reports call the page (e.g. `docs/scan.md`).

* A plain block is executed; an exception stops the page and its traceback names the
  page and the line in it (the page's text is registered with `linecache`, so the
  traceback also shows the line).
* A block with a line starting with `>>> ` is a doctest: each example runs and its output
  is compared with the page's (the `doctest` module, with `ELLIPSIS` and
  `NORMALIZE_WHITESPACE`), so a page whose printed output drifts from the code fails.
* A plain block followed by an ```output block (the next fenced block of the page) has
  what it prints compared with that block's text, as a doctest's output (`ELLIPSIS`,
  `NORMALIZE_WHITESPACE`): Sphinx's `testcode`/`testoutput` pair. An output block that
  is a traceback (`Traceback (most recent call last):`) expects the block to raise the
  exception it ends with; as doctest's `IGNORE_EXCEPTION_DETAIL`, its type is compared,
  not its message (arignote's messages are its own).
* A block preceded by a `<!-- not-run: reason -->` line is not run; the reason is
  required.

It imports only the standard library (the test module imports it for the list of
blocks, and the page's process should only import what the page does).
"""

from __future__ import annotations

import contextlib
import doctest
import io
import linecache
import re
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

_FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[^`\s]*)\s*$")
_NOT_RUN = re.compile(r"^\s*<!--\s*not-run\b:?(?P<reason>.*?)-->\s*$")
DOCTEST_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@dataclass(frozen=True)
class Block:
    """A fenced code block: its language, the page line of its first code line (1-based),
    its code (the fence's indentation removed) and, for a block marked not to run, the
    marker's reason (`""` when the marker gives none)."""

    lang: str
    line: int
    source: str
    not_run: str | None = None

    @property
    def is_doctest(self) -> bool:
        return any(line.lstrip().startswith(">>> ") for line in self.source.splitlines())


def fenced_blocks(text: str) -> list[Block]:
    """Every fenced block of the Markdown `text`, in order. An unclosed fence is a
    `ValueError` naming its line."""
    lines = text.splitlines()
    blocks = []
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        end = _closing_fence(lines, i, opening["indent"])
        body = [_dedent(line, len(opening["indent"])) for line in lines[i + 1 : end]]
        marker = _NOT_RUN.match(lines[i - 1]) if i > 0 else None
        reason = marker["reason"].strip() if marker else None
        blocks.append(Block(opening["lang"], i + 2, "\n".join(body) + "\n", reason))
        i = end + 1
    return blocks


def python_blocks(text: str) -> list[Block]:
    return [block for block in fenced_blocks(text) if block.lang == "python"]


def stray_not_run_markers(text: str) -> list[int]:
    """Lines (1-based) of `not-run` markers that are not right before a ```python fence."""
    lines = text.splitlines()
    stray = []
    for number, line in enumerate(lines, start=1):
        if not _NOT_RUN.match(line):
            continue
        following = _FENCE.match(lines[number]) if number < len(lines) else None
        if following is None or following["lang"] != "python":
            stray.append(number)
    return stray


def _closing_fence(lines: list[str], opening: int, indent: str) -> int:
    for j in range(opening + 1, len(lines)):
        if lines[j].strip() == "```" and lines[j].startswith(indent):
            return j
    raise ValueError(f"line {opening + 1}: the code fence is never closed")


def _dedent(line: str, width: int) -> str:
    """`line` without the fence's indentation of `width` spaces."""
    return line[width:] if line.startswith(" " * width) else line.lstrip()


def run_page(path: Path, name: str) -> int:
    """Runs the Python blocks of the page at `path` (reported as `name`); returns the
    process exit status: 0 when every block ran as written."""
    text = path.read_text()
    # Tracebacks through the page's code then show its lines.
    linecache.cache[name] = (len(text), None, text.splitlines(keepends=True), name)
    namespace: dict[str, object] = {"__name__": "__main__"}
    blocks = fenced_blocks(text)
    for index, block in enumerate(blocks):
        if block.lang != "python" or block.not_run is not None:
            continue
        following = blocks[index + 1] if index + 1 < len(blocks) else None
        if block.is_doctest:
            ok = _run_doctest(block, name, namespace)
        elif following is not None and following.lang == "output":
            ok = _run_with_output(block, following, name, namespace)
        else:
            ok = _run_plain(block, name, namespace)
        if not ok:
            print(f"{name}: the block at line {block.line} failed", file=sys.stderr)
            return 1
    return 0


_EXCEPTION_LINE = re.compile(r"^(?P<type>[A-Za-z_][\w.]*)(:|$)")


def _expected_exception(output: str) -> str | None:
    """The exception type an output block that is a traceback ends with (its first
    unindented line after the header), or None when the output is no traceback."""
    lines = output.splitlines()
    if not lines or not lines[0].startswith("Traceback (most recent call last):"):
        return None
    for line in lines[1:]:
        match = _EXCEPTION_LINE.match(line)
        if match and not line.startswith(" "):
            return match["type"].rpartition(".")[2]
    return None


def _run_expecting(block: Block, exception: str, name: str, namespace: dict[str, object]) -> bool:
    code = compile("\n" * (block.line - 1) + block.source, name, "exec")
    try:
        exec(code, namespace)
    except Exception as raised:
        if type(raised).__name__ == exception:
            return True
        traceback.print_exc()
        print(f"expected {exception}, got {type(raised).__name__}", file=sys.stderr)
        return False
    print(f"expected {exception}; the block raised nothing", file=sys.stderr)
    return False


def _run_with_output(
    block: Block, expected: Block, name: str, namespace: dict[str, object]
) -> bool:
    exception = _expected_exception(expected.source)
    if exception is not None:
        return _run_expecting(block, exception, name, namespace)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        ok = _run_plain(block, name, namespace)
    got = printed.getvalue()
    sys.stdout.write(got)
    checker = doctest.OutputChecker()
    if ok and not checker.check_output(expected.source, got, DOCTEST_FLAGS):
        example = doctest.Example(block.source, expected.source)
        sys.stderr.write(checker.output_difference(example, got, DOCTEST_FLAGS))
        return False
    return ok


def _run_plain(block: Block, name: str, namespace: dict[str, object]) -> bool:
    # Blank lines in front keep the code's line numbers those of the page.
    try:
        exec(compile("\n" * (block.line - 1) + block.source, name, "exec"), namespace)
    except Exception:
        traceback.print_exc()
        return False
    return True


def _run_doctest(block: Block, name: str, namespace: dict[str, object]) -> bool:
    test = doctest.DocTestParser().get_doctest(
        block.source, namespace, f"{name}:{block.line}", name, block.line - 1
    )
    runner = doctest.DocTestRunner(optionflags=DOCTEST_FLAGS)
    # The doctest reports go to stderr with the tracebacks; stdout is the page's own.
    result = runner.run(test, out=sys.stderr.write, clear_globs=False)
    namespace.update(test.globs)  # the test ran in a copy; later blocks see its names
    return result.failed == 0


if __name__ == "__main__":
    sys.exit(run_page(Path(sys.argv[1]), sys.argv[2]))
