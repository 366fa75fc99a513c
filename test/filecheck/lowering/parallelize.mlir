// RUN: arignote-opt %s -p parallelize | filecheck %s

// parallelize: each ag.parallel_for becomes a call of the pool's arignote_parallel_for
// with a task @f__par<k>(begin, end, part, ctx), ctx pointing to a context struct
// filled on the stack. A captured memref travels as its aligned data pointer plus the
// offset/strides its type leaves dynamic (and its dynamic sizes only when the body
// does more than load and store); a scalar by value; the struct's elements by
// decreasing size, its tail padded explicitly. The caller converts each captured value
// (and extracts its fields) once, right after its definition. When a captured memref
// may stay llvm.noalias (f's noalias argument or an alloc that no other captured memref
// is a view of), the body is @f__par<k>__body taking the fields as arguments (the data
// pointer noalias), called by the task; otherwise the task is the body and loads the
// context itself. Constants are copied into the body. A loop that the pool would run
// in one part whatever the run-time values is inlined instead.

// CHECK:       llvm.func @arignote_parallel_width() -> i64
// CHECK-NEXT:  llvm.func @arignote_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64) -> i64
// CHECK-LABEL: func.func @f(
// CHECK-DAG:     %[[ALIGN:.*]] = llvm.mlir.constant(64) : i64
// CHECK-DAG:     %[[TRIPS:.*]] = llvm.mlir.constant(500) : i64
// CHECK-DAG:     %[[ZERO:.*]] = llvm.mlir.constant(0) : i64
// CHECK-DAG:     %[[OS:.*]] = builtin.unrealized_conversion_cast %out : memref<?xf32> to !llvm.struct
// CHECK-DAG:     %[[OP:.*]] = llvm.extractvalue %[[OS]][1]
// CHECK-DAG:     %[[XS:.*]] = builtin.unrealized_conversion_cast %x : memref<?xf32, strided<[?], offset: ?>> to !llvm.struct
// CHECK-DAG:     %[[XST:.*]] = llvm.extractvalue %[[XS]][4, 0]
// CHECK-DAG:     %[[XO:.*]] = llvm.extractvalue %[[XS]][2]
// CHECK-DAG:     %[[XP:.*]] = llvm.extractvalue %[[XS]][1]
// CHECK-DAG:     %[[CTX:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(!llvm.ptr, i64, i64, !llvm.ptr, f32, !llvm.array<4 x i8>)>
// CHECK:         %[[N:.*]] = builtin.unrealized_conversion_cast %n : index to i64
// CHECK:         %[[U:.*]] = llvm.mlir.undef : !llvm.struct<(!llvm.ptr, i64, i64, !llvm.ptr, f32, !llvm.array<4 x i8>)>
// CHECK-NEXT:    %[[C0:.*]] = llvm.insertvalue %[[XP]], %[[U]][0]
// CHECK-NEXT:    %[[C1:.*]] = llvm.insertvalue %[[XO]], %[[C0]][1]
// CHECK-NEXT:    %[[C2:.*]] = llvm.insertvalue %[[XST]], %[[C1]][2]
// CHECK-NEXT:    %[[C3:.*]] = llvm.insertvalue %s, %[[C2]][4]
// CHECK-NEXT:    %[[C4:.*]] = llvm.insertvalue %[[OP]], %[[C3]][3]
// CHECK-NEXT:    llvm.store %[[C4]], %[[CTX]]
// CHECK-NEXT:    %[[TASK:.*]] = llvm.mlir.addressof @f__par0 : !llvm.ptr
// CHECK-NEXT:    %{{.*}} = llvm.call @arignote_parallel_for(%[[TASK]], %[[CTX]], %[[ZERO]], %[[N]], %[[TRIPS]], %[[ALIGN]], %[[ZERO]])
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

// ag.parallel_width is the pool's; max_parts is passed on. Neither %x (not noalias) nor
// its view %v may be noalias: one function, loading its slots.
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

// Two loops; the first one's %x (a memref.dim user) travels with its two sizes and
// its row stride; %n is converted once.
// CHECK-LABEL: func.func @two(
// CHECK-DAG:     %[[N:.*]] = builtin.unrealized_conversion_cast %n : index to i64
// CHECK-DAG:     %[[X:.*]] = builtin.unrealized_conversion_cast %x
// CHECK-DAG:     llvm.extractvalue %[[X]][4, 0]
// CHECK-DAG:     llvm.extractvalue %[[X]][3, 1]
// CHECK-DAG:     llvm.extractvalue %[[X]][3, 0]
// CHECK-DAG:     llvm.extractvalue %[[X]][1]
// CHECK-DAG:     %[[CTX1:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(!llvm.ptr)>
// CHECK-DAG:     %[[CTX0:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(!llvm.ptr, i64, i64, i64)>
// CHECK:         llvm.call @arignote_parallel_for(%{{.*}}, %[[CTX0]], %{{.*}}, %[[N]],
// CHECK:         llvm.mlir.addressof @two__par1
// CHECK-NEXT:    llvm.call @arignote_parallel_for(%{{.*}}, %[[CTX1]], %{{.*}}, %[[N]],
func.func @two(%x: memref<?x?xf32> {llvm.noalias}, %y: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %trips = arith.constant 100 : index
  %p0 = ag.parallel_for %c0 to %n min_trips %trips align 1 {
  ^bb0(%begin: index, %end: index, %part: index):
    %m = memref.dim %x, %c1 : memref<?x?xf32>
    scf.for %i = %begin to %end step %c1 {
      scf.for %j = %c0 to %m step %c1 {
        %v = memref.load %x[%i, %j] : memref<?x?xf32>
        memref.store %v, %x[%i, %j] : memref<?x?xf32>
      }
    }
    ag.yield
  }
  %p1 = ag.parallel_for %c0 to %n min_trips %trips align 1 {
  ^bb0(%begin: index, %end: index, %part: index):
    scf.for %i = %begin to %end step %c1 {
      %v = memref.load %y[%i] : memref<?xf32>
      memref.store %v, %y[%i] : memref<?xf32>
    }
    ag.yield
  }
  func.return
}

// At most 300 trips (arith.minui) below min_trips 500: the body in place, part 0 on
// the whole range, 1 part. The same for a constant range of one align-sized chunk.
// CHECK-LABEL: func.func @serial(
// CHECK-NOT:     llvm.alloca
// CHECK:         %[[UPPER:.*]] = arith.minui %n, %c300 : index
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for %i = %c0 to %[[UPPER]] step %c1 {
// CHECK-NEXT:      memref.load %y[%i]
// CHECK-NEXT:      memref.store %{{.*}}, %y[%[[ZERO]]]
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[C64:.*]] = arith.constant 64 : index
// CHECK-NEXT:    scf.for %j = %c0 to %[[C64]] step %c1 {
// CHECK:         func.return %[[ONE]] : index
// CHECK-NOT:     @serial__par
func.func @serial(%y: memref<?xf32>, %n: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c300 = arith.constant 300 : index
  %trips = arith.constant 500 : index
  %upper = arith.minui %n, %c300 : index
  %p = ag.parallel_for %c0 to %upper min_trips %trips align 64 {
  ^bb0(%begin: index, %end: index, %part: index):
    scf.for %i = %begin to %end step %c1 {
      %v = memref.load %y[%i] : memref<?xf32>
      memref.store %v, %y[%part] : memref<?xf32>
    }
    ag.yield
  }
  %c64 = arith.constant 64 : index
  %q = ag.parallel_for %c0 to %c64 min_trips %c1 align 64 {
  ^bb0(%begin: index, %end: index, %part: index):
    scf.for %j = %begin to %end step %c1 {
      %v = memref.load %y[%j] : memref<?xf32>
      memref.store %v, %y[%j] : memref<?xf32>
    }
    ag.yield
  }
  func.return %p : index
}

// Outlined names skip the symbols the module has.
// CHECK-LABEL: func.func @h(
// CHECK:         llvm.mlir.addressof @h__par1 : !llvm.ptr
func.func private @h__par0()
func.func @h(%y: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %p = ag.parallel_for %c0 to %n min_trips %c1 align 1 {
  ^bb0(%begin: index, %end: index, %part: index):
    scf.for %i = %begin to %end step %c1 {
      %v = memref.load %y[%i] : memref<?xf32>
      memref.store %v, %y[%i] : memref<?xf32>
    }
    ag.yield
  }
  func.return
}

// CHECK-LABEL: llvm.func internal @f__par0(%0: i64, %1: i64, %2: i64, %3: !llvm.ptr) {
// CHECK-NEXT:    %[[C:.*]] = llvm.load %3 : !llvm.ptr -> !llvm.struct<(!llvm.ptr, i64, i64, !llvm.ptr, f32, !llvm.array<4 x i8>)>
// CHECK-NEXT:    %[[XP:.*]] = llvm.extractvalue %[[C]][0]
// CHECK-NEXT:    %[[XO:.*]] = llvm.extractvalue %[[C]][1]
// CHECK-NEXT:    %[[XS:.*]] = llvm.extractvalue %[[C]][2]
// CHECK-NEXT:    %[[S:.*]] = llvm.extractvalue %[[C]][4]
// CHECK-NEXT:    %[[OP:.*]] = llvm.extractvalue %[[C]][3]
// CHECK-NEXT:    llvm.call @f__par0__body(%0, %1, %2, %[[XP]], %[[XO]], %[[XS]], %[[S]], %[[OP]])
// CHECK-NEXT:    llvm.return
// CHECK:       llvm.func internal @f__par0__body(%begin: i64, %end: i64, %part: i64, %{{.*}}: !llvm.ptr {llvm.noalias}, %{{.*}}: i64, %{{.*}}: i64, %[[SV:.*]]: f32, %{{.*}}: !llvm.ptr {llvm.noalias}) {
// CHECK-NEXT:    %[[U:.*]] = llvm.mlir.undef
// CHECK-NEXT:    %[[D1:.*]] = llvm.insertvalue %{{.*}}, %[[U]][1]
// CHECK-NEXT:    %[[D2:.*]] = llvm.insertvalue %{{.*}}, %[[D1]][2]
// CHECK-NEXT:    %[[D3:.*]] = llvm.insertvalue %{{.*}}, %[[D2]][4, 0]
// CHECK-NEXT:    %[[X:.*]] = builtin.unrealized_conversion_cast %[[D3]] : {{.*}} to memref<?xf32, strided<[?], offset: ?>>
// CHECK:         %[[OUT:.*]] = builtin.unrealized_conversion_cast %{{.*}} : {{.*}} to memref<?xf32>
// CHECK-NEXT:    %[[B:.*]] = builtin.unrealized_conversion_cast %begin : i64 to index
// CHECK-NEXT:    %[[E:.*]] = builtin.unrealized_conversion_cast %end : i64 to index
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for %i = %[[B]] to %[[E]] step %[[C1]] {
// CHECK-NEXT:      %{{.*}} = memref.load %[[X]][%i]
// CHECK-NEXT:      %[[W:.*]] = arith.mulf %{{.*}}, %[[SV]] : f32
// CHECK-NEXT:      memref.store %[[W]], %[[OUT]][%i]
// CHECK:         llvm.return

// CHECK:       llvm.func internal @g__par0(%begin{{.*}}: i64, %end{{.*}}: i64, %part{{.*}}: i64, %[[CTX:.*]]: !llvm.ptr) {
// CHECK-NEXT:    %[[C:.*]] = llvm.load %[[CTX]] : !llvm.ptr -> !llvm.struct<(!llvm.ptr, !llvm.ptr, i64)>
// CHECK-NEXT:    %[[XP:.*]] = llvm.extractvalue %[[C]][0]
// CHECK-NEXT:    %[[VP:.*]] = llvm.extractvalue %[[C]][1]
// CHECK-NEXT:    %[[VO:.*]] = llvm.extractvalue %[[C]][2]
// CHECK:         builtin.unrealized_conversion_cast %{{.*}} to memref<?xf32>
// CHECK:         builtin.unrealized_conversion_cast %{{.*}} to memref<?xf32, strided<[1], offset: ?>>
// CHECK-NOT:     llvm.call
// CHECK:         llvm.return

// A memref.dim user gets the whole descriptor: the allocated pointer is the aligned
// one, static fields are constants.
// CHECK:       llvm.func internal @two__par0__body(%begin{{.*}}: i64, %end{{.*}}: i64, %part{{.*}}: i64, %[[XP:.*]]: !llvm.ptr {llvm.noalias}, %[[R:.*]]: i64, %[[C:.*]]: i64, %[[RS:.*]]: i64) {
// CHECK-NEXT:    %[[U:.*]] = llvm.mlir.undef
// CHECK-NEXT:    %[[D0:.*]] = llvm.insertvalue %[[XP]], %[[U]][0]
// CHECK-NEXT:    %[[D1:.*]] = llvm.insertvalue %[[XP]], %[[D0]][1]
// CHECK-NEXT:    %[[Z:.*]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT:    %[[D2:.*]] = llvm.insertvalue %[[Z]], %[[D1]][2]
// CHECK-NEXT:    %[[D3:.*]] = llvm.insertvalue %[[R]], %[[D2]][3, 0]
// CHECK-NEXT:    %[[D4:.*]] = llvm.insertvalue %[[C]], %[[D3]][3, 1]
// CHECK-NEXT:    %[[D5:.*]] = llvm.insertvalue %[[RS]], %[[D4]][4, 0]
// CHECK-NEXT:    %[[ONE:.*]] = llvm.mlir.constant(1) : i64
// CHECK-NEXT:    %[[D6:.*]] = llvm.insertvalue %[[ONE]], %[[D5]][4, 1]
// CHECK-NEXT:    %[[X:.*]] = builtin.unrealized_conversion_cast %[[D6]] : {{.*}} to memref<?x?xf32>
// CHECK:         memref.dim %[[X]]
// CHECK-LABEL: llvm.func internal @two__par1(

// CHECK:       llvm.func internal @h__par1(
