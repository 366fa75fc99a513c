// Verifier failures of the convolution ops, one per chunk; each checked against its
// expected-error comment.
// RUN: arignote-opt %s --split-input-file --verify-diagnostics

func.func @conv_result(%x: tensor<?x1x8x8xf32>, %w: tensor<2x1x3x3xf32>) {
  %0 = ag.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0>, groups = 1 : i64} : tensor<?x1x8x8xf32>, tensor<2x1x3x3xf32> -> tensor<?x2x8x8xf32>  // expected-error {{'ag.conv' op result type tensor<?x2x8x8xf32> does not match the inferred type tensor<?x2x6x6xf32>}}
  func.return
}

// -----

func.func @conv_element_types(%x: tensor<?x1x8x8xf32>, %w: tensor<2x1x3x3xf64>) {
  %0 = ag.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0>, groups = 1 : i64} : tensor<?x1x8x8xf32>, tensor<2x1x3x3xf64> -> tensor<?x2x6x6xf32>  // expected-error {{'ag.conv' op operands must have one element type: tensor<?x1x8x8xf32>, tensor<2x1x3x3xf64>}}
  func.return
}

// -----

func.func @conv_integers(%x: tensor<?x1x8x8xi32>, %w: tensor<2x1x3x3xi32>) {
  %0 = ag.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0>, groups = 1 : i64} : tensor<?x1x8x8xi32>, tensor<2x1x3x3xi32> -> tensor<?x2x6x6xi32>  // expected-error {{'ag.conv' op input must have f32 or f64 elements, got tensor<?x1x8x8xi32>}}
  func.return
}

// -----

func.func @conv_rank(%x: tensor<?x8x8xf32>, %w: tensor<2x3x3xf32>) {
  %0 = ag.conv %x, %w {strides = array<i64: 1>, dilations = array<i64: 1>, pads = array<i64: 0>, groups = 1 : i64} : tensor<?x8x8xf32>, tensor<2x3x3xf32> -> tensor<?x2x6xf32>  // expected-error {{'ag.conv' op operands must be all 4-d or all 5-d: tensor<?x8x8xf32>, tensor<2x3x3xf32>}}
  func.return
}

// -----

func.func @conv_stride(%x: tensor<?x1x8x8xf32>, %w: tensor<2x1x3x3xf32>) {
  %0 = ag.conv %x, %w {strides = array<i64: 0, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0>, groups = 1 : i64} : tensor<?x1x8x8xf32>, tensor<2x1x3x3xf32> -> tensor<?x2x6x6xf32>  // expected-error {{'ag.conv' op strides must be >= 1, got [0, 1]}}
  func.return
}

// -----

func.func @conv_pads_count(%x: tensor<?x1x8x8xf32>, %w: tensor<2x1x3x3xf32>) {
  %0 = ag.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0>, groups = 1 : i64} : tensor<?x1x8x8xf32>, tensor<2x1x3x3xf32> -> tensor<?x2x6x6xf32>  // expected-error {{'ag.conv' op pads has 1 entries for 2 spatial axes}}
  func.return
}

// -----

func.func @conv_groups(%x: tensor<?x4x8x8xf32>, %w: tensor<2x4x3x3xf32>) {
  %0 = ag.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0>, groups = 2 : i64} : tensor<?x4x8x8xf32>, tensor<2x4x3x3xf32> -> tensor<?x2x6x6xf32>  // expected-error {{'ag.conv' op the input has 4 channels but the filters take 4 per group of 2}}
  func.return
}

// -----

func.func @conv_fit(%x: tensor<?x1x2x8xf32>, %w: tensor<2x1x3x3xf32>) {
  %0 = ag.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0>, groups = 1 : i64} : tensor<?x1x2x8xf32>, tensor<2x1x3x3xf32> -> tensor<?x2x0x6xf32>  // expected-error {{'ag.conv' op the kernel 3x3 (dilated) does not fit the input 2x8 padded by [0, 0]}}
  func.return
}

// -----

func.func @grad_weights_sizes(%x: tensor<?x1x8x8xf32>, %g: tensor<?x2x6x6xf32>, %h: tensor<i64>) {
  %0 = ag.conv_grad_weights %x, %g[%h] {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0>, groups = 1 : i64} : tensor<?x1x8x8xf32>, tensor<?x2x6x6xf32>, tensor<i64> -> tensor<2x1x?xf32>  // expected-error {{'ag.conv_grad_weights' op expected 2 size operands, got 1}}
  func.return
}

// -----

func.func @grad_weights_output(%x: tensor<?x1x8x8xf32>, %g: tensor<?x2x5x6xf32>, %h: tensor<i64>) {
  %0 = ag.conv_grad_weights %x, %g[%h, %h] {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0>, groups = 1 : i64} : tensor<?x1x8x8xf32>, tensor<?x2x5x6xf32>, tensor<i64>, tensor<i64> -> tensor<2x1x3x3xf32>  // expected-error {{'ag.conv_grad_weights' op the output gradient ?x2x5x6 does not match the convolution}}
  func.return
}

// -----

func.func @grad_inputs_size_type(%g: tensor<?x2x6x6xf32>, %w: tensor<2x1x3x3xf32>, %h: tensor<i32>) {
  %0 = ag.conv_grad_inputs %g, %w[%h, %h] {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0>, groups = 1 : i64} : tensor<?x2x6x6xf32>, tensor<2x1x3x3xf32>, tensor<i32>, tensor<i32> -> tensor<?x1x8x8xf32>  // expected-error {{'ag.conv_grad_inputs' op sizes must be tensor<i64>, got tensor<i32>}}
  func.return
}

// -----

func.func @grad_inputs_filters(%g: tensor<?x3x6x6xf32>, %w: tensor<2x1x3x3xf32>, %h: tensor<i64>) {
  %0 = ag.conv_grad_inputs %g, %w[%h, %h] {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0>, groups = 1 : i64} : tensor<?x3x6x6xf32>, tensor<2x1x3x3xf32>, tensor<i64>, tensor<i64> -> tensor<?x1x8x8xf32>  // expected-error {{'ag.conv_grad_inputs' op filters 2x1x3x3 and output gradient ?x3x6x6 differ}}
  func.return
}

// -----

func.func @conv_empty_kernel(%x: tensor<?x1x8x8xf32>, %w: tensor<2x1x0x3xf32>) {
  %0 = ag.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0>, groups = 1 : i64} : tensor<?x1x8x8xf32>, tensor<2x1x0x3xf32> -> tensor<?x2x9x6xf32>  // expected-error {{'ag.conv' op the kernel 0x3 has an empty axis}}
  func.return
}

// -----

func.func @conv_pads(%x: tensor<?x1x8x8xf32>, %w: tensor<2x1x3x3xf32>) {
  %0 = ag.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: -3, 0>, groups = 1 : i64} : tensor<?x1x8x8xf32>, tensor<2x1x3x3xf32> -> tensor<?x2x6x6xf32>  // expected-error {{'ag.conv' op pads must be >= 0, got [-3, 0]}}
  func.return
}
