// Round trip of the convolution ops (`dialects/ag/conv.py`): custom form, re-parsed
// custom form, generic form.
// RUN: arignote-opt %s | filecheck %s
// RUN: arignote-opt %s | arignote-opt | filecheck %s
// RUN: arignote-opt %s --print-op-generic | arignote-opt | filecheck %s
// RUN: arignote-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @conv(
// CHECK-NEXT:    %0 = ag.conv %x, %w {strides = array<i64: 2, 1>, dilations = array<i64: 1, 2>, pads = array<i64: 1, 0>, groups = 2 : i64} : tensor<?x4x9x9xf32>, tensor<6x2x3x3xf32> -> tensor<?x6x5x5xf32>
// CHECK-NEXT:    %1 = ag.conv_grad_weights %x, %0[%h, %k] {strides = array<i64: 2, 1>, dilations = array<i64: 1, 2>, pads = array<i64: 1, 0>, groups = 2 : i64} : tensor<?x4x9x9xf32>, tensor<?x6x5x5xf32>, tensor<i64>, tensor<i64> -> tensor<6x2x3x3xf32>
// CHECK-NEXT:    %2 = ag.conv_grad_inputs %0, %w[%h, %k] {strides = array<i64: 2, 1>, dilations = array<i64: 1, 2>, pads = array<i64: 1, 0>, groups = 2 : i64} : tensor<?x6x5x5xf32>, tensor<6x2x3x3xf32>, tensor<i64>, tensor<i64> -> tensor<?x4x9x9xf32>
// CHECK-NEXT:    %3 = ag.conv %v, %u {strides = array<i64: 1, 1, 1>, dilations = array<i64: 1, 1, 1>, pads = array<i64: 0, 0, 0>, groups = 1 : i64} : tensor<?x?x?x?x?xf64>, tensor<?x?x?x?x?xf64> -> tensor<?x?x?x?x?xf64>
// CHECK-NEXT:    %4 = ag.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: -1, -2>, groups = 2 : i64} : tensor<?x4x9x9xf32>, tensor<6x2x3x3xf32> -> tensor<?x6x9x11xf32>
// GENERIC:       %0 = "ag.conv"(%x, %w) <{strides = array<i64: 2, 1>, dilations = array<i64: 1, 2>, pads = array<i64: 1, 0>, groups = 2 : i64}> : (tensor<?x4x9x9xf32>, tensor<6x2x3x3xf32>) -> tensor<?x6x5x5xf32>
// GENERIC:       %1 = "ag.conv_grad_weights"(%x, %0, %h, %k)
func.func @conv(%x: tensor<?x4x9x9xf32>, %w: tensor<6x2x3x3xf32>, %h: tensor<i64>, %k: tensor<i64>, %v: tensor<?x?x?x?x?xf64>, %u: tensor<?x?x?x?x?xf64>) {
  %0 = ag.conv %x, %w {strides = array<i64: 2, 1>, dilations = array<i64: 1, 2>, pads = array<i64: 1, 0>, groups = 2 : i64} : tensor<?x4x9x9xf32>, tensor<6x2x3x3xf32> -> tensor<?x6x5x5xf32>
  %1 = ag.conv_grad_weights %x, %0[%h, %k] {strides = array<i64: 2, 1>, dilations = array<i64: 1, 2>, pads = array<i64: 1, 0>, groups = 2 : i64} : tensor<?x4x9x9xf32>, tensor<?x6x5x5xf32>, tensor<i64>, tensor<i64> -> tensor<6x2x3x3xf32>
  %2 = ag.conv_grad_inputs %0, %w[%h, %k] {strides = array<i64: 2, 1>, dilations = array<i64: 1, 2>, pads = array<i64: 1, 0>, groups = 2 : i64} : tensor<?x6x5x5xf32>, tensor<6x2x3x3xf32>, tensor<i64>, tensor<i64> -> tensor<?x4x9x9xf32>
  %3 = ag.conv %v, %u {strides = array<i64: 1, 1, 1>, dilations = array<i64: 1, 1, 1>, pads = array<i64: 0, 0, 0>, groups = 1 : i64} : tensor<?x?x?x?x?xf64>, tensor<?x?x?x?x?xf64> -> tensor<?x?x?x?x?xf64>
  // pads -1 and -2: 'half' (1 zero each side for a 3-tap kernel) and 'full' (2)
  %4 = ag.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: -1, -2>, groups = 2 : i64} : tensor<?x4x9x9xf32>, tensor<6x2x3x3xf32> -> tensor<?x6x9x11xf32>
  func.return
}
