// RUN: arignote-opt %s -p fusion | filecheck %s

// `fusion` also fuses the elementwise ops of a scan's step.

func.func @step(%x: tensor<?x?xf64>, %h0: tensor<1x?xf64>, %b: tensor<?xf64>) -> tensor<?x?xf64> {
  %hs = ag.scan sequences(%x : tensor<?x?xf64>) initials(%h0 : tensor<1x?xf64>) non_sequences(%b : tensor<?xf64>) attributes {sequence_taps = [array<i64: 0>], output_taps = [array<i64: -1>]} -> tensor<?x?xf64> {
  ^bb0(%xt: tensor<?xf64>, %h: tensor<?xf64>, %bb: tensor<?xf64>):
    %a = ag.add %xt, %h : tensor<?xf64>, tensor<?xf64> -> tensor<?xf64>
    %s = ag.add %a, %bb : tensor<?xf64>, tensor<?xf64> -> tensor<?xf64>
    %t = ag.tanh %s : tensor<?xf64>
    ag.yield %t : tensor<?xf64>
  }
  func.return %hs : tensor<?x?xf64>
}

// CHECK-LABEL: func.func @step(
// CHECK:         ag.scan
// CHECK-NEXT:    ^bb0(%{{.*}}: tensor<?xf64>, %{{.*}}: tensor<?xf64>, %{{.*}}: tensor<?xf64>):
// CHECK-NEXT:      %[[F:.*]] = ag.fused
// CHECK:             ag.tanh
// CHECK:             ag.yield
// CHECK:           ag.yield %[[F]] : tensor<?xf64>
