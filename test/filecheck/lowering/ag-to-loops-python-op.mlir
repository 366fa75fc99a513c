// RUN: arignote-opt %s -p ag-to-loops | filecheck %s

// ag.python_op (a custom op) runs in @f__shape: its operands cast to fully dynamic
// strided memrefs, the run callback (named after the number and types of its memref
// arguments) writes the result dimensions, which are loaded. In @f the dims callback
// gives them again and the fetch callback copies the kept outputs into the result
// buffers; the callbacks called are declared once.

func.func @f(%x: tensor<?x1xf32>, %v: tensor<i64>) -> (tensor<?xf64>, tensor<i64>) {
  %a, %b = ag.python_op %x, %v {callback = 3 : i64, label = "Split"} : (tensor<?x1xf32>, tensor<i64>) -> (tensor<?xf64>, tensor<i64>)
  func.return %a, %b : tensor<?xf64>, tensor<i64>
}

// CHECK-LABEL: func.func @f__shape(
// CHECK:         %[[DIMS:.*]] = memref.alloc() : memref<1xi64>
// CHECK-NEXT:    %[[DYN:.*]] = "memref.cast"(%[[DIMS]]) : (memref<1xi64>) -> memref<?xi64>
// CHECK-NEXT:    %[[X:.*]] = "memref.cast"(%arg0) : (memref<?x1xf32, strided<[?, ?], offset: ?>>) -> memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK-NEXT:    %[[V:.*]] = "memref.cast"(%arg1) : (memref<i64, strided<[], offset: ?>>) -> memref<i64, strided<[], offset: ?>>
// CHECK-NEXT:    %[[ID:.*]] = arith.constant 3 : i64
// CHECK-NEXT:    func.call @arignote_pyop_run_3_f32x2_i64x0_i64x1(%[[ID]], %[[X]], %[[V]], %[[DYN]])
// CHECK:         %[[N:.*]] = memref.load %[[DIMS]][%{{.*}}] : memref<1xi64>
// CHECK:         memref.dealloc %[[DIMS]] : memref<1xi64>
// CHECK:         memref.store %{{.*}}, %dims[%{{.*}}] : memref<?xi64>

// CHECK-LABEL: func.func @f(
// CHECK-SAME:      %out0: memref<?xf64> {llvm.noalias}, %out1: memref<i64> {llvm.noalias})
// CHECK:         %[[ID2:.*]] = arith.constant 3 : i64
// CHECK-NEXT:    func.call @arignote_pyop_dims(%[[ID2]], %{{.*}}) : (i64, memref<?xi64>) -> ()
// CHECK:         %[[O0:.*]] = "memref.cast"(%out0) : (memref<?xf64>) -> memref<?xf64, strided<[?], offset: ?>>
// CHECK-NEXT:    %[[O1:.*]] = "memref.cast"(%out1) : (memref<i64>) -> memref<i64, strided<[], offset: ?>>
// CHECK-NEXT:    %[[ID3:.*]] = arith.constant 3 : i64
// CHECK-NEXT:    func.call @arignote_pyop_fetch_2_f64x1_i64x0(%[[ID3]], %[[O0]], %[[O1]])

// CHECK-DAG:   func.func private @arignote_pyop_dims(i64, memref<?xi64>)
// CHECK-DAG:   func.func private @arignote_pyop_fetch_2_f64x1_i64x0(i64, memref<?xf64, strided<[?], offset: ?>>, memref<i64, strided<[], offset: ?>>)
// CHECK-DAG:   func.func private @arignote_pyop_run_3_f32x2_i64x0_i64x1(i64, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<i64, strided<[], offset: ?>>, memref<?xi64>)
