"""`arignote.check_install()` / `python -m arignote`: one line per part, what to install
for a missing one, and the exit status."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

import arignote
from arignote import install_check as module


def test_report_names_every_part() -> None:
    out = io.StringIO()
    assert arignote.check_install(file=out)  # this test environment has every required part
    report = out.getvalue()
    for topic in (
        "python",
        "numpy",
        "xdsl",
        "llvmlite",
        "LLVM",
        "CPU",
        "vector features",
        "BLAS",
        "BLAS threads",
        "compile cache",
        "ptxas",
        "GPU (pycuda)",
        "MPI (mpi4py)",
    ):
        assert any(line[3:].startswith(topic) for line in report.splitlines()), topic
    assert "OpenBLAS" in report


def test_a_missing_part_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real = module.importlib.util.find_spec
    monkeypatch.setattr(
        module.importlib.util,
        "find_spec",
        lambda name, *a: None if name in ("pycuda", "mpi4py") else real(name, *a),
    )
    monkeypatch.setattr(module, "_version", lambda name: None if name == "xdsl" else "1.0")
    out = io.StringIO()
    assert not module.check_install(file=out)  # xdsl is required
    lines = out.getvalue().splitlines()
    assert any(line.startswith("-- xdsl") and "[pip install xdsl]" in line for line in lines)
    assert any(
        line.startswith("-- GPU (pycuda)") and "pip install pycuda" in line for line in lines
    )
    assert any(line.startswith("-- MPI (mpi4py)") and "mpi4py" in line for line in lines)


def test_python_dash_m_arignote_exits_zero_when_usable() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "arignote"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith("ok python")
