// RUN: arignote-opt %s -p ag-to-loops | filecheck %s

// A recurrence h_t = h_{t-1} * a + x_t: the shape function derives the number of steps
// from the sequence (whose taps span nothing: no length check) and checks the step's
// elementwise ops; the compute function copies
// the initial row into a history buffer, runs one scf.for over the steps whose body
// reads row views (memref.subview), computes into a scratch buffer allocated in front
// of the loop and writes the step's value into the next row, then copies the rows of the steps into the result.

func.func @recurrence(%x: tensor<?x?xf64>, %h0: tensor<1x?xf64>, %a: tensor<?xf64>) -> tensor<?x?xf64> {
  %hs = ag.scan sequences(%x : tensor<?x?xf64>) initials(%h0 : tensor<1x?xf64>) non_sequences(%a : tensor<?xf64>) attributes {sequence_taps = [array<i64: 0>], output_taps = [array<i64: -1>]} -> tensor<?x?xf64> {
  ^bb0(%xt: tensor<?xf64>, %h: tensor<?xf64>, %aa: tensor<?xf64>):
    %m = ag.mul %h, %aa : tensor<?xf64>, tensor<?xf64> -> tensor<?xf64>
    %s = ag.add %m, %xt : tensor<?xf64>, tensor<?xf64> -> tensor<?xf64>
    ag.yield %s : tensor<?xf64>
  }
  func.return %hs : tensor<?x?xf64>
}

// CHECK-LABEL: func.func @recurrence__shape(
// CHECK-SAME:      ag.checks = [
// CHECK-SAME:      "ag.mul: operand shapes (%d,) and (%d,) do not match at dimension 0"
// CHECK-SAME:      "ag.add: operand shapes (%d,) and (%d,) do not match at dimension 0"
// CHECK-SAME:      ]
// CHECK:         %[[STEPS:.*]] = memref.dim %arg0, %{{.*}} : memref<?x?xf64, strided<[?, ?], offset: ?>>
// CHECK-NOT:     arith.cmpi sge, %[[STEPS]]
// CHECK:         cf.cond_br

// CHECK-LABEL: func.func @recurrence(
// CHECK-SAME:      %out0: memref<?x?xf64> {llvm.noalias})
// CHECK:         %[[N:.*]] = memref.dim %arg0, %{{.*}}
// CHECK:         %[[EXT:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?xf64>
// CHECK:           memref.load %arg1
// CHECK:           memref.store %{{.*}}, %[[EXT]]
// CHECK:         %[[M:.*]] = memref.alloc(%{{.*}}) : memref<?xf64>
// CHECK:         scf.for %[[T:.*]] = %{{.*}} to %[[N]] step %{{.*}} {
// CHECK:           %[[ROW:.*]] = memref.subview %arg0[%[[T]], 0] [1, %{{.*}}] [1, 1] : memref<?x?xf64, strided<[?, ?], offset: ?>> to memref<?xf64, strided<[?], offset: ?>>
// CHECK:           %[[PREV:.*]] = memref.subview %[[EXT]][%[[T]], 0]
// CHECK:           %[[NEXT:.*]] = memref.subview %[[EXT]][%{{.*}}, 0]
// CHECK:           memref.load %[[PREV]]
// CHECK:           memref.store %{{.*}}, %[[M]]
// CHECK:           memref.load %[[ROW]]
// CHECK:           memref.store %{{.*}}, %[[NEXT]]
// CHECK-NOT:       memref.alloc
// CHECK:         }
// CHECK:         memref.subview %[[EXT]][1, 0]
// CHECK:         memref.store %{{.*}}, %out0
// CHECK:         memref.dealloc %[[EXT]] : memref<?x?xf64>
// CHECK:         memref.dealloc %[[M]] : memref<?xf64>

// An output with_initial (scan-history) is its own history buffer: the initial row is
// copied into the result, each step reads row t and writes row t + 1 of it, and there
// is no history allocation and no copy after the loop.
// CHECK-LABEL: func.func @with_initial(
// CHECK-NOT:     memref.alloc
// CHECK:           memref.load %arg1
// CHECK-NEXT:      memref.store %{{.*}}, %out0
// CHECK:         scf.for %[[T:.*]] = %{{.*}} to %d step
// CHECK:           %[[PREV:.*]] = memref.subview %out0[%[[T]], 0] [1, %d_1] [1, 1]
// CHECK:           %[[ROW:.*]] = arith.addi %[[T]], %{{.*}} : index
// CHECK-NEXT:      %[[DEST:.*]] = memref.subview %out0[%[[ROW]], 0] [1, %d_1] [1, 1]
// CHECK:             memref.load %[[PREV]]
// CHECK:             memref.store %{{.*}}, %[[DEST]]
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     memref.subview %out0[1, 0]
// CHECK-NOT:     memref.dealloc
// CHECK:         func.return
func.func @with_initial(%x: tensor<?x?xf32>, %h0: tensor<1x?xf32>) -> tensor<?x?xf32> {
  %full = ag.scan sequences(%x : tensor<?x?xf32>) initials(%h0 : tensor<1x?xf32>) non_sequences() attributes {sequence_taps = [array<i64: 0>], output_taps = [array<i64: -1>], with_initial = array<i64: 0>} -> tensor<?x?xf32> {
  ^bb0(%xt: tensor<?xf32>, %h: tensor<?xf32>):
    %s = ag.add %xt, %h : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
    ag.yield %s : tensor<?xf32>
  }
  func.return %full : tensor<?x?xf32>
}

// An accumulator (scan_accumulate): a last_only state with the taps [-1] read only as
// the initial value C of the gemm that yields it keeps ONE row (no ring of L + 1 rows):
// the step reads and writes row 0, the gemm gets ag.destroy_map = [0, 4] and copies C
// into its result for 0 rows when both have the same address, then calls sgemm with
// beta over that row; after the loop row 0 is the result.
// CHECK-LABEL: func.func @accumulate(
// CHECK:         %[[ACC:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}) : memref<?x?x?xf32>
// CHECK:         scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NOT:       arith.remsi
// CHECK:           %[[PREV:.*]] = memref.subview %[[ACC]][0, 0, 0]
// CHECK-NOT:       arith.remsi
// CHECK:           %[[DEST:.*]] = memref.subview %[[ACC]][0, 0, 0]
// CHECK:           %[[SAME:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : index
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %{{.*}} = arith.select %[[SAME]], %[[ZERO]], %{{.*}} : index
// CHECK:           func.call @scipy_cblas_sgemm(
// CHECK:         }
// CHECK:         memref.subview %[[ACC]][0, 0, 0]
// CHECK:         memref.dealloc %[[ACC]]
func.func @accumulate(%x: tensor<?x?x?xf32>, %d: tensor<?x?x?xf32>, %g0: tensor<1x?x?xf32>) -> tensor<?x?x?xf32> {
  %g = ag.scan sequences(%x, %d : tensor<?x?x?xf32>, tensor<?x?x?xf32>) initials(%g0 : tensor<1x?x?xf32>) non_sequences() attributes {sequence_taps = [array<i64: 0>, array<i64: 0>], output_taps = [array<i64: -1>], last_only = array<i64: 0>} -> tensor<?x?x?xf32> {
  ^bb0(%xt: tensor<?x?xf32>, %dt: tensor<?x?xf32>, %acc: tensor<?x?xf32>):
    %one = ag.constant dense<1.000000e+00> : tensor<f32>
    %n = ag.gemm %one, %xt, %dt, %one, %acc {transpose_a} : tensor<f32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<f32>, tensor<?x?xf32> -> tensor<?x?xf32>
    ag.yield %n : tensor<?x?xf32>
  }
  func.return %g : tensor<?x?x?xf32>
}

// The same state read twice (by the gemm and by a mul) keeps its ring of two rows: the
// step's row is t + 1 modulo 2, and the gemm copies C into it.
// CHECK-LABEL: func.func @read_twice(
// CHECK:         %[[ACC:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}) : memref<?x?x?xf32>
// CHECK:         scf.for
// CHECK:           %[[PREV:.*]] = arith.remsi
// CHECK-NEXT:      memref.subview %[[ACC]][%[[PREV]], 0, 0]
// CHECK:           %[[NEXT:.*]] = arith.remsi
// CHECK-NEXT:      memref.subview %[[ACC]][%[[NEXT]], 0, 0]
// CHECK:           func.call @scipy_cblas_sgemm(
func.func @read_twice(%x: tensor<?x?x?xf32>, %d: tensor<?x?x?xf32>, %g0: tensor<1x?x?xf32>) -> tensor<?x?x?xf32> {
  %g = ag.scan sequences(%x, %d : tensor<?x?x?xf32>, tensor<?x?x?xf32>) initials(%g0 : tensor<1x?x?xf32>) non_sequences() attributes {sequence_taps = [array<i64: 0>, array<i64: 0>], output_taps = [array<i64: -1>], last_only = array<i64: 0>} -> tensor<?x?x?xf32> {
  ^bb0(%xt: tensor<?x?xf32>, %dt: tensor<?x?xf32>, %acc: tensor<?x?xf32>):
    %one = ag.constant dense<1.000000e+00> : tensor<f32>
    %m = ag.mul %acc, %dt : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
    %n = ag.gemm %one, %xt, %m, %one, %acc {transpose_a} : tensor<f32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<f32>, tensor<?x?xf32> -> tensor<?x?xf32>
    ag.yield %n : tensor<?x?xf32>
  }
  func.return %g : tensor<?x?x?xf32>
}
