// Verifier failures of the LAPACK-backed `ag` ops, one per chunk, each checked against its
// expected-error comment.
// RUN: arignote-opt %s --split-input-file --verify-diagnostics

func.func @inverse_not_square(%a: tensor<2x3xf64>) {
  %0 = ag.matrix_inverse %a : tensor<2x3xf64> -> tensor<2x3xf64>  // expected-error {{'ag.matrix_inverse' op expected a square matrix, got shape 2x3}}
  func.return
}

// -----

func.func @det_integer(%a: tensor<?x?xi32>) {
  %0 = ag.det %a : tensor<?x?xi32> -> tensor<i32>  // expected-error {{'ag.det' op operand #0 must have}}
  func.return
}

// -----

func.func @solve_mismatch(%a: tensor<3x3xf64>, %b: tensor<4xf64>) {
  %0 = ag.solve %a, %b {structure = "general"} : tensor<3x3xf64>, tensor<4xf64> -> tensor<4xf64>  // expected-error {{'ag.solve' op a of shape 3x3 and b of shape 4 do not match}}
  func.return
}

// -----

func.func @solve_structure(%a: tensor<3x3xf64>, %b: tensor<3xf64>) {
  %0 = ag.solve %a, %b {structure = "banded"} : tensor<3x3xf64>, tensor<3xf64> -> tensor<3xf64>  // expected-error {{'ag.solve' op structure must be one of}}
  func.return
}

// -----

func.func @eigh_result(%a: tensor<3x3xf64>) {
  %0, %1 = ag.eigh %a : tensor<3x3xf64> -> tensor<4xf64>, tensor<3x3xf64>  // expected-error {{'ag.eigh' op result types tensor<4xf64>, tensor<3x3xf64> do not match the inferred types tensor<3xf64>, tensor<3x3xf64>}}
  func.return
}

// -----

func.func @svd_result_count(%a: tensor<3x3xf64>) {
  %0 = ag.svd %a {compute_uv} : tensor<3x3xf64> -> tensor<3xf64>  // expected-error {{'ag.svd' op result types tensor<3xf64> do not match the inferred types}}
  func.return
}

// -----

func.func @qr_mode(%a: tensor<3x3xf64>) {
  %0 = ag.qr %a {mode = "economic"} : tensor<3x3xf64> -> tensor<3x3xf64>  // expected-error {{'ag.qr' op mode must be one of}}
  func.return
}

// -----

func.func @mixed_types(%a: tensor<3x3xf64>, %b: tensor<3xf32>) {
  %0 = ag.solve %a, %b {structure = "general"} : tensor<3x3xf64>, tensor<3xf32> -> tensor<3xf64>  // expected-error {{'ag.solve' op operands must have one element type}}
  func.return
}

