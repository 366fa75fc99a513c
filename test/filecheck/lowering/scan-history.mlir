// RUN: arignote-opt %s -p scan-history | filecheck %s
// RUN: arignote-opt %s -p scan-history | arignote-opt | filecheck %s

// concatenate(h0[:1], hs) is the scan's history buffer: the output becomes with_initial
// (L + n rows), the join its result, and the other uses of hs read the view full[1:].
// CHECK-LABEL: func.func @join
// CHECK-NEXT:    %[[FULL:.*]] = ag.scan sequences(%x : tensor<?x?xf32>) initials(%h0 : tensor<2x?xf32>) non_sequences() attributes {sequence_taps = [array<i64: 0>], output_taps = [array<i64: -1>], with_initial = array<i64: 0>} -> tensor<?x?xf32> {
// CHECK:         }
// CHECK-NEXT:    %[[HS:.*]] = ag.subtensor %[[FULL]][] {kinds = array<i64: 0, 0>, starts = array<i64: 1, -9223372036854775807>, stops = array<i64: -9223372036854775807, -9223372036854775807>, steps = array<i64: -9223372036854775807, -9223372036854775807>} : tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK-NEXT:    %p = ag.subtensor %h0[]
// CHECK-NEXT:    %e = ag.exp %[[HS]] : tensor<?x?xf32>
// CHECK-NEXT:    func.return %[[FULL]], %e : tensor<?x?xf32>, tensor<?x?xf32>
func.func @join(%x: tensor<?x?xf32>, %h0: tensor<2x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %hs = ag.scan sequences(%x : tensor<?x?xf32>) initials(%h0 : tensor<2x?xf32>) non_sequences() attributes {sequence_taps = [array<i64: 0>], output_taps = [array<i64: -1>]} -> tensor<?x?xf32> {
  ^bb0(%xt: tensor<?xf32>, %h: tensor<?xf32>):
    %s = ag.add %xt, %h : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
    ag.yield %s : tensor<?xf32>
  }
  %p = ag.subtensor %h0[] {kinds = array<i64: 0, 0>, starts = array<i64: -9223372036854775807, -9223372036854775807>, stops = array<i64: 1, -9223372036854775807>, steps = array<i64: -9223372036854775807, -9223372036854775807>} : tensor<2x?xf32> -> tensor<1x?xf32>
  %j = ag.concatenate %p, %hs {axis = 0 : i64} : tensor<1x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %e = ag.exp %hs : tensor<?x?xf32>
  func.return %j, %e : tensor<?x?xf32>, tensor<?x?xf32>
}

// Not the history: the initial's last row (the taps read its first L = 1 rows), a join
// on axis 1, and an output kept for its last step only are left alone.
// CHECK-LABEL: func.func @others
// CHECK-NOT:     with_initial
// CHECK:         ag.concatenate %p, %hs {axis = 0 : i64}
// CHECK-NEXT:    ag.concatenate %h0, %hs {axis = 1 : i64}
// CHECK-NEXT:    ag.concatenate %h0, %l {axis = 0 : i64}
func.func @others(%x: tensor<?x?xf32>, %h0: tensor<1x?xf32>, %g0: tensor<2x?xf32>) -> (tensor<?x?xf32>, tensor<1x?xf32>, tensor<?x?xf32>) {
  %hs = ag.scan sequences(%x : tensor<?x?xf32>) initials(%g0 : tensor<2x?xf32>) non_sequences() attributes {sequence_taps = [array<i64: 0>], output_taps = [array<i64: -1>]} -> tensor<?x?xf32> {
  ^bb0(%xt: tensor<?xf32>, %h: tensor<?xf32>):
    %s = ag.add %xt, %h : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
    ag.yield %s : tensor<?xf32>
  }
  %l = ag.scan sequences(%x : tensor<?x?xf32>) initials(%h0 : tensor<1x?xf32>) non_sequences() attributes {sequence_taps = [array<i64: 0>], output_taps = [array<i64: -1>], last_only = array<i64: 0>} -> tensor<?x?xf32> {
  ^bb0(%xt: tensor<?xf32>, %h: tensor<?xf32>):
    %s = ag.add %xt, %h : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
    ag.yield %s : tensor<?xf32>
  }
  %p = ag.subtensor %g0[] {kinds = array<i64: 0, 0>, starts = array<i64: 1, -9223372036854775807>, stops = array<i64: -9223372036854775807, -9223372036854775807>, steps = array<i64: -9223372036854775807, -9223372036854775807>} : tensor<2x?xf32> -> tensor<1x?xf32>
  %a = ag.concatenate %p, %hs {axis = 0 : i64} : tensor<1x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %b = ag.concatenate %h0, %hs {axis = 1 : i64} : tensor<1x?xf32>, tensor<?x?xf32> -> tensor<1x?xf32>
  %c = ag.concatenate %h0, %l {axis = 0 : i64} : tensor<1x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  func.return %a, %b, %c : tensor<?x?xf32>, tensor<1x?xf32>, tensor<?x?xf32>
}
