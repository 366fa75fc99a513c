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

// argsort: two scratch rows of keys and of positions (freed at the end); the row's keys
// and the positions 0..n-1 go into the first; then ceil(log2 n) passes, pass p merging
// neighbouring runs of width 2**p from one row into the other (even passes from the
// first). A merge step reads both heads and keeps the right one only when it sorts
// strictly before the left (NaN after numbers), so ties keep their order (stable).

func.func @argsort(%x: tensor<?xf64>) -> tensor<?xi64> {
  %0 = ag.argsort %x {axis = 0 : i64} : tensor<?xf64> -> tensor<?xi64>
  func.return %0 : tensor<?xi64>
}

// CHECK-LABEL: func.func @argsort(
// CHECK:         %[[N:.*]] = memref.dim %arg0
// CHECK:         %[[KEYS:.*]] = memref.alloc(%[[N]]) : memref<?xf64>
// CHECK-NEXT:    %[[POS:.*]] = memref.alloc(%[[N]]) : memref<?xi64>
// CHECK-NEXT:    %[[KEYS2:.*]] = memref.alloc(%[[N]]) : memref<?xf64>
// CHECK-NEXT:    %[[POS2:.*]] = memref.alloc(%[[N]]) : memref<?xi64>
// CHECK:         scf.for %[[K:.*]] = %{{.*}} to %[[N]] step %{{.*}} {
// CHECK-NEXT:      %[[V:.*]] = memref.load %arg0[%[[K]]]
// CHECK-NEXT:      memref.store %[[V]], %[[KEYS]][%[[K]]] : memref<?xf64>
// CHECK-NEXT:      %[[K64:.*]] = arith.index_cast %[[K]] : index to i64
// CHECK-NEXT:      memref.store %[[K64]], %[[POS]][%[[K]]] : memref<?xi64>
// CHECK:         scf.for %[[P:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           %[[EVEN:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : index
// CHECK-NEXT:      %[[SRC:.*]] = arith.select %[[EVEN]], %[[KEYS]], %[[KEYS2]] : memref<?xf64>
// CHECK-NEXT:      %[[SRCPOS:.*]] = arith.select %[[EVEN]], %[[POS]], %[[POS2]] : memref<?xi64>
// CHECK-NEXT:      %[[DST:.*]] = arith.select %[[EVEN]], %[[KEYS2]], %[[KEYS]] : memref<?xf64>
// CHECK-NEXT:      %[[DSTPOS:.*]] = arith.select %[[EVEN]], %[[POS2]], %[[POS]] : memref<?xi64>
// CHECK:           %[[WIDTH:.*]] = arith.shli %{{.*}}, %[[P]] : index
// CHECK:           %[[DOUBLE:.*]] = arith.addi %[[WIDTH]], %[[WIDTH]] : index
// CHECK:           scf.for %[[START:.*]] = %{{.*}} to %[[N]] step %[[DOUBLE]] {
// CHECK:             scf.for %[[OUT:.*]] = %[[START]] to %{{.*}} step %{{.*}} iter_args
// CHECK:               %[[LEFT:.*]] = memref.load %[[SRC]][%[[I:.*]]] : memref<?xf64>
// CHECK-NEXT:          %[[RIGHT:.*]] = memref.load %[[SRC]][%[[J:.*]]] : memref<?xf64>
// CHECK-NEXT:          %[[LEFTDONE:.*]] = arith.cmpi sge
// CHECK-NEXT:          %[[LESS:.*]] = arith.cmpf olt, %[[RIGHT]], %[[LEFT]] : f64
// CHECK-NEXT:          %[[NUMBER:.*]] = arith.cmpf ord, %[[RIGHT]], %[[RIGHT]] : f64
// CHECK-NEXT:          %[[NAN:.*]] = arith.cmpf uno, %[[LEFT]], %[[LEFT]] : f64
// CHECK:               %[[RIGHTLEFT:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}} : index
// CHECK-NEXT:          %[[TAKE:.*]] = arith.andi %[[RIGHTLEFT]], %{{.*}} : i1
// CHECK-NEXT:          %[[KEY:.*]] = arith.select %[[TAKE]], %[[RIGHT]], %[[LEFT]] : f64
// CHECK-NEXT:          memref.store %[[KEY]], %[[DST]][%[[OUT]]] : memref<?xf64>
// CHECK-NEXT:          %[[A:.*]] = memref.load %[[SRCPOS]][%[[I]]] : memref<?xi64>
// CHECK-NEXT:          %[[B:.*]] = memref.load %[[SRCPOS]][%[[J]]] : memref<?xi64>
// CHECK-NEXT:          %[[PICK:.*]] = arith.select %[[TAKE]], %[[B]], %[[A]] : i64
// CHECK-NEXT:          memref.store %[[PICK]], %[[DSTPOS]][%[[OUT]]] : memref<?xi64>
// CHECK:         %[[FINAL:.*]] = arith.select %{{.*}}, %[[POS]], %[[POS2]] : memref<?xi64>
// CHECK:         scf.for %[[R:.*]] = %{{.*}} to %[[N]] step %{{.*}} {
// CHECK-NEXT:      %[[SORTED:.*]] = memref.load %[[FINAL]][%[[R]]] : memref<?xi64>
// CHECK-NEXT:      memref.store %[[SORTED]], %out0[%[[R]]] : memref<?xi64>
// CHECK:         memref.dealloc %[[KEYS]] : memref<?xf64>
// CHECK-NEXT:    memref.dealloc %[[POS]] : memref<?xi64>
// CHECK-NEXT:    memref.dealloc %[[KEYS2]] : memref<?xf64>
// CHECK-NEXT:    memref.dealloc %[[POS2]] : memref<?xi64>

// sort moves the keys alone (no positions) and stores the sorted keys; integers
// compare signed.

func.func @sort(%x: tensor<?x?xi8>) -> tensor<?x?xi8> {
  %0 = ag.sort %x {axis = 0 : i64} : tensor<?x?xi8> -> tensor<?x?xi8>
  func.return %0 : tensor<?x?xi8>
}

// CHECK-LABEL: func.func @sort(
// CHECK:         %[[KEYS:.*]] = memref.alloc(%{{.*}}) : memref<?xi8>
// CHECK-NEXT:    %[[KEYS2:.*]] = memref.alloc(%{{.*}}) : memref<?xi8>
// CHECK-NOT:     memref<?xi64>
// CHECK:         arith.cmpi slt, %{{.*}}, %{{.*}} : i8
// CHECK:         %[[FINAL:.*]] = arith.select %{{.*}}, %[[KEYS]], %[[KEYS2]] : memref<?xi8>
// CHECK:         %[[V:.*]] = memref.load %[[FINAL]][%[[R:.*]]] : memref<?xi8>
// CHECK-NEXT:    memref.store %[[V]], %out0[%[[R]], %{{.*}}] : memref<?x?xi8>
// CHECK:         memref.dealloc %[[KEYS]] : memref<?xi8>
// CHECK-NEXT:    memref.dealloc %[[KEYS2]] : memref<?xi8>

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
