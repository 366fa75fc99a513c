// RUN: arignote-opt %s -p parallelize | filecheck %s

// parallelize: each ag.parallel_for becomes an outlined body @f__par<k>(begin, end,
// part, captured values...), a task @f__par<k>__task(begin, end, part, ctx) that reads
// the captured values from ctx's slots (a memref as a pointer to its descriptor), and a
// call of the pool's arignote_parallel_for with ctx filled on the stack. Constants are
// copied into the body; a captured memref keeps llvm.noalias only when it is f's noalias
// argument (or an alloc) and no other captured memref is a view of it.

// CHECK:       llvm.func @arignote_parallel_width() -> i64
// CHECK-NEXT:  llvm.func @arignote_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64) -> i64
// CHECK-LABEL: func.func @f(
// CHECK-NEXT:    %[[N:.*]] = llvm.mlir.constant(3) : i64
// CHECK-NEXT:    %[[CTX:.*]] = llvm.alloca %[[N]] x !llvm.ptr
// CHECK:         %[[XD:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(!llvm.ptr, !llvm.ptr, i64, !llvm.array<1 x i64>, !llvm.array<1 x i64>)>
// CHECK:         %[[OD:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(!llvm.ptr, !llvm.ptr, i64, !llvm.array<1 x i64>, !llvm.array<1 x i64>)>
// CHECK:         %[[XS:.*]] = builtin.unrealized_conversion_cast %x : memref<?xf32, strided<[?], offset: ?>> to !llvm.struct
// CHECK-NEXT:    llvm.store %[[XS]], %[[XD]]
// CHECK-NEXT:    %[[S0:.*]] = llvm.getelementptr %[[CTX]][0]
// CHECK-NEXT:    llvm.store %[[XD]], %[[S0]] : !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[S1:.*]] = llvm.getelementptr %[[CTX]][1]
// CHECK-NEXT:    llvm.store %s, %[[S1]] : f32, !llvm.ptr
// CHECK:         %[[TASK:.*]] = llvm.mlir.addressof @f__par0__task : !llvm.ptr
// CHECK:         %[[ALIGN:.*]] = llvm.mlir.constant(64) : i64
// CHECK-NEXT:    %[[NOMAX:.*]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT:    %{{.*}} = llvm.call @arignote_parallel_for(%[[TASK]], %[[CTX]], %{{.*}}, %{{.*}}, %{{.*}}, %[[ALIGN]], %[[NOMAX]])
// CHECK-NOT:     ag.parallel_for
// CHECK:         func.return
func.func @f(%x: memref<?xf32, strided<[?], offset: ?>> {llvm.noalias}, %out: memref<?xf32> {llvm.noalias}, %s: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf32, strided<[?], offset: ?>>
  %trips = arith.constant 500 : index
  %parts = ag.parallel_for %c0 to %n min_trips %trips align 64 {
  ^bb0(%begin: index, %end: index, %part: index):
    scf.for %i = %begin to %end step %c1 {
      %v = memref.load %x[%i] : memref<?xf32, strided<[?], offset: ?>>
      %w = arith.mulf %v, %s : f32
      memref.store %w, %out[%i] : memref<?xf32>
    }
    ag.yield
  }
  func.return
}

// ag.parallel_width is the pool's; max_parts is passed on.
// CHECK-LABEL: func.func @g(
// CHECK:         %[[W:.*]] = llvm.call @arignote_parallel_width() : () -> i64
// CHECK:         %[[P:.*]] = llvm.call @arignote_parallel_for(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[W]])
// CHECK-NEXT:    %[[PARTS:.*]] = builtin.unrealized_conversion_cast %[[P]] : i64 to index
// CHECK-NEXT:    func.return %[[PARTS]] : index
func.func @g(%x: memref<?xf32>) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %w = ag.parallel_width : index
  %v = "memref.cast"(%x) : (memref<?xf32>) -> memref<?xf32, strided<[1], offset: ?>>
  %parts = ag.parallel_for %c0 to %n min_trips %c1 max_parts %w align 1 {
  ^bb0(%begin: index, %end: index, %part: index):
    scf.for %i = %begin to %end step %c1 {
      %a = memref.load %x[%i] : memref<?xf32>
      memref.store %a, %v[%i] : memref<?xf32, strided<[1], offset: ?>>
    }
    ag.yield
  }
  func.return %parts : index
}

// CHECK-LABEL: func.func private @f__par0(%begin: index, %end: index, %part: index, %x: memref<?xf32, strided<[?], offset: ?>> {llvm.noalias}, %s: f32, %out: memref<?xf32> {llvm.noalias}) {
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for %i = %begin to %end step %[[C1]] {
// CHECK:         func.return
// CHECK-LABEL: func.func private @f__par0__task(%0: index, %1: index, %2: index, %3: !llvm.ptr) {
// CHECK-NEXT:    %[[P0:.*]] = llvm.getelementptr %3[0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[D0:.*]] = llvm.load %[[P0]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    %[[X0:.*]] = llvm.load %[[D0]] : !llvm.ptr -> !llvm.struct
// CHECK-NEXT:    %[[X:.*]] = builtin.unrealized_conversion_cast %[[X0]] : {{.*}} to memref<?xf32, strided<[?], offset: ?>>
// CHECK-NEXT:    %[[P1:.*]] = llvm.getelementptr %3[1]
// CHECK-NEXT:    %[[S:.*]] = llvm.load %[[P1]] : !llvm.ptr -> f32
// CHECK:         func.call @f__par0(%0, %1, %2, %[[X]], %[[S]], %{{.*}})
// CHECK-LABEL: func.func private @g__par0(%begin: index, %end: index, %part: index, %x: memref<?xf32>, %v: memref<?xf32, strided<[1], offset: ?>>) {
