// RUN: arignote-opt %s -p convert-memref-to-llvm | filecheck %s

// CHECK:      builtin.module {
// CHECK-DAG:  llvm.func @free(!llvm.ptr)
// CHECK-DAG:  llvm.func @malloc(i64) -> !llvm.ptr

!view = memref<?x?xf32, strided<[?, 1], offset: ?>>

// Element address: aligned + offset + i * stride0 + j (static unit stride).
// CHECK-LABEL: func.func @strided_load
func.func @strided_load(%m: !view, %i: index, %j: index) -> f32 {
  // CHECK:      %[[D:.*]] = builtin.unrealized_conversion_cast %m : memref<?x?xf32, strided<[?, 1], offset: ?>> to !llvm.struct<(!llvm.ptr, !llvm.ptr, i64, !llvm.array<2 x i64>, !llvm.array<2 x i64>)>
  // CHECK-NEXT: %[[I:.*]] = builtin.unrealized_conversion_cast %i : index to i64
  // CHECK-NEXT: %[[J:.*]] = builtin.unrealized_conversion_cast %j : index to i64
  // CHECK-NEXT: %[[OFF:.*]] = llvm.extractvalue %[[D]][2]
  // CHECK-NEXT: %[[S0:.*]] = llvm.extractvalue %[[D]][4, 0]
  // CHECK-NEXT: %[[T0:.*]] = llvm.mul %[[I]], %[[S0]] overflow<nsw> : i64
  // CHECK-NEXT: %[[L0:.*]] = llvm.add %[[OFF]], %[[T0]] overflow<nsw> : i64
  // CHECK-NEXT: %[[L1:.*]] = llvm.add %[[L0]], %[[J]] overflow<nsw> : i64
  // CHECK-NEXT: %[[P:.*]] = llvm.extractvalue %[[D]][1]
  // CHECK-NEXT: %[[A:.*]] = llvm.getelementptr inbounds %[[P]][%[[L1]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  // CHECK-NEXT: %[[V:.*]] = llvm.load %[[A]] : !llvm.ptr -> f32
  // CHECK-NEXT: return %[[V]] : f32
  %v = memref.load %m[%i, %j] : !view
  return %v : f32
}

// Static strides fold into constants; i1 is a byte in memory.
// CHECK-LABEL: func.func @static_bool_store
func.func @static_bool_store(%m: memref<4x8xi1>, %i: index, %v: i1) {
  // CHECK:      %[[C8:.*]] = llvm.mlir.constant(8) : i64
  // CHECK-NEXT: %[[T:.*]] = llvm.mul %{{.*}}, %[[C8]] overflow<nsw> : i64
  // CHECK-NEXT: %[[L:.*]] = llvm.add %[[T]], %{{.*}} overflow<nsw> : i64
  // CHECK-NEXT: %[[P:.*]] = llvm.extractvalue %{{.*}}[1]
  // CHECK-NEXT: %[[A:.*]] = llvm.getelementptr inbounds %[[P]][%[[L]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
  // CHECK-NEXT: %[[B:.*]] = llvm.zext %v : i1 to i8
  // CHECK-NEXT: llvm.store %[[B]], %[[A]] : i8, !llvm.ptr
  memref.store %v, %m[%i, %i] : memref<4x8xi1>
  return
}

// Rank 0: the aligned pointer itself.
// CHECK-LABEL: func.func @rank0
func.func @rank0(%m: memref<f64>) -> f64 {
  // CHECK:      %[[P:.*]] = llvm.extractvalue %{{.*}}[1] : !llvm.struct<(!llvm.ptr, !llvm.ptr, i64)>
  // CHECK-NEXT: %[[V:.*]] = llvm.load %[[P]] : !llvm.ptr -> f64
  %v = memref.load %m[] : memref<f64>
  return %v : f64
}

// malloc(bytes + 63), aligned = allocated + (-allocated & 63), row-major strides. The
// byte count 12 * n is a product clamped to 2**64 - 1 when it overflows
// (umul.with.overflow), and so is the padded size: a size that overflows asks malloc for
// SIZE_MAX bytes (refused), never a wrapped one.
// CHECK-LABEL: func.func @alloc_dealloc
func.func @alloc_dealloc(%n: index) -> index {
  // CHECK:      %[[N:.*]] = builtin.unrealized_conversion_cast %n : index to i64
  // CHECK-NEXT: %[[C12:.*]] = llvm.mlir.constant(12) : i64
  // CHECK-NEXT: %[[PAIR:.*]] = llvm.call_intrinsic "llvm.umul.with.overflow.i64"(%[[C12]], %[[N]]) : (i64, i64) -> !llvm.struct<(i64, i1)>
  // CHECK-NEXT: %[[LOW:.*]] = llvm.extractvalue %[[PAIR]][0] : !llvm.struct<(i64, i1)>
  // CHECK-NEXT: %[[OVER:.*]] = llvm.extractvalue %[[PAIR]][1] : !llvm.struct<(i64, i1)>
  // CHECK-NEXT: %[[ALL:.*]] = llvm.mlir.constant(-1) : i64
  // CHECK-NEXT: %[[BYTES:.*]] = llvm.select %[[OVER]], %[[ALL]], %[[LOW]] : i1, i64
  // CHECK-NEXT: %[[C63:.*]] = llvm.mlir.constant(63) : i64
  // CHECK-NEXT: %[[SUM:.*]] = llvm.add %[[BYTES]], %[[C63]] : i64
  // CHECK-NEXT: %[[WRAP:.*]] = llvm.icmp "ult" %[[SUM]], %[[BYTES]] : i64
  // CHECK-NEXT: %[[ALL2:.*]] = llvm.mlir.constant(-1) : i64
  // CHECK-NEXT: %[[PAD:.*]] = llvm.select %[[WRAP]], %[[ALL2]], %[[SUM]] : i1, i64
  // CHECK-NEXT: %[[RAW:.*]] = llvm.call @malloc(%[[PAD]]) : (i64) -> !llvm.ptr
  // CHECK-NEXT: %[[INT:.*]] = llvm.ptrtoint %[[RAW]] : !llvm.ptr to i64
  // CHECK:      %[[NEG:.*]] = llvm.sub %{{.*}}, %[[INT]] : i64
  // CHECK:      %[[SKIP:.*]] = llvm.and %[[NEG]], %{{.*}} : i64
  // CHECK-NEXT: %[[AL:.*]] = llvm.getelementptr %[[RAW]][%[[SKIP]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
  // CHECK-NEXT: %[[U:.*]] = llvm.mlir.undef : !llvm.struct<(!llvm.ptr, !llvm.ptr, i64, !llvm.array<2 x i64>, !llvm.array<2 x i64>)>
  // CHECK-NEXT: %[[D0:.*]] = llvm.insertvalue %[[RAW]], %[[U]][0]
  // CHECK-NEXT: %[[D1:.*]] = llvm.insertvalue %[[AL]], %[[D0]][1]
  // CHECK:      llvm.insertvalue %[[N]], %{{.*}}[3, 0]
  // CHECK:      llvm.insertvalue %{{.*}}, %{{.*}}[4, 0]
  // CHECK:      llvm.insertvalue %{{.*}}, %{{.*}}[3, 1]
  // CHECK:      %[[D:.*]] = llvm.insertvalue %{{.*}}, %{{.*}}[4, 1]
  // memref.dim with a constant index reads the sizes field; a static size is a constant.
  // CHECK:      %[[SZ:.*]] = llvm.extractvalue %[[D]][3, 0]
  // CHECK:      %[[FREE:.*]] = llvm.extractvalue %[[D]][0]
  // CHECK-NEXT: llvm.call @free(%[[FREE]]) : (!llvm.ptr) -> ()
  %c0 = arith.constant 0 : index
  %m = memref.alloc(%n) : memref<?x3xf32>
  %d = memref.dim %m, %c0 : memref<?x3xf32>
  memref.dealloc %m : memref<?x3xf32>
  return %d : index
}

// In a kernel with `arignote.alloc_status` (one integer result): the list head (two
// pointers on the stack, pointing to itself), a 16-byte header in each allocation, a
// null pointer branching to the out-of-memory exit with the byte count, the allocation
// linked after the head; `memref.dealloc` unlinks before `free`; the exit (the last
// block) frees each listed allocation and returns -bytes (the minimum when it does not
// fit the result type).
// CHECK-LABEL: func.func @checked
// CHECK-SAME:      -> i32 attributes {arignote.alloc_status, arignote.kernel} {
// CHECK:         %[[TWO:.*]] = llvm.mlir.constant(2) : i64
// CHECK-NEXT:    %[[HEAD:.*]] = llvm.alloca %[[TWO]] x !llvm.ptr {alignment = 8 : i64} : (i64) -> !llvm.ptr
// CHECK-NEXT:    llvm.store %[[HEAD]], %[[HEAD]] : !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[HPREV:.*]] = llvm.getelementptr %[[HEAD]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    llvm.store %[[HEAD]], %[[HPREV]] : !llvm.ptr, !llvm.ptr
// CHECK:         %[[BYTES:.*]] = llvm.select %{{.*}}, %{{.*}}, %{{.*}} : i1, i64
// CHECK-NEXT:    %[[C79:.*]] = llvm.mlir.constant(79) : i64
// CHECK:         %[[PAD:.*]] = llvm.select %{{.*}}, %{{.*}}, %{{.*}} : i1, i64
// CHECK-NEXT:    %[[RAW:.*]] = llvm.call @malloc(%[[PAD]]) : (i64) -> !llvm.ptr
// CHECK-NEXT:    %[[INT:.*]] = llvm.ptrtoint %[[RAW]] : !llvm.ptr to i64
// CHECK-NEXT:    %[[ZERO:.*]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT:    %[[NULL:.*]] = llvm.icmp "eq" %[[INT]], %[[ZERO]] : i64
// CHECK-NEXT:    llvm.cond_br %[[NULL]], ^[[OOM:.*]](%[[BYTES]] : i64), ^[[OK:.*]]
// CHECK-NEXT:  ^[[OK]]:
// CHECK-NEXT:    %[[NEXT:.*]] = llvm.load %[[HEAD]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    llvm.store %[[NEXT]], %[[RAW]] : !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[PREV:.*]] = llvm.getelementptr %[[RAW]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    llvm.store %[[HEAD]], %[[PREV]] : !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[NPREV:.*]] = llvm.getelementptr %[[NEXT]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    llvm.store %[[RAW]], %[[NPREV]] : !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    llvm.store %[[RAW]], %[[HEAD]] : !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[DATA:.*]] = llvm.getelementptr %[[RAW]][16] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK:         %[[FREED:.*]] = llvm.extractvalue %{{.*}}[0]
// CHECK-NEXT:    %[[F_NEXT:.*]] = llvm.load %[[FREED]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    %[[F_PREV_AT:.*]] = llvm.getelementptr %[[FREED]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[F_PREV:.*]] = llvm.load %[[F_PREV_AT]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    llvm.store %[[F_NEXT]], %[[F_PREV]] : !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[AT:.*]] = llvm.getelementptr %[[F_NEXT]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    llvm.store %[[F_PREV]], %[[AT]] : !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    llvm.call @free(%[[FREED]]) : (!llvm.ptr) -> ()
// CHECK:         func.return %{{.*}} : i32
// CHECK-NEXT:  ^[[WALK:.*]](%[[NODE:.*]]: !llvm.ptr):
// CHECK-NEXT:    %[[N_INT:.*]] = llvm.ptrtoint %[[NODE]] : !llvm.ptr to i64
// CHECK-NEXT:    %[[H_INT:.*]] = llvm.ptrtoint %[[HEAD]] : !llvm.ptr to i64
// CHECK-NEXT:    %[[END:.*]] = llvm.icmp "eq" %[[N_INT]], %[[H_INT]] : i64
// CHECK-NEXT:    llvm.cond_br %[[END]], ^[[DONE:.*]], ^[[FREE:.*]]
// CHECK-NEXT:  ^[[FREE]]:
// CHECK-NEXT:    %[[AFTER:.*]] = llvm.load %[[NODE]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    llvm.call @free(%[[NODE]]) : (!llvm.ptr) -> ()
// CHECK-NEXT:    llvm.br ^[[WALK]](%[[AFTER]] : !llvm.ptr)
// CHECK-NEXT:  ^[[DONE]]:
// CHECK:         %[[FITS:.*]] = llvm.icmp "ule" %{{.*}}, %{{.*}} : i64
// CHECK-NEXT:    %[[NARROW:.*]] = llvm.trunc %{{.*}} : i64 to i32
// CHECK-NEXT:    %[[Z32:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:    %[[NEG:.*]] = llvm.sub %[[Z32]], %[[NARROW]] : i32
// CHECK-NEXT:    %[[MIN:.*]] = llvm.mlir.constant(-2147483648 : i32) : i32
// CHECK-NEXT:    %[[STATUS:.*]] = llvm.select %[[FITS]], %[[NEG]], %[[MIN]] : i1, i32
// CHECK-NEXT:    func.return %[[STATUS]] : i32
// CHECK-NEXT:  ^[[OOM]](%{{.*}}: i64):
// CHECK-NEXT:    %[[FIRST:.*]] = llvm.load %[[HEAD]] {arignote.alloc_failure_exit} : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    llvm.br ^[[WALK]](%[[FIRST]] : !llvm.ptr)
func.func @checked(%n: index) -> i32 attributes {arignote.alloc_status, arignote.kernel} {
  %m = memref.alloc(%n) : memref<?x3xf32>
  memref.dealloc %m : memref<?x3xf32>
  %c0 = arith.constant 0 : i32
  return %c0 : i32
}

// A glue with fewer allocations keeps the code written out.
// CHECK-LABEL: func.func @small_glue
// CHECK-NOT:     @arignote_
// CHECK:         llvm.call @malloc
// CHECK-NOT:     @arignote_
// CHECK:         llvm.call @free
// CHECK-NOT:     @arignote_
// CHECK:         func.return
func.func @small_glue(%n: index) -> i64 attributes {arignote.alloc_status} {
  %m = memref.alloc(%n) : memref<?xf32>
  memref.dealloc %m : memref<?xf32>
  %c0 = arith.constant 0 : i64
  return %c0 : i64
}

// In a status function that is not a kernel (the glue) with at least 16 allocations
// (HELPER_MIN_ALLOCATIONS; a smaller one keeps the code written out, as @checked has it,
// for LLVM's O3 to delete what it can): each allocation calls
// @arignote_alloc with the list head, the static part of the byte count (element bytes
// times the static sizes), two dynamic sizes (1 when absent) and the alignment mask, and
// branches to the same out-of-memory exit with the byte count it returns when its
// allocated pointer is null; the descriptor takes the allocated and the aligned
// pointers. Each dealloc calls @arignote_free. Both helpers are defined once, internal,
// at the end of the module.
// CHECK-LABEL: func.func @glue
// CHECK:         %[[GHEAD:.*]] = llvm.alloca %{{.*}} x !llvm.ptr {alignment = 8 : i64} : (i64) -> !llvm.ptr
// CHECK:         %[[GN:.*]] = builtin.unrealized_conversion_cast %n : index to i64
// CHECK-NEXT:    %[[GONE:.*]] = llvm.mlir.constant(1) : i64
// CHECK-NEXT:    %[[MASK:.*]] = llvm.mlir.constant(63) : i64
// CHECK-NEXT:    %[[STATIC:.*]] = llvm.mlir.constant(12) : i64
// CHECK-NEXT:    %[[RES:.*]] = llvm.call @arignote_alloc(%[[GHEAD]], %[[STATIC]], %[[GN]], %[[GONE]], %[[MASK]]) : (!llvm.ptr, i64, i64, i64, i64) -> !llvm.struct<(!llvm.ptr, !llvm.ptr, i64)>
// CHECK-NEXT:    %[[GRAW:.*]] = llvm.extractvalue %[[RES]][0]
// CHECK-NEXT:    %[[GINT:.*]] = llvm.ptrtoint %[[GRAW]] : !llvm.ptr to i64
// CHECK-NEXT:    %[[GZERO:.*]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT:    %[[GNULL:.*]] = llvm.icmp "eq" %[[GINT]], %[[GZERO]] : i64
// CHECK-NEXT:    %[[GBYTES:.*]] = llvm.extractvalue %[[RES]][2]
// CHECK-NEXT:    llvm.cond_br %[[GNULL]], ^[[GOOM:.*]](%[[GBYTES]] : i64), ^[[GOK:.*]]
// CHECK-NEXT:  ^[[GOK]]:
// CHECK-NEXT:    %[[GALIGNED:.*]] = llvm.extractvalue %[[RES]][1]
// CHECK-NEXT:    %[[GD0:.*]] = llvm.mlir.undef
// CHECK-NEXT:    %[[GD1:.*]] = llvm.insertvalue %[[GRAW]], %[[GD0]][0]
// CHECK-NEXT:    llvm.insertvalue %[[GALIGNED]], %[[GD1]][1]
// CHECK:         %[[MASK128:.*]] = llvm.mlir.constant(127) : i64
// CHECK-NEXT:    %[[C32:.*]] = llvm.mlir.constant(32) : i64
// CHECK-NEXT:    %[[RES2:.*]] = llvm.call @arignote_alloc(%[[GHEAD]], %[[C32]], %{{.*}}, %{{.*}}, %[[MASK128]])
// CHECK:         %[[BYTES2:.*]] = llvm.extractvalue %[[RES2]][2]
// CHECK-NEXT:    llvm.cond_br %{{.*}}, ^[[GOOM]](%[[BYTES2]] : i64), ^{{.*}}
// A third dynamic size is multiplied into the second before the call:
// CHECK:         %[[N1:.*]] = builtin.unrealized_conversion_cast %n : index to i64
// CHECK-NEXT:    %[[N2:.*]] = builtin.unrealized_conversion_cast %n : index to i64
// CHECK-NEXT:    %[[N3:.*]] = builtin.unrealized_conversion_cast %n : index to i64
// CHECK:         %{{.*}} = llvm.call_intrinsic "llvm.umul.with.overflow.i64"(%[[N2]], %[[N3]])
// CHECK:         %[[NNSAT:.*]] = llvm.select %{{.*}}, %{{.*}}, %{{.*}} : i1, i64
// CHECK-NEXT:    %[[M3:.*]] = llvm.mlir.constant(63) : i64
// CHECK-NEXT:    %[[F4:.*]] = llvm.mlir.constant(4) : i64
// CHECK-NEXT:    llvm.call @arignote_alloc(%[[GHEAD]], %[[F4]], %[[N1]], %[[NNSAT]], %[[M3]])
// CHECK:         %[[GFREED:.*]] = llvm.extractvalue %{{.*}}[0] : !llvm.struct<(!llvm.ptr, !llvm.ptr, i64, !llvm.array<2 x i64>, !llvm.array<2 x i64>)>
// CHECK-NEXT:    llvm.call @arignote_free(%[[GFREED]]) : (!llvm.ptr) -> ()
// CHECK:         llvm.call @arignote_free(%{{.*}}) : (!llvm.ptr) -> ()
// CHECK:         llvm.call @arignote_free(%{{.*}}) : (!llvm.ptr) -> ()
// CHECK-NOT:     llvm.call @malloc
// CHECK:         ^[[GOOM]](%{{.*}}: i64):
// CHECK-NEXT:    llvm.load %[[GHEAD]] {arignote.alloc_failure_exit}
func.func @glue(%n: index) -> i32 attributes {arignote.alloc_status} {
  %m = memref.alloc(%n) : memref<?x3xf32>
  %k = memref.alloc() {alignment = 128 : i64} : memref<4xf64>
  %t = memref.alloc(%n, %n, %n) : memref<?x?x?xf32>
  // 13 more buffers: 16 reach HELPER_MIN_ALLOCATIONS
  %s0 = memref.alloc() : memref<1xf32>
  %s1 = memref.alloc() : memref<1xf32>
  %s2 = memref.alloc() : memref<1xf32>
  %s3 = memref.alloc() : memref<1xf32>
  %s4 = memref.alloc() : memref<1xf32>
  %s5 = memref.alloc() : memref<1xf32>
  %s6 = memref.alloc() : memref<1xf32>
  %s7 = memref.alloc() : memref<1xf32>
  %s8 = memref.alloc() : memref<1xf32>
  %s9 = memref.alloc() : memref<1xf32>
  %s10 = memref.alloc() : memref<1xf32>
  %s11 = memref.alloc() : memref<1xf32>
  %s12 = memref.alloc() : memref<1xf32>
  memref.dealloc %m : memref<?x3xf32>
  memref.dealloc %k : memref<4xf64>
  memref.dealloc %t : memref<?x?x?xf32>
  memref.dealloc %s0 : memref<1xf32>
  memref.dealloc %s1 : memref<1xf32>
  memref.dealloc %s2 : memref<1xf32>
  memref.dealloc %s3 : memref<1xf32>
  memref.dealloc %s4 : memref<1xf32>
  memref.dealloc %s5 : memref<1xf32>
  memref.dealloc %s6 : memref<1xf32>
  memref.dealloc %s7 : memref<1xf32>
  memref.dealloc %s8 : memref<1xf32>
  memref.dealloc %s9 : memref<1xf32>
  memref.dealloc %s10 : memref<1xf32>
  memref.dealloc %s11 : memref<1xf32>
  memref.dealloc %s12 : memref<1xf32>
  %c0 = arith.constant 0 : i32
  return %c0 : i32
}

// memref.reinterpret_cast: the source's two pointers, the op's offset, sizes and strides
// (static ones as constants).

func.func @reinterpret(%m: memref<?x?xf32>, %n: index) -> memref<?x4xf32> {
  %r = memref.reinterpret_cast %m to offset: [0], sizes: [%n, 4], strides: [4, 1] : memref<?x?xf32> to memref<?x4xf32>
  func.return %r : memref<?x4xf32>
}

// CHECK-LABEL: func.func @reinterpret
// CHECK:         %[[SRC:.*]] = builtin.unrealized_conversion_cast %m
// CHECK:         %[[N:.*]] = builtin.unrealized_conversion_cast %n : index to i64
// CHECK:         %[[D0:.*]] = llvm.mlir.undef
// CHECK:         %[[ALLOC:.*]] = llvm.extractvalue %[[SRC]][0]
// CHECK-NEXT:    %[[D1:.*]] = llvm.insertvalue %[[ALLOC]], %[[D0]][0]
// CHECK-NEXT:    %[[ALIGNED:.*]] = llvm.extractvalue %[[SRC]][1]
// CHECK-NEXT:    %[[D2:.*]] = llvm.insertvalue %[[ALIGNED]], %[[D1]][1]
// CHECK-NEXT:    %[[ZERO:.*]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT:    %[[D3:.*]] = llvm.insertvalue %[[ZERO]], %[[D2]][2]
// CHECK-NEXT:    %[[D4:.*]] = llvm.insertvalue %[[N]], %[[D3]][3, 0]
// CHECK-NEXT:    %[[FOUR:.*]] = llvm.mlir.constant(4) : i64
// CHECK-NEXT:    %[[D5:.*]] = llvm.insertvalue %[[FOUR]], %[[D4]][4, 0]
// CHECK:         llvm.insertvalue %{{.*}}, %[[D5]][3, 1]
// CHECK:         llvm.insertvalue %{{.*}}, %{{.*}}[4, 1]

// The glue's helpers, defined once after the module's functions. @arignote_alloc
// multiplies the byte count out (saturating), pads it by the 16-byte header and the mask
// (saturating), returns {null, ?, bytes} when malloc refuses, else links the allocation
// after the head and returns it with its data start rounded up to the mask and the byte
// count; @arignote_free unlinks, then frees.
// CHECK-LABEL: llvm.func internal @arignote_alloc(%{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64) -> !llvm.struct<(!llvm.ptr, !llvm.ptr, i64)> {
// CHECK-NEXT:    %[[P1:.*]] = llvm.call_intrinsic "llvm.umul.with.overflow.i64"(%[[ASTATIC:.*]], %[[AA:.*]]) : (i64, i64) -> !llvm.struct<(i64, i1)>
// CHECK:         %[[S1:.*]] = llvm.select %{{.*}}, %{{.*}}, %{{.*}} : i1, i64
// CHECK-NEXT:    %[[P2:.*]] = llvm.call_intrinsic "llvm.umul.with.overflow.i64"(%[[S1]], %[[AB:.*]]) : (i64, i64) -> !llvm.struct<(i64, i1)>
// CHECK:         %[[ABYTES:.*]] = llvm.select %{{.*}}, %{{.*}}, %{{.*}} : i1, i64
// CHECK-NEXT:    %[[H16:.*]] = llvm.mlir.constant(16) : i64
// CHECK-NEXT:    %[[ADD:.*]] = llvm.add %[[AMASK:.*]], %[[H16]] : i64
// CHECK-NEXT:    %[[TOTAL:.*]] = llvm.add %[[ABYTES]], %[[ADD]] : i64
// CHECK-NEXT:    %[[WRAP:.*]] = llvm.icmp "ult" %[[TOTAL]], %[[ABYTES]] : i64
// CHECK-NEXT:    %[[MAX:.*]] = llvm.mlir.constant(-1) : i64
// CHECK-NEXT:    %[[APAD:.*]] = llvm.select %[[WRAP]], %[[MAX]], %[[TOTAL]] : i1, i64
// CHECK-NEXT:    %[[AP:.*]] = llvm.call @malloc(%[[APAD]]) : (i64) -> !llvm.ptr
// CHECK:         llvm.cond_br %{{.*}}, ^[[REFUSED:.*]], ^[[LINKED:.*]]
// CHECK-NEXT:  ^[[REFUSED]]:
// CHECK-NEXT:    %[[U:.*]] = llvm.mlir.undef : !llvm.struct<(!llvm.ptr, !llvm.ptr, i64)>
// CHECK-NEXT:    %[[R:.*]] = llvm.insertvalue %[[AP]], %[[U]][0]
// CHECK-NEXT:    %[[RB:.*]] = llvm.insertvalue %[[ABYTES]], %[[R]][2]
// CHECK-NEXT:    llvm.return %[[RB]]
// CHECK-NEXT:  ^[[LINKED]]:
// CHECK-NEXT:    %[[ANEXT:.*]] = llvm.load %[[AHEAD:.*]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    llvm.store %[[ANEXT]], %[[AP]] : !llvm.ptr, !llvm.ptr
// CHECK:         llvm.store %[[AP]], %[[AHEAD]] : !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[START:.*]] = llvm.getelementptr %[[AP]][16] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK:         %[[PADDING:.*]] = llvm.and %{{.*}}, %[[AMASK]] : i64
// CHECK-NEXT:    %[[ALIGNED:.*]] = llvm.getelementptr %[[START]][%[[PADDING]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK:         %[[R1:.*]] = llvm.insertvalue %[[AP]], %{{.*}}[0]
// CHECK-NEXT:    %[[R2:.*]] = llvm.insertvalue %[[ALIGNED]], %[[R1]][1]
// CHECK-NEXT:    %[[R3:.*]] = llvm.insertvalue %[[ABYTES]], %[[R2]][2]
// CHECK-NEXT:    llvm.return %[[R3]]
// CHECK-LABEL: llvm.func internal @arignote_free(%{{.*}}: !llvm.ptr) {
// CHECK:         llvm.call @free(%{{.*}}) : (!llvm.ptr) -> ()
// CHECK-NEXT:    llvm.return
// CHECK-NOT:   @arignote_alloc(
