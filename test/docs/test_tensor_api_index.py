"""docs/tensor_api_index.md is current, every unsupported name says why, and the share of
Theano's public names that arignote supports stays at or above the page's target."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _generator() -> ModuleType:
    path = ROOT / "docs" / "make_tensor_api_index.py"
    spec = importlib.util.spec_from_file_location("arignote_make_tensor_api_index", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_index_page_is_current() -> None:
    generator = _generator()
    text, _ = generator.build()
    assert generator.PAGE.read_text() == text, (
        "docs/tensor_api_index.md is stale: run `python docs/make_tensor_api_index.py`"
    )


def test_every_unsupported_name_says_why() -> None:
    _, table = _generator().build()
    silent = [
        f"{m}.{n}"
        for m, n, _, status, _, why in table
        if status == "no" and not why.strip("() ").replace("no reason given", "")
    ]
    assert not silent, f"unsupported without a reason in WHY_NOT: {silent}"


def test_supported_share_meets_the_target() -> None:
    generator = _generator()
    _, table = generator.build()
    names = generator.counted(table)
    share = sum(row[3] == "yes" for row in names) / len(names)
    assert share >= generator.REQUIRED_FRACTION, f"{share:.3f} of Theano's names supported"


def test_operators_and_table_entries_count_as_uses() -> None:
    generator = _generator()
    tests = generator.test_index()
    assert any("test_named_functions.py" in t for t in tests["__add__"])
    assert "test_float_values_and_special_values" in generator.table_tests()["sin"][0]
