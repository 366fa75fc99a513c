// Verifier failures of the pooling ops, one per chunk; each checked against its
// expected-error comment.
// RUN: arignote-opt %s --split-input-file --verify-diagnostics

func.func @pad_not_smaller(%x: tensor<?x?xf32>) {
  %0 = ag.pool %x {ws = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 2, 0>, ignore_border = true, mode = "max"} : tensor<?x?xf32> -> tensor<?x?xf32>  // expected-error {{'ag.pool' op pad [2, 0] must be smaller than ws [2, 2]}}
  func.return
}

// -----

func.func @pad_needs_ignore_border(%x: tensor<?x?xf32>) {
  %0 = ag.pool %x {ws = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 1, 0>, ignore_border = false, mode = "max"} : tensor<?x?xf32> -> tensor<?x?xf32>  // expected-error {{'ag.pool' op pad [1, 0] needs ignore_border}}
  func.return
}

// -----

func.func @window_rank(%x: tensor<?x?xf32>) {
  %0 = ag.pool %x {ws = array<i64: 2, 2>, stride = array<i64: 2>, pad = array<i64: 0, 0>, ignore_border = true, mode = "max"} : tensor<?x?xf32> -> tensor<?x?xf32>  // expected-error {{'ag.pool' op ws, stride and pad must have one entry per pooled axis, got [2, 2], [2] and [0, 0]}}
  func.return
}

// -----

func.func @too_few_axes(%x: tensor<?xf32>) {
  %0 = ag.pool %x {ws = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0>, ignore_border = true, mode = "max"} : tensor<?xf32> -> tensor<?xf32>  // expected-error {{'ag.pool' op input tensor<?xf32> has fewer than 2 (pooled) dimensions}}
  func.return
}

// -----

func.func @mode(%x: tensor<?x?xf32>) {
  %0 = ag.pool %x {ws = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0>, ignore_border = true, mode = "min"} : tensor<?x?xf32> -> tensor<?x?xf32>  // expected-error {{'ag.pool' op mode must be one of max, sum, average_inc_pad, average_exc_pad, got "min"}}
  func.return
}

// -----

func.func @average_of_integers(%x: tensor<?x?xi32>) {
  %0 = ag.pool %x {ws = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0>, ignore_border = true, mode = "average_exc_pad"} : tensor<?x?xi32> -> tensor<?x?xi32>  // expected-error {{'ag.pool' op input must have a float element type (f32, f64), got tensor<?x?xi32>}}
  func.return
}

// -----

func.func @static_result(%x: tensor<7x6xf32>) {
  %0 = ag.pool %x {ws = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0>, ignore_border = true, mode = "max"} : tensor<7x6xf32> -> tensor<4x3xf32>  // expected-error {{'ag.pool' op result type tensor<4x3xf32> does not match the inferred type tensor<3x3xf32>}}
  func.return
}

// -----

func.func @grad_shape(%x: tensor<7x6xf32>, %y: tensor<3x3xf32>, %g: tensor<4x3xf32>) {
  %0 = ag.max_pool_grad %x, %y, %g {ws = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0>, ignore_border = true, mode = "max"} : tensor<7x6xf32>, tensor<3x3xf32>, tensor<4x3xf32> -> tensor<7x6xf32>  // expected-error {{'ag.max_pool_grad' op grad tensor<4x3xf32> does not fit tensor<3x3xf32>}}
  func.return
}

// -----

func.func @grad_mode(%x: tensor<?xf32>, %g: tensor<?xf32>) {
  %0 = ag.average_pool_grad %x, %g {ws = array<i64: 2>, stride = array<i64: 2>, pad = array<i64: 0>, ignore_border = true, mode = "max"} : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>  // expected-error {{'ag.average_pool_grad' op mode must be one of sum, average_inc_pad, average_exc_pad, got "max"}}
  func.return
}

// -----

func.func @ties(%x: tensor<?xf32>, %y: tensor<?xf32>) {
  %0 = ag.max_pool_grad_grad %x, %y, %x {ws = array<i64: 2>, stride = array<i64: 2>, pad = array<i64: 0>, ignore_border = true, mode = "max", ties = "last"} : tensor<?xf32>, tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>  // expected-error {{'ag.max_pool_grad_grad' op ties must be "all" or "first", got "last"}}
  func.return
}

// -----

func.func @zero_stride(%x: tensor<?xf32>) {
  %0 = ag.pool %x {ws = array<i64: 2>, stride = array<i64: 0>, pad = array<i64: 0>, ignore_border = true, mode = "max"} : tensor<?xf32> -> tensor<?xf32>  // expected-error {{'ag.pool' op stride must be positive, got [0]}}
  func.return
}
