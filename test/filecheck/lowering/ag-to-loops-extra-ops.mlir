// RUN: arignote-opt %s -p ag-to-loops | filecheck %s

// cumsum: for each row, one loop along the axis carrying the running sum, storing it at
// every step.

func.func @cumsum(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = ag.cumsum %x {axis = 1 : i64} : tensor<?x?xf32> -> tensor<?x?xf32>
  func.return %0 : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @cumsum(
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:           scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f32) {
// CHECK-NEXT:        %[[V:.*]] = memref.load %arg0[%[[I]], %[[J]]]
// CHECK-NEXT:        %[[S:.*]] = arith.addf %[[ACC]], %[[V]] : f32
// CHECK-NEXT:        memref.store %[[S]], %out0[%[[I]], %[[J]]] : memref<?x?xf32>
// CHECK-NEXT:        scf.yield %[[S]] : f32

// cumprod of integers multiplies (wrapping, as NumPy) from 1.

func.func @cumprod(%x: tensor<?xi32>) -> tensor<?xi32> {
  %0 = ag.cumprod %x {axis = 0 : i64} : tensor<?xi32> -> tensor<?xi32>
  func.return %0 : tensor<?xi32>
}

// CHECK-LABEL: func.func @cumprod(
// CHECK:         %[[ONE:.*]] = arith.constant 1 : i32
// CHECK:         scf.for %{{.*}} iter_args(%[[ACC:.*]] = %[[ONE]]) -> (i32) {
// CHECK:           arith.muli %[[ACC]], %{{.*}} : i32

// argsort: two scratch rows of positions (freed at the end), the positions 0..n-1, then
// ceil(log2 n) passes; a pass merges neighbouring runs of width 2**p into the scratch row
// (a tie takes the left run: stable; NaN after numbers) and copies it back.

func.func @argsort(%x: tensor<?xf64>) -> tensor<?xi64> {
  %0 = ag.argsort %x {axis = 0 : i64} : tensor<?xf64> -> tensor<?xi64>
  func.return %0 : tensor<?xi64>
}

// CHECK-LABEL: func.func @argsort(
// CHECK:         %[[N:.*]] = memref.dim %arg0
// CHECK:         %[[SCRATCH:.*]] = memref.alloc(%[[N]]) : memref<?xi64>
// CHECK-NEXT:    %[[ORDER:.*]] = memref.alloc(%[[N]]) : memref<?xi64>
// CHECK:         scf.for %[[K:.*]] = %{{.*}} to %[[N]] step %{{.*}} {
// CHECK-NEXT:      %[[K64:.*]] = arith.index_cast %[[K]] : index to i64
// CHECK-NEXT:      memref.store %[[K64]], %[[ORDER]][%[[K]]]
// CHECK:         scf.for %[[P:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           %[[WIDTH:.*]] = arith.shli %{{.*}}, %[[P]] : index
// CHECK:           %[[DOUBLE:.*]] = arith.addi %[[WIDTH]], %[[WIDTH]] : index
// CHECK:           scf.for %[[START:.*]] = %{{.*}} to %[[N]] step %[[DOUBLE]] {
// CHECK:             scf.for %{{.*}} = %[[START]] to %{{.*}} step %{{.*}} iter_args
// CHECK:               %[[LESS:.*]] = arith.cmpf olt, %[[RIGHT:.*]], %[[LEFT:.*]] : f64
// CHECK-NEXT:          %[[NUMBER:.*]] = arith.cmpf ord, %[[RIGHT]], %[[RIGHT]] : f64
// CHECK-NEXT:          %[[NAN:.*]] = arith.cmpf uno, %[[LEFT]], %[[LEFT]] : f64
// CHECK:               memref.store %{{.*}}, %[[SCRATCH]][%{{.*}}] : memref<?xi64>
// CHECK:           scf.for
// CHECK:             memref.load %[[SCRATCH]]
// CHECK-NEXT:        memref.store %{{.*}}, %[[ORDER]]
// CHECK:         memref.store %{{.*}}, %out0[%{{.*}}] : memref<?xi64>
// CHECK:         memref.dealloc %[[SCRATCH]] : memref<?xi64>
// CHECK-NEXT:    memref.dealloc %[[ORDER]] : memref<?xi64>

// sort gathers the row's elements by the sorted positions.

func.func @sort(%x: tensor<?x?xi8>) -> tensor<?x?xi8> {
  %0 = ag.sort %x {axis = 0 : i64} : tensor<?x?xi8> -> tensor<?x?xi8>
  func.return %0 : tensor<?x?xi8>
}

// CHECK-LABEL: func.func @sort(
// CHECK:         arith.cmpi slt, %{{.*}}, %{{.*}} : i8
// CHECK:         %[[AT:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK-NEXT:    %[[V:.*]] = memref.load %arg0[%[[AT]], %{{.*}}]
// CHECK-NEXT:    memref.store %[[V]], %out0[%{{.*}}, %{{.*}}] : memref<?x?xi8>

// searchsorted: bit_length(n) branch-free halvings of [lo, hi) per value; side "right"
// moves right while the middle element is not after the value.

func.func @searchsorted(%a: tensor<?xi32>, %v: tensor<?xi32>) -> tensor<?xi64> {
  %0 = ag.searchsorted %a, %v {side = "right"} : tensor<?xi32>, tensor<?xi32> -> tensor<?xi64>
  func.return %0 : tensor<?xi64>
}

// CHECK-LABEL: func.func @searchsorted(
// CHECK:         %[[N:.*]] = memref.dim %arg0
// CHECK:         %[[BITS:.*]] = scf.for
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[V:.*]] = memref.load %arg1[%[[I]]]
// CHECK:           %[[LO:.*]], %{{.*}} = scf.for %{{.*}} = %{{.*}} to %[[BITS]] step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %[[N]]) -> (index, index) {
// CHECK:             %[[A:.*]] = memref.load %arg0[%{{.*}}]
// CHECK-NEXT:        %[[AFTER:.*]] = arith.cmpi slt, %[[V]], %[[A]] : i32
// CHECK:           %[[R:.*]] = arith.index_cast %[[LO]] : index to i64
// CHECK-NEXT:      memref.store %[[R]], %out0[%[[I]]] : memref<?xi64>
