// RUN: arignote-opt %s | arignote-opt | filecheck %s

// CHECK-LABEL: func.func @softmax
// CHECK:         %{{.*}} = ag.softmax %x : tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK:         %{{.*}} = ag.softmax_grad %dy, %{{.*}} : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
func.func @softmax(%x: tensor<?x?xf32>, %dy: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = ag.softmax %x : tensor<?x?xf32> -> tensor<?x?xf32>
  %1 = ag.softmax_grad %dy, %0 : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  func.return %1 : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @xent
// CHECK:         %{{.*}} = ag.logsoftmax %x : tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK:         %{{.*}} = ag.softmax_xent %x, %y : tensor<?x?xf32>, tensor<?xi64> -> tensor<?xf32>
// CHECK:         %{{.*}} = ag.softmax_xent_grad %g, %x, %y : tensor<?xf32>, tensor<?x?xf32>, tensor<?xi64> -> tensor<?x?xf32>
func.func @xent(%x: tensor<?x?xf32>, %y: tensor<?xi64>, %g: tensor<?xf32>) -> tensor<?x?xf32> {
  %0 = ag.logsoftmax %x : tensor<?x?xf32> -> tensor<?x?xf32>
  %1 = ag.softmax_xent %x, %y : tensor<?x?xf32>, tensor<?xi64> -> tensor<?xf32>
  %2 = ag.softmax_xent_grad %g, %x, %y : tensor<?xf32>, tensor<?x?xf32>, tensor<?xi64> -> tensor<?x?xf32>
  func.return %2 : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @pair
// CHECK:         %{{.*}}, %{{.*}} = ag.softmax_xent_pair %g, %x, %y : tensor<1xf64>, tensor<?x?xf64>, tensor<?xi32> -> (tensor<?xf64>, tensor<?x?xf64>)
func.func @pair(%g: tensor<1xf64>, %x: tensor<?x?xf64>, %y: tensor<?xi32>) -> tensor<?x?xf64> {
  %0, %1 = ag.softmax_xent_pair %g, %x, %y : tensor<1xf64>, tensor<?x?xf64>, tensor<?xi32> -> (tensor<?xf64>, tensor<?x?xf64>)
  func.return %1 : tensor<?x?xf64>
}
