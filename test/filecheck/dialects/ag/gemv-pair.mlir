// Round trip of `ag.gemv_pair`: custom form, re-parsed custom form, generic form.
// RUN: arignote-opt %s | filecheck %s
// RUN: arignote-opt %s | arignote-opt | filecheck %s
// RUN: arignote-opt %s --print-op-generic | arignote-opt | filecheck %s
// RUN: arignote-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @pair(
// CHECK-NEXT:    %u, %g, %r = ag.gemv_pair %a, %x, %alpha acc(%beta, %r0) rows(%y, %b, %s) : tensor<?x?xf32>, tensor<?xf32>, tensor<f32> acc(tensor<f32>, tensor<?xf32>) rows(tensor<?xf32>, tensor<f32>, tensor<1xi1>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
// CHECK-NEXT:    ^bb0(%d: tensor<f32>, %yi: tensor<f32>, %bi: tensor<f32>, %si: tensor<i1>):
// CHECK-NEXT:      %z = ag.add %d, %bi : tensor<f32>, tensor<f32> -> tensor<f32>
// CHECK-NEXT:      %p = ag.sigmoid %z : tensor<f32>
// CHECK-NEXT:      %e = ag.sub %p, %yi : tensor<f32>, tensor<f32> -> tensor<f32>
// CHECK-NEXT:      %c = ag.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:      %gi = ag.select %si, %e, %c : tensor<i1>, tensor<f32>, tensor<f32> -> tensor<f32>
// CHECK-NEXT:      ag.yield %z, %gi : tensor<f32>, tensor<f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %u2, %g2, %r2 = ag.gemv_pair %a, %x, %alpha rows() : tensor<?x?xf32>, tensor<?xf32>, tensor<f32> rows() -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
// CHECK-NEXT:    ^bb{{[0-9]+}}(%d2: tensor<f32>):
// CHECK-NEXT:      ag.yield %d2, %d2 : tensor<f32>, tensor<f32>
// CHECK-NEXT:    }
// GENERIC-LABEL: "func.func"() <{sym_name = "pair"
// GENERIC:         "ag.gemv_pair"(%a, %x, %alpha, %beta, %r0, %y, %b, %s) <{operandSegmentSizes = array<i32: 1, 1, 1, 2, 3>}> ({
// GENERIC:           "ag.yield"(%z, %gi) : (tensor<f32>, tensor<f32>) -> ()
// GENERIC:         "ag.gemv_pair"(%a, %x, %alpha) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>}> ({
func.func @pair(%a: tensor<?x?xf32>, %x: tensor<?xf32>, %alpha: tensor<f32>, %beta: tensor<f32>, %r0: tensor<?xf32>, %y: tensor<?xf32>, %b: tensor<f32>, %s: tensor<1xi1>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %u, %g, %r = ag.gemv_pair %a, %x, %alpha acc(%beta, %r0) rows(%y, %b, %s) : tensor<?x?xf32>, tensor<?xf32>, tensor<f32> acc(tensor<f32>, tensor<?xf32>) rows(tensor<?xf32>, tensor<f32>, tensor<1xi1>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  ^bb0(%d: tensor<f32>, %yi: tensor<f32>, %bi: tensor<f32>, %si: tensor<i1>):
    %z = ag.add %d, %bi : tensor<f32>, tensor<f32> -> tensor<f32>
    %p = ag.sigmoid %z : tensor<f32>
    %e = ag.sub %p, %yi : tensor<f32>, tensor<f32> -> tensor<f32>
    %c = ag.constant dense<0.0> : tensor<f32>
    %gi = ag.select %si, %e, %c : tensor<i1>, tensor<f32>, tensor<f32> -> tensor<f32>
    ag.yield %z, %gi : tensor<f32>, tensor<f32>
  }
  %u2, %g2, %r2 = ag.gemv_pair %a, %x, %alpha rows() : tensor<?x?xf32>, tensor<?xf32>, tensor<f32> rows() -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  ^bb1(%d2: tensor<f32>):
    ag.yield %d2, %d2 : tensor<f32>, tensor<f32>
  }
  func.return %u, %g, %r, %r2 : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
}
