"""`config.device`, checked where it is used: when a function is compiled and when a
shared variable is made (never at import: a program that sets `device=cuda` imports
arignote and learns at its first `function()` or `shared()` what is missing).

arignote has no GPU backend yet: compiled code runs on the CPU only. A GPU device
(`cuda`, `cuda<N>`, or Theano's older `gpu`, `gpu<N>`) therefore cannot be used, and
`gpu_missing()` says what is missing here (the backend itself, and whichever of pycuda,
the CUDA driver and an NVIDIA GPU this machine lacks). What happens then follows
Theano's `device` / `force_device` flags (doc/library/config.txt): with
`force_device=False` (the default) the work falls back to the CPU, with a
`DeviceFallbackWarning` naming what is missing (never silently); with
`force_device=True` it is a `DeviceUnavailableError`.
"""

from __future__ import annotations

import ctypes.util
import glob
import importlib.util
import warnings
from functools import cache

from arignote.configuration import config

GPU_BACKEND_MISSING = "arignote has no GPU backend yet (its compiled code runs on the CPU only)"


class DeviceUnavailableError(RuntimeError):
    """`config.device` names a device that cannot be used (with `force_device=True`)."""


class DeviceFallbackWarning(RuntimeWarning):
    """`config.device` names a device that cannot be used: the work runs on the CPU."""


def has_pycuda() -> bool:
    return importlib.util.find_spec("pycuda") is not None


def has_cuda_driver() -> bool:
    return ctypes.util.find_library("cuda") is not None


def has_nvidia_gpu() -> bool:
    return bool(glob.glob("/dev/nvidia[0-9]*") or glob.glob("/proc/driver/nvidia/gpus/*"))


@cache
def gpu_missing() -> tuple[str, ...]:
    """What this process lacks to run on a GPU, the backend first (probed once)."""
    missing = [GPU_BACKEND_MISSING]
    if not has_pycuda():
        missing.append("pycuda is not installed")
    if not has_cuda_driver():
        missing.append("no CUDA driver (libcuda) was found")
    if not has_nvidia_gpu():
        missing.append("no NVIDIA GPU was found (no /dev/nvidia<N>)")
    return tuple(missing)


def check_device(what: str) -> None:
    """Raise `DeviceUnavailableError` (`force_device=True`) or warn that `what` runs on
    the CPU, when `config.device` is not the CPU."""
    device = config.device
    if device == "cpu":
        return
    source = config.source("device")
    message = f"config.device={device!r} (set in {source}) cannot be used: " + "; ".join(
        gpu_missing()
    )
    if config.force_device:
        raise DeviceUnavailableError(
            f"{message}. {what} is refused because config.force_device is True; "
            "set device='cpu' to run on the CPU"
        )
    from arignote.testvalue import user_frame

    _, level = user_frame()
    warnings.warn(
        f"{message}. {what} runs on the CPU instead (set device='cpu' to silence this, or "
        "force_device=True to make it an error)",
        DeviceFallbackWarning,
        stacklevel=level,
    )
