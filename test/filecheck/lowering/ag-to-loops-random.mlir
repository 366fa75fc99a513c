// RUN: arignote-opt %s -p ag-to-loops | filecheck %s
// RUN: arignote-opt %s -p 'ag-to-loops{parallel_min_work=1000}' | filecheck %s --check-prefix=PAR

// ag.mrg_uniform: `@f__shape` checks the size (no negative length), the state (6
// columns, a stream or more) and the sample count (at most 2**31 - 1). `@f` copies the
// state into the new state, views it as rows of 6 words and writes the samples through
// a flat view of the result: a loop over rounds `r`, in each an inner loop over the
// streams `k` (independent: side by side) loading the six words, one MRG31k3p step
// (i32 shifts, masks, the conditional `- M1` / `- M2`), the words stored back, the
// integer converted to f32 with Theano's constant and stored at `r * n + k`.

func.func @f(%s: tensor<?x?xi32>, %n: tensor<i64>) -> (tensor<?x?xi32>, tensor<?x3xf32>) {
  %s2, %u = ag.mrg_uniform %s[%n] {shape = array<i64: -9223372036854775808, 3>} : tensor<?x?xi32>, tensor<i64> -> tensor<?x?xi32>, tensor<?x3xf32>
  func.return %s2, %u : tensor<?x?xi32>, tensor<?x3xf32>
}

// CHECK-LABEL: func.func @f__shape(
// CHECK-SAME:    "ag.mrg_uniform: size (%d, 3) has a negative length"
// CHECK-SAME:    "ag.mrg_uniform: rstate must have 6 columns, got shape (%d, %d)"
// CHECK-SAME:    "ag.mrg_uniform: rstate has no stream (shape (%d, 6))"
// CHECK-SAME:    "ag.mrg_uniform: rng_mrg does not support more than (2**31 - 1) samples (size (%d, 3))"
// CHECK:         arith.cmpi sle, %{{.*}}, %{{.*}} : index
// CHECK-LABEL: func.func @f(
// CHECK:         %[[FLAT:.*]] = memref.reinterpret_cast %out1 to offset: [0], sizes: [%[[TOTAL:.*]]], strides: [1] : memref<?x3xf32> to memref<?xf32>
// CHECK:         memref.store %{{.*}}, %out0[
// CHECK:         %[[WORDS:.*]] = memref.reinterpret_cast %out0 to offset: [0], sizes: [%[[N:.*]], 6], strides: [6, 1] : memref<?x?xi32> to memref<?x6xi32>
// CHECK:         %[[ROUNDS:.*]] = arith.divui
// CHECK:         scf.for %[[R:.*]] = %{{.*}} to %[[ROUNDS]] step
// CHECK-NEXT:      %[[FIRST:.*]] = arith.muli %[[R]], %[[N]] : index
// CHECK:           scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step
// CHECK-COUNT-6:     memref.load %[[WORDS]][%[[K]], %{{.*}}] : memref<?x6xi32>
// CHECK:             arith.constant 511 : i32
// CHECK:             arith.shli
// CHECK:             arith.shrsi
// CHECK:             arith.constant 2147483647 : i32
// CHECK:             arith.select
// CHECK:             arith.constant 21069 : i32
// CHECK:             arith.constant 2147462579 : i32
// CHECK:             %[[WRAPS:.*]] = arith.cmpi sle, %{{.*}}, %{{.*}} : i32
// CHECK-NEXT:        arith.constant 2147483647 : i32
// CHECK-NEXT:        %[[SHIFTED:.*]] = arith.addi
// CHECK-NEXT:        %[[INT:.*]] = arith.select %[[WRAPS]], %[[SHIFTED]], %{{.*}} : i32
// CHECK-COUNT-6:     memref.store %{{.*}}, %[[WORDS]][%[[K]], %{{.*}}] : memref<?x6xi32>
// CHECK-NEXT:        %[[AT:.*]] = arith.addi %[[FIRST]], %[[K]] : index
// CHECK-NEXT:        %[[F:.*]] = arith.sitofp %[[INT]] : i32 to f32
// CHECK-NEXT:        %[[NORM:.*]] = arith.constant 4.6566126{{.*}}e-10 : f32
// CHECK-NEXT:        %[[SAMPLE:.*]] = arith.mulf %[[F]], %[[NORM]] : f32
// CHECK-NEXT:        memref.store %[[SAMPLE]], %[[FLAT]][%[[AT]]] : memref<?xf32>

// With parallel loops, the streams are split into ranges (one per part), each running
// every round over its range.
// PAR-LABEL: func.func @f(
// PAR:         ag.parallel_for %{{.*}} to %{{.*}} min_trips %{{.*}} align 8 {
// PAR:           scf.for
// PAR:             scf.for %{{.*}} = %begin to
// PAR:           ag.yield
