"""The generated pages are current: `python docs/make_logreg_ir.py` and
`python docs/make_tensor_api_index.py` would write what is checked in (each page names
its command), and the pictures of `python docs/make_images.py` were drawn from the graph
the compiler gives today. A change to the compiler that changes the IR or the graph shown
fails here until the page is regenerated."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_logreg_ir_page_is_current(tmp_path: Path) -> None:
    # a fresh process with an empty compile cache, as `python docs/make_logreg_ir.py`
    script = (
        "import sys; sys.path.insert(0, 'docs'); import make_logreg_ir; "
        "sys.stdout.write(make_logreg_ir.render())"
    )
    env = {"ARIGNOTE_FLAGS": f"compiledir={tmp_path}", "ARIGNOTERC": "", "PATH": ""}
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == (ROOT / "docs" / "logreg_ir.md").read_text(), (
        "docs/logreg_ir.md is stale: run `python docs/make_logreg_ir.py`"
    )


def test_one_command_regenerates_every_generated_page() -> None:
    spec = importlib.util.spec_from_file_location("make_docs", ROOT / "docs" / "make_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert {Path(g).name for g in module.GENERATORS} == {
        "make_logreg_ir.py",
        "make_tensor_api_index.py",
        "make_images.py",
        "make_pypi_readme.py",
    }


def _make_images():
    spec = importlib.util.spec_from_file_location("make_images", ROOT / "docs" / "make_images.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_graph_picture_is_current() -> None:
    # graphviz is not needed: the DOT source drawn today must be the one kept beside the
    # PNG, and the PNG must carry that source's digest (stamped when it was rendered)
    images = _make_images()
    source = images.logreg_train_source()
    kept = (ROOT / "docs" / "images" / "logreg_train.dot").read_text()
    assert source == kept, "docs/images/logreg_train.* are stale: run `python docs/make_images.py`"
    png = (ROOT / "docs" / "images" / "logreg_train.png").read_bytes()
    assert images.png_stamp(png) == images.source_digest(kept), (
        "docs/images/logreg_train.png was not drawn from logreg_train.dot: "
        "run `python docs/make_images.py`"
    )


def test_png_stamp_round_trip_and_detects_another_source() -> None:
    images = _make_images()
    png = (ROOT / "docs" / "images" / "logreg_train.png").read_bytes()
    restamped = images.stamp_png(png, images.source_digest("digraph G {}"))
    assert images.png_stamp(restamped) == images.source_digest("digraph G {}")
    assert images.png_stamp(restamped) != images.source_digest(images.logreg_train_source())


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "docs" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_pypi_description_is_current_and_has_no_relative_link() -> None:
    pypi = _load("make_pypi_readme")
    page = (ROOT / "docs" / "pypi_readme.md").read_text()
    assert page == pypi.render(), (
        "docs/pypi_readme.md is stale: run `python docs/make_pypi_readme.py`"
    )
    assert pypi.relative_links(page) == []
    assert 'file = ["docs/pypi_readme.md"]' in (ROOT / "pyproject.toml").read_text()


def test_readme_relative_links_name_existing_files() -> None:
    pypi = _load("make_pypi_readme")
    links = pypi.relative_links((ROOT / "README.md").read_text())
    assert links, "README.md links its documentation pages"
    missing = [link for link in links if not (ROOT / link.split("#")[0]).exists()]
    assert missing == []
