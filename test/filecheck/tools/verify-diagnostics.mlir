// --verify-diagnostics checks MLIR's expected-error comments: this file's expectations
// hold (exit 0, the IR of the good chunk on stdout); Inputs/verify-diagnostics-wrong.mlir
// states wrong ones, and each mismatch is reported (exit 1).
// RUN: arignote-opt %s --split-input-file --verify-diagnostics | filecheck %s --check-prefix=OUT
// RUN: not arignote-opt %S/Inputs/verify-diagnostics-wrong.mlir --split-input-file --verify-diagnostics 2>&1 | filecheck %s --check-prefix=WRONG

// OUT: func.func @good

// WRONG:      verify-diagnostics-wrong.mlir:5:3: error: unexpected error: 'ag.add' op result type tensor<4xf32> does not match the inferred type tensor<3xf32>
// WRONG-NEXT: verify-diagnostics-wrong.mlir:4: error: expected error "this is not what the verifier says" (at line 5) was not produced
// WRONG-NEXT: verify-diagnostics-wrong.mlir:13:3: error: unexpected error: 'ag.add' op result type
// WRONG-NEXT: verify-diagnostics-wrong.mlir:12: error: expected error "does not match the inferred type" (at line 14) was not produced
// WRONG-NEXT: verify-diagnostics-wrong.mlir:20: error: expected error "never happens" (at line 21) was not produced
// WRONG-NEXT: arignote-opt: error: 5 diagnostic(s) differ from the expected ones

func.func @bad(%a: tensor<3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{result type tensor<4xf32> does not match}}
  %0 = ag.add %a, %b : tensor<3xf32>, tensor<3xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @parse(%a: tensor<3xf32>) {
  %0 = ag.nope %a  // expected-error {{Operation ag.nope is not registered}}
  func.return
}

// -----

func.func @good(%a: tensor<3xf32>) -> tensor<3xf32> {
  func.return %a : tensor<3xf32>
}
