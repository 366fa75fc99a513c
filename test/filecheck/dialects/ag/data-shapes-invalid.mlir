// Verifier failures of `ag.specify_shape`, `ag.assert` and `ag.flatnonzero`, one per
// chunk; each checked against its expected-error comment (--verify-diagnostics fails on a mismatch).
// RUN: arignote-opt %s --split-input-file --verify-diagnostics

func.func @specify_rank(%x: tensor<?x?xf32>) {
  %0 = ag.specify_shape %x[] {shape = array<i64: 3>} : tensor<?x?xf32> -> tensor<3xf32>  // expected-error {{'ag.specify_shape' op the shape has 1 entries for an operand of rank 2}}
  func.return
}

// -----

func.func @specify_static_conflict(%x: tensor<2x?xf32>) {
  %0 = ag.specify_shape %x[] {shape = array<i64: 3, 4>} : tensor<2x?xf32> -> tensor<3x4xf32>  // expected-error {{'ag.specify_shape' op the operand of shape 2x? cannot have length 3 at dimension 0}}
  func.return
}

// -----

func.func @specify_negative(%x: tensor<?xf32>) {
  %0 = ag.specify_shape %x[] {shape = array<i64: -2>} : tensor<?xf32> -> tensor<?xf32>  // expected-error {{'ag.specify_shape' op shape [-2] has a negative length}}
  func.return
}

// -----

func.func @specify_dynamic_count(%x: tensor<?xf32>, %n: tensor<i64>) {
  %0 = ag.specify_shape %x[%n, %n] {shape = array<i64: -9223372036854775808>} : tensor<?xf32>, tensor<i64>, tensor<i64> -> tensor<?xf32>  // expected-error {{'ag.specify_shape' op has 2 dynamic operands but its shape names 1}}
  func.return
}

// -----

func.func @specify_result(%x: tensor<?xf32>) {
  %0 = ag.specify_shape %x[] {shape = array<i64: 4>} : tensor<?xf32> -> tensor<?xf32>  // expected-error {{'ag.specify_shape' op result type tensor<?xf32> does not match the inferred type tensor<4xf32>}}
  func.return
}

// -----

func.func @assert_condition(%x: tensor<?xf32>, %c: tensor<1xi1>) {
  %0 = ag.assert %x, %c {message = "m"} : tensor<?xf32>, tensor<1xi1> -> tensor<?xf32>  // expected-error {{'ag.assert' op condition must be a 0-d tensor<i1>, got tensor<1xi1>}}
  func.return
}

// -----

func.func @assert_result(%x: tensor<?xf32>, %c: tensor<i1>) {
  %0 = ag.assert %x, %c {message = "m"} : tensor<?xf32>, tensor<i1> -> tensor<3xf32>  // expected-error {{'ag.assert' op result type tensor<3xf32> does not match the inferred type tensor<?xf32>}}
  func.return
}

// -----

func.func @flatnonzero_result(%x: tensor<?xf32>) {
  %0 = ag.flatnonzero %x : tensor<?xf32> -> tensor<?xi32>  // expected-error {{'ag.flatnonzero' op result type tensor<?xi32> does not match the inferred type tensor<?xi64>}}
  func.return
}

