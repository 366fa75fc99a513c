// RUN: arignote-opt %s -p ag-to-loops | filecheck %s

// Broadcasting a row over a matrix: the shape function checks the one dynamic pair of
// dimensions, the compute function reads the static-1 axis of the row at index 0.

func.func @add(%x: tensor<?x?xf32>, %row: tensor<1x?xf32>) -> tensor<?x?xf32> {
  %s = ag.add %x, %row : tensor<?x?xf32>, tensor<1x?xf32> -> tensor<?x?xf32>
  func.return %s : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @add__shape(
// CHECK-SAME:      %arg0: memref<?x?xf32, strided<[?, ?], offset: ?>>,
// CHECK-SAME:      %arg1: memref<1x?xf32, strided<[?, ?], offset: ?>>,
// CHECK-SAME:      %dims: memref<?xi64>, %err: memref<?xi64>) -> i32
// CHECK-SAME:      ag.checks = ["ag.add: operand shapes (%d, %d) and (1, %d) do not match at dimension 1"]
// CHECK:         %[[ROWS:.*]] = memref.dim %arg0, %{{.*}} : memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK:         %[[COLS:.*]] = memref.dim %arg0, %{{.*}}
// CHECK:         %[[RCOLS:.*]] = memref.dim %arg1, %{{.*}}
// CHECK:         %[[OK:.*]] = arith.cmpi eq, %[[COLS]], %[[RCOLS]] : index
// CHECK:         %[[ID:.*]] = arith.constant 1 : i64
// CHECK:         %[[V1:.*]] = arith.index_cast %[[ROWS]] : index to i64
// CHECK:         %[[V2:.*]] = arith.index_cast %[[COLS]] : index to i64
// CHECK:         %[[V3:.*]] = arith.index_cast %[[RCOLS]] : index to i64
// CHECK:         cf.cond_br %[[OK]], ^[[NEXT:.*]], ^[[FAIL:.*]](%[[ID]], %[[V1]], %[[V2]], %[[V3]] : i64, i64, i64, i64)
// CHECK:       ^[[NEXT]]:
// CHECK:         %[[R64:.*]] = arith.index_cast %[[ROWS]] : index to i64
// CHECK:         memref.store %[[R64]], %dims[%{{.*}}] : memref<?xi64>
// CHECK:         %[[C64:.*]] = arith.index_cast %[[COLS]] : index to i64
// CHECK:         memref.store %[[C64]], %dims[%{{.*}}] : memref<?xi64>
// CHECK:         %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK:         func.return %[[ZERO]] : i32
// CHECK:       ^[[FAIL]](%check: i64, %v1: i64, %v2: i64, %v3: i64):
// CHECK:         memref.store %check, %err[%{{.*}}] : memref<?xi64>
// CHECK:         memref.store %v1, %err[%{{.*}}] : memref<?xi64>
// CHECK:         memref.store %v2, %err[%{{.*}}] : memref<?xi64>
// CHECK:         memref.store %v3, %err[%{{.*}}] : memref<?xi64>
// CHECK:         %[[CODE:.*]] = arith.trunci %check : i64 to i32
// CHECK:         func.return %[[CODE]] : i32

// CHECK-LABEL: func.func @add(
// CHECK-SAME:      %arg0: memref<?x?xf32, strided<[?, ?], offset: ?>> {llvm.noalias},
// CHECK-SAME:      %arg1: memref<1x?xf32, strided<[?, ?], offset: ?>> {llvm.noalias},
// CHECK-SAME:      %out0: memref<?x?xf32> {llvm.noalias}) -> i64 attributes {arignote.alloc_status} {
// CHECK:         %[[ROWS:.*]] = memref.dim %arg0
// CHECK:         %[[COLS:.*]] = memref.dim %arg0
// CHECK:         %[[I0:.*]] = arith.constant 0 : index
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %[[ROWS]] step %{{.*}} {
// CHECK-NEXT:      scf.for %[[J:.*]] = %{{.*}} to %[[COLS]] step %{{.*}} {
// CHECK-NEXT:        %[[X:.*]] = memref.load %arg0[%[[I]], %[[J]]]
// CHECK-NEXT:        %[[R:.*]] = memref.load %arg1[%[[I0]], %[[J]]]
// CHECK-NEXT:        %[[S:.*]] = arith.addf %[[X]], %[[R]] : f32
// CHECK-NEXT:        memref.store %[[S]], %out0[%[[I]], %[[J]]] : memref<?x?xf32>
// CHECK:         func.return

// A reduction: the accumulator is carried through `iter_args`; no checks, no failure block.
// A float sum runs in blocks of 1024 elements, each summed with `fastmath<reassoc>` (LLVM
// vectorises it into partial sums), the block sums combined with Neumaier's compensation.

func.func @sum(%x: tensor<?x3xf64>) -> tensor<3xf64> {
  %m = ag.reduce_sum %x {axes = array<i64: 0>} : tensor<?x3xf64> -> tensor<3xf64>
  func.return %m : tensor<3xf64>
}

// CHECK-LABEL: func.func @sum__shape(
// CHECK-SAME:      ag.checks = []
// CHECK:         %[[THREE:.*]] = arith.constant 3 : index
// CHECK:         arith.index_cast %[[THREE]] : index to i64
// CHECK:         func.return
// CHECK-NOT:     ^bb
// CHECK-LABEL: func.func @sum(
// CHECK-SAME:      %out0: memref<3xf64> {llvm.noalias})
// CHECK:         %[[ROWS:.*]] = memref.dim %arg0
// CHECK:         scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK:           %[[INIT:.*]] = arith.constant 0.000000e+00 : f64
// CHECK:           %[[BLOCK:.*]] = arith.constant 1024 : index
// CHECK:           %[[SUM:.*]], %[[COMP:.*]] = scf.for %[[B:.*]] = %{{.*}} to %[[ROWS]] step %[[BLOCK]] iter_args(%[[S:.*]] = %[[INIT]], %[[C:.*]] = %[[INIT]]) -> (f64, f64) {
// CHECK-NEXT:        %[[END:.*]] = arith.addi %[[B]], %[[BLOCK]] : index
// CHECK-NEXT:        %[[IN:.*]] = arith.cmpi slt, %[[END]], %[[ROWS]] : index
// CHECK-NEXT:        %[[CLIP:.*]] = arith.select %[[IN]], %[[END]], %[[ROWS]] : index
// CHECK-NEXT:        %[[PART:.*]] = scf.for %[[I:.*]] = %[[B]] to %[[CLIP]] step %{{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f64) {
// CHECK-NEXT:          %[[X:.*]] = memref.load %arg0[%[[I]], %[[J]]]
// CHECK-NEXT:          %[[NEW:.*]] = arith.addf %[[ACC]], %[[X]] fastmath<reassoc> : f64
// CHECK-NEXT:          scf.yield %[[NEW]] : f64
// CHECK:             %[[T:.*]] = arith.addf %[[S]], %[[PART]] : f64
// CHECK:             scf.yield %[[T]], %{{.*}} : f64, f64
// CHECK:           %[[TOTAL:.*]] = arith.addf %[[SUM]], %[[COMP]] : f64
// CHECK:           %[[FINITE:.*]] = arith.cmpf olt, %{{.*}}, %{{.*}} : f64
// CHECK-NEXT:      %[[RESULT:.*]] = arith.select %[[FINITE]], %[[TOTAL]], %[[SUM]] : f64
// CHECK:           memref.store %[[RESULT]], %out0[%[[J]]] : memref<3xf64>

// Matrix·vector: the contracted dimensions are checked, then summed in registers.

func.func @matvec(%a: tensor<?x?xf32>, %v: tensor<?xf32>) -> tensor<?xf32> {
  %y = ag.dot %a, %v : tensor<?x?xf32>, tensor<?xf32> -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}

// CHECK-LABEL: func.func @matvec__shape(
// CHECK-SAME:      ag.checks = ["ag.dot: contracted dimensions of operand shapes (%d, %d) and (%d,) differ"]
// CHECK:         memref.dim %arg0, %{{.*}}
// CHECK:         %[[K1:.*]] = memref.dim %arg0, %{{.*}}
// CHECK:         %[[K2:.*]] = memref.dim %arg1, %{{.*}}
// CHECK:         arith.cmpi eq, %[[K1]], %[[K2]] : index
// CHECK-LABEL: func.func @matvec(
// CHECK:         scf.for %[[I:.*]] = {{.*}} {
// CHECK:           scf.for %[[K:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (f32) {
// CHECK-NEXT:        %[[A:.*]] = memref.load %arg0[%[[I]], %[[K]]]
// CHECK-NEXT:        %[[V:.*]] = memref.load %arg1[%[[K]]]
// CHECK-NEXT:        %[[P:.*]] = arith.mulf %[[A]], %[[V]] : f32
// CHECK-NEXT:        %[[S:.*]] = arith.addf %[[ACC]], %[[P]] fastmath<reassoc> : f32
// CHECK-NEXT:        scf.yield %[[S]] : f32

// An intermediate is allocated and freed after its last use; a returned argument is
// copied into its output; `ag.node` labels the message; reduce_max checks for an
// empty axis.

func.func @chain(%a: tensor<?xi32>, %b: tensor<?xi32>) -> (tensor<i32>, tensor<?xi32>) {
  %p = ag.mul %a, %b {"ag.node" = "a * b"} : tensor<?xi32>, tensor<?xi32> -> tensor<?xi32>
  %m = ag.reduce_max %p {axes = array<i64: 0>} : tensor<?xi32> -> tensor<i32>
  func.return %m, %a : tensor<i32>, tensor<?xi32>
}

// CHECK-LABEL: func.func @chain__shape(
// CHECK-SAME:      ag.checks = ["ag.mul [a * b]: operand shapes (%d,) and (%d,) do not match at dimension 0", "ag.reduce_max: cannot reduce shape (%d,) over axes [0]: an axis is empty"]
// CHECK:         cf.cond_br %{{.*}}, ^{{.*}}, ^[[FAIL2:.*]](%{{.*}}, %{{.*}}, %{{.*}} : i64, i64, i64)
// CHECK:         %[[EMPTY:.*]] = arith.cmpi ne, %{{.*}}, %{{.*}} : index
// CHECK:         %[[ID:.*]] = arith.constant 2 : i64
// CHECK:         cf.cond_br %[[EMPTY]], ^{{.*}}, ^[[FAIL1:.*]](%[[ID]], %{{.*}} : i64, i64)
// CHECK:       ^[[FAIL2]](%check: i64, %v1: i64, %v2: i64):
// CHECK:       ^[[FAIL1]](%check_1: i64, %v1_1: i64):
// CHECK-LABEL: func.func @chain(
// CHECK-SAME:      %out0: memref<i32> {llvm.noalias}, %out1: memref<?xi32> {llvm.noalias})
// CHECK:         %[[TMP:.*]] = memref.alloc(%{{.*}}) : memref<?xi32>
// CHECK:           arith.muli
// CHECK:           memref.store %{{.*}}, %[[TMP]][%{{.*}}] : memref<?xi32>
// CHECK:         %[[MIN:.*]] = arith.constant -2147483648 : i32
// CHECK:         %[[MAX:.*]] = scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[MIN]]) -> (i32) {
// CHECK:           arith.maxsi %[[ACC]], %{{.*}} : i32
// CHECK:         memref.store %[[MAX]], %out0[] : memref<i32>
// CHECK-NEXT:    memref.dealloc %[[TMP]] : memref<?xi32>
// CHECK:         scf.for
// CHECK-NEXT:      %[[E:.*]] = memref.load %arg0[%{{.*}}] : memref<?xi32, strided<[?], offset: ?>>
// CHECK-NEXT:      memref.store %[[E]], %out1[%{{.*}}] : memref<?xi32>
// CHECK:         func.return

// Op library A. argmax: the shape function checks the reduced axis is non-empty; the
// compute function carries the best value and its i64 position, and takes a new
// element when it is greater or NaN (`ugt`) while the best is not yet NaN (`ord`).

func.func @argmax(%x: tensor<?x?xf32>) -> tensor<?xi64> {
  %i = ag.argmax %x {axes = array<i64: 1>} : tensor<?x?xf32> -> tensor<?xi64>
  func.return %i : tensor<?xi64>
}

// CHECK-LABEL: func.func @argmax__shape(
// CHECK-SAME:      ag.checks = ["ag.argmax: cannot reduce shape (%d, %d) over axes [1]: an axis is empty"]
// CHECK:         memref.dim %arg0, %{{.*}}
// CHECK:         %[[COLS:.*]] = memref.dim %arg0, %{{.*}}
// CHECK:         arith.cmpi ne, %[[COLS]], %{{.*}} : index
// CHECK-LABEL: func.func @argmax(
// CHECK-SAME:      %out0: memref<?xi64> {llvm.noalias})
// CHECK:         scf.for %[[I:.*]] = {{.*}} {
// CHECK:           %[[NEGINF:.*]] = arith.constant 0xff800000 : f32
// CHECK:           %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK:           %{{.*}}, %[[IDX:.*]] = scf.for %[[J:.*]] = {{.*}} iter_args(%[[BEST:.*]] = %[[NEGINF]], %[[POS:.*]] = %[[ZERO]]) -> (f32, i64) {
// CHECK-NEXT:        %[[V:.*]] = memref.load %arg0[%[[I]], %[[J]]]
// CHECK-NEXT:        %[[J64:.*]] = arith.index_cast %[[J]] : index to i64
// CHECK-NEXT:        %[[GT:.*]] = arith.cmpf ugt, %[[V]], %[[BEST]] : f32
// CHECK-NEXT:        %[[ORD:.*]] = arith.cmpf ord, %[[BEST]], %[[BEST]] : f32
// CHECK-NEXT:        %[[TAKE:.*]] = arith.andi %[[GT]], %[[ORD]] : i1
// CHECK-NEXT:        %[[NB:.*]] = arith.select %[[TAKE]], %[[V]], %[[BEST]] : f32
// CHECK-NEXT:        %[[NP:.*]] = arith.select %[[TAKE]], %[[J64]], %[[POS]] : i64
// CHECK-NEXT:        scf.yield %[[NB]], %[[NP]] : f32, i64
// CHECK:           memref.store %[[IDX]], %out0[%[[I]]] : memref<?xi64>

// dim: the length (a static one as a constant) stored into a 0-d i64 result; no checks.

func.func @dim(%x: tensor<?x3xf64>) -> (tensor<i64>, tensor<i64>) {
  %n = ag.dim %x {axis = 0 : i64} : tensor<?x3xf64> -> tensor<i64>
  %m = ag.dim %x {axis = 1 : i64} : tensor<?x3xf64> -> tensor<i64>
  func.return %n, %m : tensor<i64>, tensor<i64>
}

// CHECK-LABEL: func.func @dim__shape(
// CHECK-SAME:      ag.checks = []
// CHECK-LABEL: func.func @dim(
// CHECK-SAME:      %out0: memref<i64> {llvm.noalias}, %out1: memref<i64> {llvm.noalias})
// CHECK:         %[[D:.*]] = memref.dim %arg0, %{{.*}}
// CHECK-NEXT:    %[[D64:.*]] = arith.index_cast %[[D]] : index to i64
// CHECK-NEXT:    memref.store %[[D64]], %out0[] : memref<i64>
// CHECK-NEXT:    %[[THREE:.*]] = arith.constant 3 : index
// CHECK-NEXT:    %[[T64:.*]] = arith.index_cast %[[THREE]] : index to i64
// CHECK-NEXT:    memref.store %[[T64]], %out1[] : memref<i64>

// sigmoid without overflow: e = exp(-|x|), then 1 / (1 + e) or e / (1 + e) by the sign.

func.func @sigmoid(%x: tensor<?xf64>) -> tensor<?xf64> {
  %s = ag.sigmoid %x : tensor<?xf64>
  func.return %s : tensor<?xf64>
}

// CHECK-LABEL: func.func @sigmoid(
// CHECK:           %[[X:.*]] = memref.load %arg0[%{{.*}}]
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f64
// CHECK-NEXT:      %[[ABS:.*]] = math.absf %[[X]] : f64
// CHECK-NEXT:      %[[NEG:.*]] = arith.negf %[[ABS]] : f64
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[NEG]] : f64
// CHECK-NEXT:      %[[DEN:.*]] = arith.addf %[[ONE]], %[[E]] : f64
// CHECK-NEXT:      %[[P:.*]] = arith.divf %[[ONE]], %[[DEN]] : f64
// CHECK-NEXT:      %[[N:.*]] = arith.divf %[[E]], %[[DEN]] : f64
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:      %[[SIGN:.*]] = arith.cmpf oge, %[[X]], %[[ZERO]] : f64
// CHECK-NEXT:      %[[R:.*]] = arith.select %[[SIGN]], %[[P]], %[[N]] : f64
// CHECK-NEXT:      memref.store %[[R]], %out0[%{{.*}}] : memref<?xf64>

// An elementwise op over operands of the result's shape gets a contiguous fast path:
// when the strided arguments turn out row-major contiguous at run time, one flat loop
// over rows * cols (indices (0, i)); otherwise the nest. An op on intermediates only
// (identity layouts) is the flat loop alone.

func.func @flat(%x: tensor<?x?xf32>, %y: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %s = ag.add %x, %y : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %e = ag.exp %s : tensor<?x?xf32>
  func.return %e : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @flat(
// CHECK:         %[[ROWS:.*]] = memref.dim %arg0
// CHECK:         %[[COLS:.*]] = memref.dim %arg0
// CHECK:         %[[TMP:.*]] = memref.alloc
// CHECK:         %{{.*}}, %[[XS1:[0-9a-z_]+]] = memref.extract_strided_metadata %arg0
// CHECK:         arith.cmpi eq, %[[XS1]], %[[ONE:.*]] : index
// CHECK:         memref.extract_strided_metadata %arg1
// CHECK:         arith.andi
// CHECK:         %[[CONTIGUOUS:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
// CHECK-NEXT:    scf.if %[[CONTIGUOUS]] {
// CHECK-NEXT:      %[[N:.*]] = arith.muli %[[ROWS]], %[[COLS]] : index
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %{{.*}} = arith.constant 1 : index
// CHECK-NEXT:      scf.for %[[I:.*]] = %[[Z]] to %[[N]] step %{{.*}} {
// CHECK-NEXT:        memref.load %arg0[%[[Z]], %[[I]]]
// CHECK-NEXT:        memref.load %arg1[%[[Z]], %[[I]]]
// CHECK-NEXT:        arith.addf
// CHECK-NEXT:        memref.store %{{.*}}, %[[TMP]][%[[Z]], %[[I]]]
// CHECK:         } else {
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK:         %[[N2:.*]] = arith.muli %[[ROWS]], %[[COLS]] : index
// CHECK-NOT:     scf.if
// CHECK:         scf.for %[[J:.*]] = %[[Z2:.*]] to %[[N2]] step
// CHECK-NEXT:      memref.load %[[TMP]][%[[Z2]], %[[J]]]
// CHECK-NEXT:      math.exp
// CHECK-NEXT:      memref.store %{{.*}}, %out0[%[[Z2]], %[[J]]]

// Small intermediates of a static shape (here two scalars) live on the stack: a
// `memref.alloca` at the start of `@f` each, never freed, no `malloc` that could fail.

func.func @scaled(%x: tensor<?xf64>) -> tensor<?xf64> {
  %s = ag.reduce_sum %x {axes = array<i64: 0>} : tensor<?xf64> -> tensor<f64>
  %e = ag.exp %s : tensor<f64>
  %r = ag.mul %x, %e : tensor<?xf64>, tensor<f64> -> tensor<?xf64>
  func.return %r : tensor<?xf64>
}

// CHECK-LABEL: func.func @scaled(
// CHECK-SAME:      -> i64 attributes {arignote.alloc_status} {
// CHECK-NEXT:    %[[E:.*]] = memref.alloca() {alignment = 64 : i64} : memref<f64>
// CHECK-NEXT:    %[[S:.*]] = memref.alloca() {alignment = 64 : i64} : memref<f64>
// CHECK-NOT:     memref.alloc
// CHECK:         memref.store %{{.*}}, %[[S]][] : memref<f64>
// CHECK-NEXT:    %[[SV:.*]] = memref.load %[[S]][] : memref<f64>
// CHECK-NEXT:    %[[EV:.*]] = math.exp %[[SV]] : f64
// CHECK-NEXT:    memref.store %[[EV]], %[[E]][] : memref<f64>
// CHECK-NOT:     memref.dealloc
// CHECK:         func.return
