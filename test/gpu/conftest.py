"""The GPU tests run on two devices: the CPU emulation of `arignote.runtime.cuda_emulator`
(everywhere: the GPU split's host code, kernel table, launches and device memory calls,
with each kernel's task compiled for the CPU), and a real CUDA GPU through pycuda where
one is present (skipped cleanly elsewhere)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from arignote.configuration import config
from arignote.runtime import cuda

REAL_GPU = not cuda.emulating() and cuda.available()


@pytest.fixture(params=["emulated", "cuda"])
def gpu(request: pytest.FixtureRequest) -> Iterator[str]:
    """`config.device=cuda` on the emulated device, then on a real GPU (if any)."""
    if request.param == "cuda":
        if not REAL_GPU:
            pytest.skip("no CUDA GPU here (pycuda, the driver or a GPU is missing)")
        with config.change_flags(device="cuda"):
            yield "cuda"
        return
    with cuda.emulate(), config.change_flags(device="cuda"):
        yield "emulated"
