"""The target-independent lowering: `ag` on tensors to `scf` loops over `memref`s
(`ag-to-loops` and its kernels), shared by the CPU and GPU targets."""
