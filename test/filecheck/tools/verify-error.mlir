// A verifier failure: one line on stderr naming the failing op's position, exit 1.
// With --verify-diagnostics and no expected-error comment, the error is unexpected: exit 1.
// RUN: not arignote-opt %s 2>&1 | filecheck %s
// RUN: not arignote-opt %s -p cse 2>&1 | filecheck %s
// RUN: not arignote-opt %s --split-input-file 2>&1 | filecheck %s --check-prefix=SPLIT
// RUN: not arignote-opt %s --verify-diagnostics 2>&1 | filecheck %s --check-prefix=DIAG

// CHECK:      arignote-opt: error: {{.*}}verify-error.mlir:[[# @LINE + 19]]:3: 'ag.add' op result type tensor<4xf32> does not match the inferred type tensor<3xf32>
// CHECK-NOT:  {{.}}

// With --split-input-file the first chunk is printed, the second fails at the same line.
// SPLIT:      func.func @ok(
// SPLIT:      {{//[ ]-----}}
// SPLIT-NEXT: arignote-opt: error: {{.*}}verify-error.mlir:[[# @LINE + 13]]:3: 'ag.add' op result type

// DIAG:      {{.*}}verify-error.mlir:[[# @LINE + 11]]:3: error: unexpected error: 'ag.add' op result type tensor<4xf32> does not match the inferred type tensor<3xf32>
// DIAG-NEXT: arignote-opt: error: 1 diagnostic(s) differ from the expected ones

func.func @ok(%b: tensor<?xi1>) -> tensor<?xi1> {
  %n = ag.maximum %b, %b : tensor<?xi1>, tensor<?xi1> -> tensor<?xi1>
  func.return %n : tensor<?xi1>
}

// -----

func.func @f(%x: tensor<?xf32>, %z: tensor<3xf32>) -> tensor<?xf32> {
  %y = ag.add %x, %z : tensor<?xf32>, tensor<3xf32> -> tensor<4xf32>
  func.return %x : tensor<?xf32>
}
