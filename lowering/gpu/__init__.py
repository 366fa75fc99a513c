"""The GPU target: kernels for the loops of `ag-to-loops`, host code for the rest.

`gpu-kernels` (kernels.py) works on loops over memrefs and reuses the CPU target's
outlining (`parallelize`); after the shared LLVM lowering, `split` (split.py) separates
the host functions from the kernels and writes each kernel's entry point with NVVM's
special registers. The runtime (`arignote.runtime.cuda`) makes PTX of the device module
with llvmlite's NVPTX target and runs it with pycuda.
"""
