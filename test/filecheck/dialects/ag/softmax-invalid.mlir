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

// -----

func.func @xent_labels(%x: tensor<?x?xf32>, %y: tensor<?xf32>) {
  %0 = ag.softmax_xent %x, %y : tensor<?x?xf32>, tensor<?xf32> -> tensor<?xf32>  // expected-error {{'ag.softmax_xent' op y must have an integer or bool element type (i1, i8..i64, ui8..ui64), got tensor<?xf32>}}
  func.return
}

// -----

func.func @xent_rows(%x: tensor<3x4xf32>, %y: tensor<2xi64>) {
  %0 = ag.softmax_xent %x, %y : tensor<3x4xf32>, tensor<2xi64> -> tensor<3xf32>  // expected-error {{'ag.softmax_xent' op x has 3 rows but y has 2 labels}}
  func.return
}

// -----

func.func @xent_grad_dnll(%g: tensor<?xf64>, %x: tensor<?x?xf32>, %y: tensor<?xi64>) {
  %0 = ag.softmax_xent_grad %g, %x, %y : tensor<?xf64>, tensor<?x?xf32>, tensor<?xi64> -> tensor<?x?xf32>  // expected-error {{'ag.softmax_xent_grad' op dnll must be a vector of x's element type and row count (or of length 1), got tensor<?xf64> for tensor<?x?xf32>}}
  func.return
}

// -----

func.func @logsoftmax_int(%x: tensor<?xi64>) {
  %0 = ag.logsoftmax %x : tensor<?xi64> -> tensor<?xi64>  // expected-error {{'ag.logsoftmax' op operand must have a float element type (f32, f64), got tensor<?xi64>}}
  func.return
}

// -----

func.func @xent_bool(%x: tensor<?x?xf32>, %y: tensor<?xi1>) {
  %0 = ag.softmax_xent %x, %y : tensor<?x?xf32>, tensor<?xi1> -> tensor<?xf32>  // expected-error {{'ag.softmax_xent' op y must have an integer element type, got tensor<?xi1>}}
  func.return
}

// -----

func.func @pair_result(%g: tensor<?xf32>, %x: tensor<?x?xf32>, %y: tensor<?xi64>) {
  %0, %1 = ag.softmax_xent_pair %g, %x, %y : tensor<?xf32>, tensor<?x?xf32>, tensor<?xi64> -> (tensor<?xf32>, tensor<?xf32>)  // expected-error {{'ag.softmax_xent_pair' op result type tensor<?xf32> does not match the inferred type tensor<?x?xf32>}}
  func.return
}
