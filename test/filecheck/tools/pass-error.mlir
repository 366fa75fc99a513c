// A pass that refuses its input (IR that verifies but that the pass cannot take) gives
// one line naming the op's position, exit status 1, no traceback. Before, these were
// Python tracebacks (ValueError).
// RUN: not arignote-opt %s -p to-llvm 2>&1 | filecheck %s
// RUN: not arignote-opt %s -p profile-timers,profile-timers 2>&1 | filecheck %s --check-prefix=TWICE

// CHECK:      arignote-opt: error: {{.*}}pass-error.mlir:[[# @LINE + 8]]:3: ag-to-loops: ag.profile_end of node 1 without a profile_begin
// CHECK-NOT:  Traceback

// TWICE:      arignote-opt: error: profile-timers: @f already has timers
// TWICE-NOT:  Traceback

func.func @f(%x: tensor<?xf64>) -> tensor<?xf64> {
  %y = ag.neg %x : tensor<?xf64>
  ag.profile_end %y {node = 1 : i64} : tensor<?xf64>
  func.return %y : tensor<?xf64>
}
