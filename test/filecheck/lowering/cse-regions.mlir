// RUN: arignote-opt %s -p cse | filecheck %s

// xDSL's cse on `ag.if`: each region sees the ops known before it (an op in a branch
// equal to one computed before the `ag.if` reuses it), but not the other branch's ops
// nor the other way round: an op is never moved out of its branch, so the branches stay
// lazy, and an op after the `ag.if` equal to a branch op is kept.

func.func @cse_regions(%c: tensor<i1>, %x: tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>, tensor<?xf64>) {
  %e = ag.exp %x : tensor<?xf64>
  %r = ag.if %c : tensor<i1> -> (tensor<?xf64>) {
    %a = ag.tanh %x : tensor<?xf64>
    %b = ag.exp %x : tensor<?xf64>
    %s = ag.add %a, %b : tensor<?xf64>, tensor<?xf64> -> tensor<?xf64>
    ag.yield %s : tensor<?xf64>
  } else {
    %a = ag.tanh %x : tensor<?xf64>
    ag.yield %a : tensor<?xf64>
  }
  %t = ag.tanh %x : tensor<?xf64>
  func.return %r, %t, %e : tensor<?xf64>, tensor<?xf64>, tensor<?xf64>
}

// CHECK-LABEL: func.func @cse_regions(
// CHECK-NEXT:    %e = ag.exp %x : tensor<?xf64>
// CHECK-NEXT:    %r = ag.if %c : tensor<i1> -> (tensor<?xf64>) {
// CHECK-NEXT:      %a = ag.tanh %x : tensor<?xf64>
// CHECK-NEXT:      %s = ag.add %a, %e : tensor<?xf64>, tensor<?xf64> -> tensor<?xf64>
// CHECK-NEXT:      ag.yield %s : tensor<?xf64>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[A:.*]] = ag.tanh %x : tensor<?xf64>
// CHECK-NEXT:      ag.yield %[[A]] : tensor<?xf64>
// CHECK-NEXT:    }
// CHECK-NEXT:    %t = ag.tanh %x : tensor<?xf64>
// CHECK-NEXT:    func.return %r, %t, %e
