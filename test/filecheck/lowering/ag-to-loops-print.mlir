// RUN: arignote-opt %s -p ag-to-loops | filecheck %s

// ag.print copies its operand into its result buffer, then calls the print callback
// for the element type and rank with its callback id (-1 without one) and the buffer
// cast to a fully dynamic shape; the callbacks called are declared once.

func.func @f(%x: tensor<?x1xf32>, %v: tensor<i64>) -> (tensor<?x1xf32>, tensor<i64>) {
  %p = ag.print %x {message = "x", attrs = ["__str__"], callback = 3 : i64} : tensor<?x1xf32>
  %q = ag.print %v {message = "v", attrs = ["shape"]} : tensor<i64>
  func.return %p, %q : tensor<?x1xf32>, tensor<i64>
}

// CHECK-LABEL: func.func @f(
// CHECK-SAME:      %out0: memref<?x1xf32>, %out1: memref<i64>)
// CHECK:         scf.for
// CHECK:         memref.store %{{.*}}, %out0
// CHECK:         %[[ID:.*]] = arith.constant 3 : i64
// CHECK:         %[[CAST:.*]] = "memref.cast"(%out0) : (memref<?x1xf32>) -> memref<?x?xf32>
// CHECK:         func.call @arignote_print_f32_2(%[[ID]], %[[CAST]]) : (i64, memref<?x?xf32>) -> ()
// CHECK:         memref.store %{{.*}}, %out1[] : memref<i64>
// CHECK:         %[[NONE:.*]] = arith.constant -1 : i64
// CHECK:         func.call @arignote_print_i64_0(%[[NONE]], %{{.*}}) : (i64, memref<i64>) -> ()
// CHECK-DAG:   func.func private @arignote_print_f32_2(i64, memref<?x?xf32>)
// CHECK-DAG:   func.func private @arignote_print_i64_0(i64, memref<i64>)
