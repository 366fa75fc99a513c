// RUN: arignote-opt %s -p 'ag-to-loops{parallel_min_work=1000}' | filecheck %s
// RUN: arignote-opt %s -p ag-to-loops | filecheck %s --check-prefix=SERIAL

// ag-to-loops{parallel_min_work=N}: the outer loop of a fused elementwise nest and of a
// single elementwise op, and the row loop of ag.gemv_pair, become ag.parallel_for with min_trips = ceil(N / work per
// iteration); the default (N = 0) emits the serial loops.

// A rank-1 loop: 2 ops per element, so 500 trips; chunks aligned to 64 elements.
// CHECK-LABEL: func.func @vec(
// CHECK:         %[[STEP:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[TRIPS:.*]] = arith.constant 500 : index
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %{{.*}} = ag.parallel_for %[[ZERO]] to %d min_trips %[[TRIPS]] align 64 {
// CHECK-NEXT:    ^bb0(%begin: index, %end: index, %part: index):
// CHECK-NEXT:      scf.for %i = %begin to %end step %[[STEP]] {
// CHECK:             math.exp
// CHECK:             memref.store %{{.*}}, %out0[%i] : memref<?xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      ag.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[STATUS:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    func.return %[[STATUS]] : i64
// SERIAL-LABEL: func.func @vec(
// SERIAL-NOT:     ag.parallel_for
// SERIAL:         scf.for %i = %{{.*}} to %d step
func.func @vec(%x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  %r = ag.fused %x, %y : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32> {
  ^bb0(%a: tensor<?xf32>, %b: tensor<?xf32>):
    %e = ag.exp %a : tensor<?xf32>
    %m = ag.mul %e, %b : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
    ag.yield %m : tensor<?xf32>
  }
  func.return %r : tensor<?xf32>
}

// A rank-2 nest: rows in parallel, a row's work is its length (1 op per element).
// CHECK-LABEL: func.func @mat(
// CHECK:         %[[W:.*]] = arith.maxui %d_1, %{{.*}} : index
// CHECK-NEXT:    %[[NEED:.*]] = arith.constant 999 : index
// CHECK-NEXT:    %[[SUM:.*]] = arith.addi %[[NEED]], %[[W]] : index
// CHECK-NEXT:    %[[TRIPS:.*]] = arith.divui %[[SUM]], %[[W]] : index
// CHECK:         ag.parallel_for %{{.*}} to %d min_trips %[[TRIPS]] align 1 {
// CHECK:           scf.for %i = %begin to %end step
// CHECK:             scf.for %i_1 = %{{.*}} to %d_1 step
// CHECK-NEXT:          memref.load %arg0[%i, %i_1]
func.func @mat(%x: tensor<?x?xf64>) -> tensor<?x?xf64> {
  %r = ag.fused %x : tensor<?x?xf64> -> tensor<?x?xf64> {
  ^bb0(%a: tensor<?x?xf64>):
    %e = ag.exp %a : tensor<?x?xf64>
    ag.yield %e : tensor<?x?xf64>
  }
  func.return %r : tensor<?x?xf64>
}

// gemv_pair: up to half ag.parallel_width chunks of rows, at least 1 (boundaries at
// multiples of the 8-row block); chunk 0 adds its rows into r, chunk k > 0 into its own zeroed row k-1
// of a (width - 1) x columns scratch buffer; those are added to r, in order, after.
// CHECK-LABEL: func.func @pair(
// CHECK:         %[[POOL:.*]] = ag.parallel_width : index
// CHECK-NEXT:    %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[HALF:.*]] = arith.divui %[[POOL]], %[[TWO]] : index
// CHECK-NEXT:    %[[W:.*]] = arith.maxui %[[HALF]], %{{.*}} : index
// CHECK-NEXT:    %[[EXTRA:.*]] = arith.subi %[[W]], %{{.*}} : index
// CHECK-NEXT:    %[[SIZE:.*]] = arith.muli %[[EXTRA]], %d_1 : index
// CHECK-NEXT:    %[[PARTIALS:.*]] = memref.alloc(%[[SIZE]]) : memref<?xf32>
// CHECK:         %[[PARTS:.*]] = ag.parallel_for %{{.*}} to %d min_trips %{{.*}} max_parts %[[W]] align 8 {
// CHECK-NEXT:    ^bb0(%begin: index, %end: index, %part: index):
// CHECK:           %[[FIRST:.*]] = arith.cmpi eq, %part, %{{.*}} : index
// CHECK:           %[[VIEW:.*]] = memref.subview %[[PARTIALS]][%{{.*}}] [%d_1] [1] : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
// CHECK-NEXT:      %[[R:.*]] = "memref.cast"(%out2) : (memref<?xf32>) -> memref<?xf32, strided<[1], offset: ?>>
// CHECK-NEXT:      %[[ACC:.*]] = arith.select %[[FIRST]], %[[R]], %[[VIEW]]
// CHECK:           scf.if %{{.*}} {
// CHECK:             memref.store %{{.*}}, %[[ACC]][%{{.*}}]
// CHECK:           scf.for %{{.*}} = %begin to %{{.*}} step
// CHECK:           memref.store %{{.*}}, %[[ACC]][%{{.*}}]
// CHECK:           ag.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.for %[[K:.*]] = %{{.*}} to %[[PARTS]] step
// CHECK:             memref.load %[[PARTIALS]]
// CHECK:         memref.dealloc %[[PARTIALS]]
// SERIAL-LABEL: func.func @pair(
// SERIAL-NOT:     ag.parallel
// SERIAL:         func.return
func.func @pair(%a: tensor<?x?xf32>, %x: tensor<?xf32>, %y: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %one = ag.constant dense<1.0> : tensor<f32>
  %u, %g, %r = ag.gemv_pair %a, %x, %one rows(%y) : tensor<?x?xf32>, tensor<?xf32>, tensor<f32> rows(tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  ^bb0(%d: tensor<f32>, %yi: tensor<f32>):
    %e = ag.sub %d, %yi : tensor<f32>, tensor<f32> -> tensor<f32>
    ag.yield %d, %e : tensor<f32>, tensor<f32>
  }
  func.return %u, %g, %r : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
}

// A single elementwise op: one unit an element.
// CHECK-LABEL: func.func @add(
// CHECK:         %[[TRIPS:.*]] = arith.constant 1000 : index
// CHECK:         ag.parallel_for %{{.*}} to %{{.*}} min_trips %[[TRIPS]] align 64 {
// CHECK:           arith.addf
// SERIAL-LABEL: func.func @add(
// SERIAL-NOT:     ag.parallel_for
// SERIAL:         func.return
func.func @add(%x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  %s = ag.add %x, %y : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
  func.return %s : tensor<?xf32>
}

// Static trip counts: a loop the pool would run in one part whatever the run-time
// values (fewer trips than min_trips, or at most one align-sized chunk) is the serial
// loop; 600 trips of 2 units (min_trips 500) stay parallel.
// CHECK-LABEL: func.func @small(
// CHECK-NOT:     ag.parallel_for
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step
// CHECK:           math.exp
// CHECK:         func.return
// CHECK-LABEL: func.func @large(
// CHECK:         %[[TRIPS:.*]] = arith.constant 500 : index
// CHECK:         ag.parallel_for %{{.*}} to %{{.*}} min_trips %[[TRIPS]] align 64 {
func.func @small(%x: tensor<300xf32>, %y: tensor<300xf32>) -> tensor<300xf32> {
  %r = ag.fused %x, %y : tensor<300xf32>, tensor<300xf32> -> tensor<300xf32> {
  ^bb0(%a: tensor<300xf32>, %b: tensor<300xf32>):
    %e = ag.exp %a : tensor<300xf32>
    %m = ag.mul %e, %b : tensor<300xf32>, tensor<300xf32> -> tensor<300xf32>
    ag.yield %m : tensor<300xf32>
  }
  func.return %r : tensor<300xf32>
}
func.func @large(%x: tensor<600xf32>, %y: tensor<600xf32>) -> tensor<600xf32> {
  %r = ag.fused %x, %y : tensor<600xf32>, tensor<600xf32> -> tensor<600xf32> {
  ^bb0(%a: tensor<600xf32>, %b: tensor<600xf32>):
    %e = ag.exp %a : tensor<600xf32>
    %m = ag.mul %e, %b : tensor<600xf32>, tensor<600xf32> -> tensor<600xf32>
    ag.yield %m : tensor<600xf32>
  }
  func.return %r : tensor<600xf32>
}

// gemv_pair with 8 static rows (one 8-row block): the serial row loops.
// CHECK-LABEL: func.func @pair8(
// CHECK-NOT:     ag.parallel
// CHECK:         func.return
func.func @pair8(%a: tensor<8x?xf32>, %x: tensor<?xf32>, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<?xf32>) {
  %one = ag.constant dense<1.0> : tensor<f32>
  %u, %g, %r = ag.gemv_pair %a, %x, %one rows(%y) : tensor<8x?xf32>, tensor<?xf32>, tensor<f32> rows(tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<?xf32>) {
  ^bb0(%d: tensor<f32>, %yi: tensor<f32>):
    %e = ag.sub %d, %yi : tensor<f32>, tensor<f32> -> tensor<f32>
    ag.yield %d, %e : tensor<f32>, tensor<f32>
  }
  func.return %u, %g, %r : tensor<8xf32>, tensor<8xf32>, tensor<?xf32>
}
