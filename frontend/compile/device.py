"""`config.device`, checked where it is used: when a function is compiled and when a
shared variable is made (never at import: a program that sets `device=cuda` imports
arignote and learns at its first `function()` or `shared()` what is missing).

A GPU device (`cuda`, `cuda<N>`, or Theano's older `gpu`, `gpu<N>`) runs compiled
functions on an NVIDIA GPU (`arignote.runtime.cuda`: PTX from llvmlite, run by pycuda)
when this machine has what that needs: pycuda (`pip install "arignote[gpu]"`), the CUDA
driver and a GPU. `gpu_missing()` says what is missing. Without it, what happens follows
Theano's `device` / `force_device` flags (doc/library/config.txt): with
`force_device=False` (the default) the work falls back to the CPU, with a
`DeviceFallbackWarning` naming what is missing (never silently); with
`force_device=True` it is a `DeviceUnavailableError`.

`use_gpu()` is the decision: True when `config.device` is a GPU that can be used.
"""

from __future__ import annotations

import ctypes.util
import glob
import importlib.util
import warnings
from functools import cache

from arignote.configuration import config


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


def gpu_missing() -> tuple[str, ...]:
    """What this process lacks to run on a GPU (probed once; empty when nothing is, and
    while `arignote.runtime.cuda.emulate()` is on)."""
    from arignote.runtime.cuda import emulating

    return () if emulating() else _probe()


@cache
def _probe() -> tuple[str, ...]:
    missing = []
    if not has_pycuda():
        missing.append('pycuda is not installed (pip install "arignote[gpu]")')
    if not has_cuda_driver():
        missing.append("no CUDA driver (libcuda) was found")
    if not has_nvidia_gpu():
        missing.append("no NVIDIA GPU was found (no /dev/nvidia<N>)")
    if not missing:
        from arignote.runtime.cuda import CudaUnavailableError, require

        try:
            require(config.device)
        except CudaUnavailableError as e:
            missing.append(str(e))
    return tuple(missing)


def use_gpu() -> bool:
    """Whether compiled functions run on the GPU `config.device` names (False for the
    CPU, and for a GPU this machine cannot use)."""
    return config.device != "cpu" and not gpu_missing()


def check_device(what: str) -> None:
    """Raise `DeviceUnavailableError` (`force_device=True`) or warn that `what` runs on
    the CPU, when `config.device` is a GPU that cannot be used."""
    device = config.device
    if device == "cpu" or not gpu_missing():
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


def gpu_fallback(what: str, why: str) -> None:
    """A function that cannot run on the GPU runs on the CPU: warn (or raise with
    `force_device=True`), naming `why`."""
    message = f"config.device={config.device!r}: {what} cannot run on the GPU: {why}"
    if config.force_device:
        raise DeviceUnavailableError(f"{message} (config.force_device is True)")
    from arignote.testvalue import user_frame

    _, level = user_frame()
    warnings.warn(f"{message}; it runs on the CPU", DeviceFallbackWarning, stacklevel=level)
