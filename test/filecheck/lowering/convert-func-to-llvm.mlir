// RUN: arignote-opt %s -p convert-func-to-llvm | filecheck %s

// A memref argument is one pointer to a descriptor, loaded at entry; index is i64.
// CHECK:      llvm.func @callee(%[[P:.*]]: !llvm.ptr, %[[N:.*]]: i64) -> i32 {
// CHECK-NEXT: %[[NI:.*]] = builtin.unrealized_conversion_cast %[[N]] : i64 to index
// CHECK-NEXT: %[[D:.*]] = llvm.load %[[P]] : !llvm.ptr -> !llvm.struct<(!llvm.ptr, !llvm.ptr, i64, !llvm.array<1 x i64>, !llvm.array<1 x i64>)>
// CHECK-NEXT: %[[M:.*]] = builtin.unrealized_conversion_cast %[[D]] : !llvm.struct<(!llvm.ptr, !llvm.ptr, i64, !llvm.array<1 x i64>, !llvm.array<1 x i64>)> to memref<?xf32>
// CHECK-NEXT: %[[V:.*]] = memref.load %[[M]][%[[NI]]] : memref<?xf32>
// CHECK-NEXT: %[[R:.*]] = arith.fptosi %[[V]] : f32 to i32
// CHECK-NEXT: llvm.return %[[R]] : i32
func.func @callee(%m: memref<?xf32>, %n: index) -> i32 {
  %v = memref.load %m[%n] : memref<?xf32>
  %r = arith.fptosi %v : f32 to i32
  return %r : i32
}

// The caller spills the descriptor to an entry-block stack slot and passes its address.
// An unused memref argument is not even loaded.
// CHECK:      llvm.func @caller(%[[P:.*]]: !llvm.ptr, %[[S:.*]]: !llvm.ptr, %{{.*}}: f64) {
// CHECK-NOT:  llvm.load %[[S]]
// CHECK:      %[[ONE:.*]] = llvm.mlir.constant(1) : i64
// CHECK-NEXT: %[[SLOT:.*]] = llvm.alloca %[[ONE]] x !llvm.struct<(!llvm.ptr, !llvm.ptr, i64, !llvm.array<1 x i64>, !llvm.array<1 x i64>)> {alignment = 8 : i64} : (i64) -> !llvm.ptr
// CHECK:      %[[D:.*]] = llvm.load %[[P]] : !llvm.ptr -> !llvm.struct<(!llvm.ptr, !llvm.ptr, i64, !llvm.array<1 x i64>, !llvm.array<1 x i64>)>
// CHECK:      llvm.store %[[D]], %[[SLOT]]
// CHECK-NEXT: %{{.*}} = builtin.unrealized_conversion_cast %c3 : index to i64
// CHECK-NEXT: %[[R:.*]] = llvm.call @callee(%[[SLOT]], %{{.*}}) : (!llvm.ptr, i64) -> i32
// CHECK:      llvm.call @ext(%{{.*}}) : (f64) -> ()
// CHECK:      llvm.return
// CHECK-NEXT: }
func.func @caller(%m: memref<?xf32>, %s: memref<f32>, %x: f64) {
  %c3 = arith.constant 3 : index
  %r = func.call @callee(%m, %c3) : (memref<?xf32>, index) -> i32
  func.call @ext(%x) : (f64) -> ()
  return
}

// The function's calls share its slots: the k-th memref argument of a descriptor type in
// each call is stored into the k-th slot of that type just before the call (two slots of
// the rank-1 type, one of the rank-2 type, whatever the number of calls).
// CHECK-LABEL: llvm.func @shared_slots(
// CHECK-SAME:      %[[A:.*]]: !llvm.ptr, %[[B:.*]]: !llvm.ptr, %[[C:.*]]: !llvm.ptr) {
// CHECK-COUNT-3: llvm.alloca
// CHECK-NOT:     llvm.alloca
// CHECK-DAG:     %[[DA:.*]] = llvm.load %[[A]]
// CHECK-DAG:     %[[DB:.*]] = llvm.load %[[B]]
// CHECK-DAG:     %[[DC:.*]] = llvm.load %[[C]]
// CHECK:         llvm.store %[[DA]], %[[S0:.*]] : !llvm.struct<(!llvm.ptr, !llvm.ptr, i64, !llvm.array<1 x i64>, !llvm.array<1 x i64>)>, !llvm.ptr
// CHECK-NEXT:    llvm.store %[[DB]], %[[S1:.*]] : !llvm.struct<(!llvm.ptr, !llvm.ptr, i64, !llvm.array<1 x i64>, !llvm.array<1 x i64>)>, !llvm.ptr
// CHECK-NEXT:    llvm.call @two(%[[S0]], %[[S1]])
// CHECK:         llvm.store %[[DB]], %[[S0]]
// CHECK-NEXT:    llvm.store %[[DA]], %[[S1]]
// CHECK-NEXT:    llvm.call @two(%[[S0]], %[[S1]])
// CHECK-NEXT:    llvm.store %[[DC]], %[[S2:.*]] : !llvm.struct<(!llvm.ptr, !llvm.ptr, i64, !llvm.array<2 x i64>, !llvm.array<2 x i64>)>, !llvm.ptr
// CHECK-NEXT:    llvm.store %[[DA]], %[[S0]]
// CHECK-NEXT:    llvm.call @mixed(%[[S2]], %[[S0]])
// CHECK:         llvm.return
func.func private @two(%x: memref<?xf32>, %y: memref<?xf32>)
func.func private @mixed(%x: memref<?x?xf32>, %y: memref<?xf32>)
func.func @shared_slots(%a: memref<?xf32>, %b: memref<?xf32>, %c: memref<?x?xf32>) {
  func.call @two(%a, %b) : (memref<?xf32>, memref<?xf32>) -> ()
  func.call @two(%b, %a) : (memref<?xf32>, memref<?xf32>) -> ()
  func.call @mixed(%c, %a) : (memref<?x?xf32>, memref<?xf32>) -> ()
  return
}

// A declaration stays a body-less external llvm.func.
// CHECK:      llvm.func @ext(f64)
func.func private @ext(%x: f64)

// A function with `llvm.noalias` memref arguments is split: the body becomes an internal
// `@f__noalias` taking each marked argument's data pointer as an extra `noalias` pointer
// (put into the loaded descriptor), and `@f` loads the aligned pointers and calls it.
// CHECK-LABEL: llvm.func internal @scale__noalias(
// CHECK-SAME:      %[[X:.*]]: !llvm.ptr, %{{.*}}: i64, %[[OUT:.*]]: !llvm.ptr,
// CHECK-SAME:      %[[XD:.*]]: !llvm.ptr {llvm.noalias}, %[[OD:.*]]: !llvm.ptr {llvm.noalias}) {
// CHECK-DAG:     %[[OUTDESC:.*]] = llvm.load %[[OUT]]
// CHECK-DAG:     llvm.insertvalue %[[OD]], %[[OUTDESC]][1]
// CHECK-DAG:     %[[XDESC:.*]] = llvm.load %[[X]]
// CHECK-DAG:     llvm.insertvalue %[[XD]], %[[XDESC]][1]
// CHECK:         llvm.return
// CHECK-LABEL: llvm.func @scale(
// CHECK-SAME:      %[[WX:.*]]: !llvm.ptr, %[[WN:.*]]: i64, %[[WOUT:.*]]: !llvm.ptr) {
// CHECK-NEXT:    %[[D0:.*]] = llvm.load %[[WX]]
// CHECK-NEXT:    %[[P0:.*]] = llvm.extractvalue %[[D0]][1]
// CHECK-NEXT:    %[[D1:.*]] = llvm.load %[[WOUT]]
// CHECK-NEXT:    %[[P1:.*]] = llvm.extractvalue %[[D1]][1]
// CHECK-NEXT:    llvm.call @scale__noalias(%[[WX]], %[[WN]], %[[WOUT]], %[[P0]], %[[P1]])
// CHECK-NEXT:    llvm.return
func.func @scale(%x: memref<?xf32, strided<[?], offset: ?>> {llvm.noalias}, %n: index,
                 %out: memref<?xf32> {llvm.noalias}) {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<?xf32, strided<[?], offset: ?>>
  memref.store %v, %out[%c0] : memref<?xf32>
  return
}
