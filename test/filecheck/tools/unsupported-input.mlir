// A pass that meets IR it cannot lower reports one line and exits 1, no traceback.
// RUN: not arignote-opt %s -p ag-to-loops 2>&1 | filecheck %s

// CHECK: arignote-opt: error: {{.*}}unsupported-input.mlir:6:1: unsupported input: ag-to-loops: cannot lower declaration @g
// CHECK-NOT: Traceback
func.func private @g(%x: tensor<?xf32>) -> tensor<?xf32>
