"""The `llvm`-dialect lowering and the CPU target: `scf`→`cf`, the `convert-*-to-llvm`
passes, and `parallelize` (loops onto the native thread pool)."""
