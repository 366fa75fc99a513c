// Verifier failures of the softmax ops, one per chunk.
// RUN: arignote-opt %s --split-input-file --verify-diagnostics

func.func @softmax_int(%x: tensor<?xi32>) {
  %0 = ag.softmax %x : tensor<?xi32> -> tensor<?xi32>  // expected-error {{'ag.softmax' op operand must have a float element type (f32, f64), got tensor<?xi32>}}
  func.return
}

// -----

func.func @softmax_scalar(%x: tensor<f32>) {
  %0 = ag.softmax %x : tensor<f32> -> tensor<f32>  // expected-error {{'ag.softmax' op expects a tensor of rank 1 or more, got tensor<f32>}}
  func.return
}

// -----

func.func @softmax_grad_shapes(%dy: tensor<3x4xf32>, %sm: tensor<3x5xf32>) {
  %0 = ag.softmax_grad %dy, %sm : tensor<3x4xf32>, tensor<3x5xf32> -> tensor<3x5xf32>  // expected-error {{'ag.softmax_grad' op dy and sm must have the same element type and shape, got tensor<3x4xf32> and tensor<3x5xf32>}}
  func.return
}
