"""Documentation is part of the feature, and it is tested: the ```python blocks of
README.md and docs/*.md run as written, so a page cannot drift from the code.

Each page runs in a fresh process (`doc_blocks.py`: its blocks in order, in one
namespace; doctest blocks have their printed output compared), with an empty temporary
compiledir and none of the caller's ARIGNOTE_FLAGS, THEANO_FLAGS or config files, so a
page sees the defaults it documents and may set flags or print at exit. A block may be
marked `<!-- not-run: reason -->` on the line right before its fence; the reason is
required (one block is marked today: a `pydotprint` call that needs graphviz)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUNNER = Path(__file__).with_name("doc_blocks.py")


def _load_runner() -> ModuleType:
    """`doc_blocks.py`, loaded from its path whatever pytest's import mode."""
    spec = importlib.util.spec_from_file_location("arignote_test_doc_blocks", RUNNER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


_runner = _load_runner()
fenced_blocks = _runner.fenced_blocks
python_blocks = _runner.python_blocks
stray_not_run_markers = _runner.stray_not_run_markers
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
PAGES_WITH_CODE = [page for page in PAGES if python_blocks(page.read_text())]


def page_name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def run_page(page: Path, name: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Runs the page's blocks in a fresh process with the documented defaults."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARIGNOTE", "THEANO"))}
    env["ARIGNOTE_FLAGS"] = f"compiledir={tmp_path / 'compiledir'}"
    env["ARIGNOTERC"] = ""  # no config file is read
    return subprocess.run(
        [sys.executable, str(RUNNER), str(page), name],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,  # a hang guard: a page takes seconds
    )


@pytest.mark.parametrize("page", PAGES_WITH_CODE, ids=page_name)
def test_page_code_runs_as_written(page: Path, tmp_path: Path) -> None:
    done = run_page(page, page_name(page), tmp_path)
    report = f"stdout (end):\n{done.stdout[-2000:]}\nstderr (end):\n{done.stderr[-8000:]}"
    assert done.returncode == 0, f"{page_name(page)} does not run as written\n{report}"


@pytest.mark.parametrize("page", PAGES, ids=page_name)
def test_page_blocks_are_marked_correctly(page: Path) -> None:
    """Python sessions are ```python blocks (so they run), and every block not run says
    why."""
    text = page.read_text()
    sessions = [b.line for b in fenced_blocks(text) if b.is_doctest and b.lang != "python"]
    assert sessions == [], f"{page_name(page)}: `>>>` blocks not fenced as ```python"
    unexplained = [b.line for b in python_blocks(text) if b.not_run == ""]
    assert unexplained == [], f"{page_name(page)}: not-run blocks without a reason"
    assert stray_not_run_markers(text) == [], f"{page_name(page)}: not-run markers on no block"


# The runner itself, on small pages.


def write_page(tmp_path: Path, text: str) -> Path:
    page = tmp_path / "page.md"
    page.write_text(text)
    return page


def test_blocks_share_one_namespace_in_order(tmp_path: Path) -> None:
    page = write_page(
        tmp_path,
        "Text.\n\n```python\nx = 2\n```\n\n```python\n>>> y = x * 21\n```\n"
        "```python\nassert y == 42\n```\n"
        "```sh\nexit 1\n```\n<!-- not-run: a reason -->\n```python\nraise SystemError\n```\n",
    )
    done = run_page(page, "page.md", tmp_path)
    assert done.returncode == 0, done.stderr


def test_drifted_output_fails_naming_the_line(tmp_path: Path) -> None:
    page = write_page(tmp_path, "# Page\n\n```python\n>>> 1 + 1\n2\n>>> print(0.5)\n0.25\n```\n")
    done = run_page(page, "docs/page.md", tmp_path)
    assert done.returncode == 1
    assert 'File "docs/page.md", line 6' in done.stderr
    assert "Expected:\n    0.25\nGot:\n    0.5" in done.stderr


def test_printed_output_is_compared_with_the_output_block(tmp_path: Path) -> None:
    good = "```python\nfor i in range(3):\n    print(i * 0.5)\n```\n\n```output\n0.0 0.5 ...\n```\n"
    assert run_page(write_page(tmp_path, good), "docs/page.md", tmp_path).returncode == 0
    bad = write_page(tmp_path, good.replace("0.0 0.5", "0.0 0.25"))
    done = run_page(bad, "docs/page.md", tmp_path)
    assert done.returncode == 1
    assert "Expected:\n    0.0 0.25 ...\nGot:\n    0.0\n    0.5\n    1.0" in done.stderr


def test_a_traceback_output_expects_that_exception(tmp_path: Path) -> None:
    raises = "```python\n{}\n```\n\n```output\nTraceback (most recent call last):\n  ...\n{}\n```\n"
    page = write_page(tmp_path, raises.format("1 / 0", "ZeroDivisionError: any message"))
    assert run_page(page, "docs/page.md", tmp_path).returncode == 0
    page = write_page(tmp_path, raises.format("[][1]", "ZeroDivisionError: division by zero"))
    done = run_page(page, "docs/page.md", tmp_path)
    assert done.returncode == 1 and "expected ZeroDivisionError, got IndexError" in done.stderr
    page = write_page(tmp_path, raises.format("pass", "ValueError: x"))
    done = run_page(page, "docs/page.md", tmp_path)
    assert done.returncode == 1 and "the block raised nothing" in done.stderr


def test_exception_traceback_names_the_page_and_line(tmp_path: Path) -> None:
    page = write_page(tmp_path, "# Page\n\n```python\nx = 1\ny = x / 0\n```\n\n```python\n```\n")
    done = run_page(page, "docs/page.md", tmp_path)
    assert done.returncode == 1
    assert 'File "docs/page.md", line 5, in <module>\n    y = x / 0' in done.stderr
    assert "ZeroDivisionError" in done.stderr
    assert "docs/page.md: the block at line 4 failed" in done.stderr


def test_indented_blocks_and_markers() -> None:
    text = (
        "* item:\n\n  ```python\n  >>> 1\n  1\n  ```\n"
        "<!-- not-run -->\n```python\npass\n```\n<!-- not-run: why -->\n```sh\n```\n"
    )
    first, second, _ = fenced_blocks(text)
    assert (first.line, first.source, first.is_doctest) == (4, ">>> 1\n1\n", True)
    assert second.not_run == ""
    assert stray_not_run_markers(text) == [11]
