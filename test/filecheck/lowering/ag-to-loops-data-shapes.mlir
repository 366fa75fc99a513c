// RUN: arignote-opt %s -p ag-to-loops | filecheck %s

// `ag.specify_shape`: the shape function compares each dynamic length with its entry
// (a static one or a 0-d operand) and reports both shapes; the compute function copies.
// `ag.assert`: the shape function reads the 0-d condition and fails with the message.

func.func @checks(%x: tensor<?x?xf32>, %n: tensor<i64>, %ok: tensor<i1>) -> (tensor<?x3xf32>, tensor<?x?xf32>) {
  %0 = ag.specify_shape %x[%n] {shape = array<i64: -9223372036854775808, 3>} : tensor<?x?xf32>, tensor<i64> -> tensor<?x3xf32>
  %1 = ag.assert %x, %ok {message = "split: 100% wrong"} : tensor<?x?xf32>, tensor<i1> -> tensor<?x?xf32>
  func.return %0, %1 : tensor<?x3xf32>, tensor<?x?xf32>
}

// CHECK-LABEL: func.func @checks__shape(
// CHECK-SAME:      ag.checks = ["ag.specify_shape: shape (%d, %d) differs from the specified shape (%d, 3)", "ag.specify_shape: shape (%d, %d) differs from the specified shape (%d, 3)", "ag.assert: split: 100%% wrong"]
// CHECK:         %[[N:.*]] = memref.load %arg1[]
// CHECK-NEXT:    %[[NI:.*]] = arith.index_cast %[[N]] : i64 to index
// CHECK-NEXT:    arith.cmpi eq, %d, %[[NI]] : index
// CHECK:         arith.cmpi eq, %d_1, %{{.*}} : index
// CHECK:         %[[OK:.*]] = memref.load %arg2[] : memref<i1, strided<[], offset: ?>>
// CHECK:         cf.cond_br %[[OK]]
// CHECK-LABEL: func.func @checks(
// CHECK:         memref.store %{{.*}}, %out0
// CHECK:         memref.store %{{.*}}, %out1

// `ag.flatnonzero`: the shape function counts the nonzero elements (NaN counts: `une`)
// before the result is allocated; the compute function counts again (the length of an
// intermediate result is needed to allocate it: `@f` recomputes every shape it trusts),
// then stores the row-major position of each nonzero element at the next slot.

func.func @flatnonzero(%x: tensor<?x?xf32>) -> tensor<?xi64> {
  %0 = ag.flatnonzero %x : tensor<?x?xf32> -> tensor<?xi64>
  func.return %0 : tensor<?xi64>
}

// CHECK-LABEL: func.func @flatnonzero__shape(
// CHECK:         scf.for %{{.*}} = %{{.*}} to %d step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (i64) {
// CHECK:           scf.for %{{.*}} = %{{.*}} to %d_1 step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (i64) {
// CHECK:             %[[C:.*]] = arith.cmpf une
// CHECK-NEXT:        %[[ONE:.*]] = arith.extui %[[C]] : i1 to i64
// CHECK-NEXT:        arith.addi %{{.*}}, %[[ONE]] : i64
// CHECK-LABEL: func.func @flatnonzero(
// CHECK:         arith.extui
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %d step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (i64) {
// CHECK-NEXT:      scf.for %[[J:.*]] = %{{.*}} to %d_1 step %{{.*}} iter_args(%[[K:.*]] = %{{.*}}) -> (i64) {
// CHECK-NEXT:        %[[V:.*]] = memref.load %arg0[%[[I]], %[[J]]]
// CHECK:             %[[NZ:.*]] = arith.cmpf une, %[[V]]
// CHECK-NEXT:        scf.if %[[NZ]] {
// CHECK-NEXT:          %[[SLOT:.*]] = arith.index_cast %[[K]] : i64 to index
// CHECK-NEXT:          %[[ROW:.*]] = arith.muli %[[I]], %d_1 : index
// CHECK-NEXT:          %[[FLAT:.*]] = arith.addi %[[ROW]], %[[J]] : index
// CHECK-NEXT:          %[[P:.*]] = arith.index_cast %[[FLAT]] : index to i64
// CHECK-NEXT:          memref.store %[[P]], %out0[%[[SLOT]]] : memref<?xi64>
// CHECK:             arith.extui %[[NZ]] : i1 to i64
