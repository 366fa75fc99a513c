"""PTX from the device module of the GPU split, with llvmlite's NVPTX target.

Runs on any machine: no GPU, driver or CUDA toolkit is needed to make PTX. `ptxas`
(where installed) validates it: `validate(ptx, arch)`. libdevice (the CUDA toolkit's
`nvvm/libdevice/libdevice.10.bc`) is linked only when a kernel calls one of its
functions (`__nv_fmodf`, ...); `libdevice_path()` finds it from `CUDA_HOME`,
`CUDA_PATH`, the `nvcc` on the PATH or `/usr/local/cuda`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

import llvmlite.binding as llvm
from xdsl.dialects.builtin import ModuleOp

TRIPLE = "nvptx64-nvidia-cuda"
DEFAULT_ARCH = "sm_90"
PTX_FEATURES = "+ptx80"
"""PTX ISA 8.0: CUDA 12.0 and later drivers load it, and every architecture from sm_50
to sm_90a has it."""


class PtxError(RuntimeError):
    """PTX could not be made or does not validate (the message says why)."""


def arch_of(capability: tuple[int, int]) -> str:
    """`(9, 0)` → `sm_90`."""
    major, minor = capability
    return f"sm_{major}{minor}"


def device_ir(
    device: ModuleOp, entries: Sequence[str] = (), special: str = "", internal: bool = True
) -> str:
    """The LLVM IR text of the device module with the kernel entry points appended;
    its functions internal (only the entry points visible) unless `internal=False` (the
    CPU emulation calls the tasks)."""
    from xdsl.backend.llvm.convert import convert_module

    module = convert_module(device, fallback_target_triple=TRIPLE)
    for function in module.functions:
        if not function.is_declaration and internal:
            function.linkage = "internal"
    text = str(module)
    return text + special + "".join(entries)


def libdevice_path() -> Path | None:
    """The CUDA toolkit's libdevice bitcode, or None where no toolkit is found."""
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")]
    nvcc = shutil.which("nvcc")
    if nvcc:
        roots.append(str(Path(nvcc).resolve().parent.parent))
    roots.append("/usr/local/cuda")
    for root in roots:
        if root:
            found = sorted(Path(root).glob("nvvm/libdevice/libdevice*.bc"))
            if found:
                return found[-1]
    return None


def _target_machine(arch: str) -> llvm.TargetMachine:
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    target = llvm.Target.from_triple(TRIPLE)
    return target.create_target_machine(cpu=arch, features=PTX_FEATURES, opt=3)


def ptx(ir_text: str, arch: str = DEFAULT_ARCH) -> str:
    """PTX for `arch` (`sm_90`, ...) of the device LLVM IR `ir_text`, optimized at O3."""
    machine = _target_machine(arch)
    context = llvm.create_context()
    try:
        module = llvm.parse_assembly(ir_text, context)
    except RuntimeError as e:
        raise PtxError(f"LLVM rejects the device IR: {e}") from e
    module.triple = TRIPLE
    module.data_layout = str(machine.target_data)
    if any(f.is_declaration and f.name.startswith("__nv_") for f in module.functions):
        path = libdevice_path()
        if path is None:
            raise PtxError(
                "a kernel calls a libdevice function, and no CUDA toolkit (libdevice) was "
                "found: set CUDA_HOME"
            )
        library = llvm.parse_bitcode(path.read_bytes(), context)
        library.triple, library.data_layout = module.triple, module.data_layout
        module.link_in(library)
    module.verify()
    from arignote.runtime.cpu import _dispose_pass_manager

    builder = llvm.create_pass_builder(machine, llvm.PipelineTuningOptions(speed_level=3))
    manager = builder.getModulePassManager()
    try:
        manager.run(module, builder)
    finally:
        _dispose_pass_manager(manager)
    return machine.emit_assembly(module)


def ptxas() -> str | None:
    """The `ptxas` on the PATH, if any."""
    return shutil.which("ptxas")


def validate(text: str, arch: str = DEFAULT_ARCH) -> bytes:
    """Assemble `text` with `ptxas -arch=<arch>`; the cubin. Raises `PtxError` with
    ptxas's message when it rejects the PTX, `FileNotFoundError` without ptxas."""
    tool = ptxas()
    if tool is None:
        raise FileNotFoundError("ptxas is not on the PATH")
    with tempfile.TemporaryDirectory() as tmp:
        source, cubin = Path(tmp) / "k.ptx", Path(tmp) / "k.cubin"
        source.write_text(text)
        done = subprocess.run(
            [tool, f"-arch={arch}", str(source), "-o", str(cubin)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise PtxError(f"ptxas -arch={arch} rejects the PTX: {done.stderr.strip()}")
        return cubin.read_bytes()
