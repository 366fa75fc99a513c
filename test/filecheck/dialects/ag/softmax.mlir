// RUN: arignote-opt %s | arignote-opt | filecheck %s

// CHECK-LABEL: func.func @softmax
// CHECK:         %{{.*}} = ag.softmax %x : tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK:         %{{.*}} = ag.softmax_grad %dy, %{{.*}} : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
func.func @softmax(%x: tensor<?x?xf32>, %dy: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = ag.softmax %x : tensor<?x?xf32> -> tensor<?x?xf32>
  %1 = ag.softmax_grad %dy, %0 : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  func.return %1 : tensor<?x?xf32>
}
