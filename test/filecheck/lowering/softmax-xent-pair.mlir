// RUN: arignote-opt %s -p softmax-xent-pair | filecheck %s

// The cross-entropy and its gradient of the same logits become one op at the forward
// op's place; the ops computing the gradient's dnll (after the forward op, but not
// depending on it) move before it.
func.func @pair(%x: tensor<?x?xf32>, %y: tensor<?xi64>) -> (tensor<f32>, tensor<?x?xf32>) {
  %nll = ag.softmax_xent %x, %y : tensor<?x?xf32>, tensor<?xi64> -> tensor<?xf32>
  %total = ag.reduce_sum %nll {axes = array<i64: 0>} : tensor<?xf32> -> tensor<f32>
  %one = ag.constant dense<1.000000e+00> : tensor<f32>
  %g = ag.dimshuffle %one {pattern = array<i64: -1>} : tensor<f32> -> tensor<1xf32>
  %dx = ag.softmax_xent_grad %g, %x, %y : tensor<1xf32>, tensor<?x?xf32>, tensor<?xi64> -> tensor<?x?xf32>
  func.return %total, %dx : tensor<f32>, tensor<?x?xf32>
}

// CHECK-LABEL: func.func @pair
// CHECK-NEXT:    %[[ONE:.*]] = ag.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[G:.*]] = ag.dimshuffle %[[ONE]]
// CHECK-NEXT:    %[[NLL:.*]], %[[DX:.*]] = ag.softmax_xent_pair %[[G]], %x, %y : tensor<1xf32>, tensor<?x?xf32>, tensor<?xi64> -> (tensor<?xf32>, tensor<?x?xf32>)
// CHECK-NEXT:    %[[T:.*]] = ag.reduce_sum %[[NLL]]
// CHECK-NEXT:    func.return %[[T]], %[[DX]]

// A dnll computed from the cross-entropy itself keeps the two ops apart.
func.func @dependent(%x: tensor<?x?xf32>, %y: tensor<?xi64>) -> tensor<?x?xf32> {
  %nll = ag.softmax_xent %x, %y : tensor<?x?xf32>, tensor<?xi64> -> tensor<?xf32>
  %dx = ag.softmax_xent_grad %nll, %x, %y : tensor<?xf32>, tensor<?x?xf32>, tensor<?xi64> -> tensor<?x?xf32>
  func.return %dx : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @dependent
// CHECK-NEXT:    %[[NLL:.*]] = ag.softmax_xent %x, %y
// CHECK-NEXT:    %[[DX:.*]] = ag.softmax_xent_grad %[[NLL]], %x, %y
// CHECK-NOT:     ag.softmax_xent_pair
