// RUN: arignote-opt %s | arignote-opt | filecheck %s

// ag.scan round-trips: a sequence with two taps, a fed-back output with two taps, an
// output that is not fed back, a non-sequence, and an explicit number of steps.

func.func @scan(%n: tensor<i64>, %x: tensor<?x?xf64>, %h0: tensor<2x?xf64>, %w: tensor<?xf64>) -> (tensor<?x?xf64>, tensor<?xf64>) {
  %h, %s = ag.scan steps(%n : tensor<i64>) sequences(%x : tensor<?x?xf64>) initials(%h0 : tensor<2x?xf64>) non_sequences(%w : tensor<?xf64>) attributes {sequence_taps = [array<i64: -1, 0>], output_taps = [array<i64: -2, -1>, array<i64>]} -> tensor<?x?xf64>, tensor<?xf64> {
  ^bb0(%xp: tensor<?xf64>, %xc: tensor<?xf64>, %h2: tensor<?xf64>, %h1: tensor<?xf64>, %ww: tensor<?xf64>):
    %a = ag.add %xp, %xc : tensor<?xf64>, tensor<?xf64> -> tensor<?xf64>
    %b = ag.mul %a, %ww : tensor<?xf64>, tensor<?xf64> -> tensor<?xf64>
    %c = ag.add %b, %h2 : tensor<?xf64>, tensor<?xf64> -> tensor<?xf64>
    %t = ag.reduce_sum %h1 {axes = array<i64: 0>} : tensor<?xf64> -> tensor<f64>
    ag.yield %c, %t : tensor<?xf64>, tensor<f64>
  }
  func.return %h, %s : tensor<?x?xf64>, tensor<?xf64>
}

// CHECK-LABEL: func.func @scan(
// CHECK:         %{{.*}}, %{{.*}} = ag.scan steps(%n : tensor<i64>) sequences(%x : tensor<?x?xf64>) initials(%h0 : tensor<2x?xf64>) non_sequences(%w : tensor<?xf64>) attributes {sequence_taps = [array<i64: -1, 0>], output_taps = [array<i64: -2, -1>, array<i64>]} -> tensor<?x?xf64>, tensor<?xf64> {
// CHECK-NEXT:    ^bb0(%{{.*}}: tensor<?xf64>, %{{.*}}: tensor<?xf64>, %{{.*}}: tensor<?xf64>, %{{.*}}: tensor<?xf64>, %{{.*}}: tensor<?xf64>):
// CHECK:           ag.yield %{{.*}}, %{{.*}} : tensor<?xf64>, tensor<f64>
// CHECK-NEXT:    }

// A map: no initial value, no non-sequence, the steps from the sequence.

func.func @map(%x: tensor<?xf32>) -> tensor<?xf32> {
  %y = ag.scan sequences(%x : tensor<?xf32>) initials() non_sequences() attributes {sequence_taps = [array<i64: 0>], output_taps = [array<i64>]} -> tensor<?xf32> {
  ^bb0(%v: tensor<f32>):
    %e = ag.exp %v : tensor<f32>
    ag.yield %e : tensor<f32>
  }
  func.return %y : tensor<?xf32>
}

// CHECK-LABEL: func.func @map(
// CHECK:         ag.scan sequences(%x : tensor<?xf32>) initials() non_sequences() attributes
