// RUN: arignote-opt %s -p ag-to-loops | filecheck %s

// Unsigned element types keep their `ui` type in the loops, and every op whose result
// depends on the sign takes the unsigned `arith` op: `divui` (with the x // 0 == 0
// guard), `remui`, `cmpi ult`, `maxui`, `uitofp`, `extui`; the sum accumulates in ui64.

func.func @unsigned(%x: tensor<?xui8>, %y: tensor<?xui8>) -> (tensor<?xui8>, tensor<?xui8>, tensor<?xi1>, tensor<?xui8>, tensor<?xf64>, tensor<?xui64>) {
  %q = ag.floordiv %x, %y : tensor<?xui8>, tensor<?xui8> -> tensor<?xui8>
  %r = ag.mod %x, %y : tensor<?xui8>, tensor<?xui8> -> tensor<?xui8>
  %l = ag.lt %x, %y : tensor<?xui8>, tensor<?xui8> -> tensor<?xi1>
  %m = ag.maximum %x, %y : tensor<?xui8>, tensor<?xui8> -> tensor<?xui8>
  %f = ag.cast %x : tensor<?xui8> to tensor<?xf64>
  %w = ag.cast %x : tensor<?xui8> to tensor<?xui64>
  func.return %q, %r, %l, %m, %f, %w : tensor<?xui8>, tensor<?xui8>, tensor<?xi1>, tensor<?xui8>, tensor<?xf64>, tensor<?xui64>
}

// CHECK-LABEL: func.func @unsigned(
// CHECK-SAME:      memref<?xui8, strided<[?], offset: ?>>
// `arith.constant` takes signless integers: an unsigned zero is a bitcast i8 constant.
// CHECK:         %[[Z:.*]] = arith.constant 0 : i8
// CHECK-NEXT:    %[[ZU:.*]] = arith.bitcast %[[Z]] : i8 to ui8
// CHECK:         arith.cmpi eq, %{{.*}}, %[[ZU]] : ui8
// CHECK:         arith.divui %{{.*}}, %{{.*}} : ui8
// CHECK:         arith.remui %{{.*}}, %{{.*}} : ui8
// CHECK:         arith.cmpi ult, %{{.*}}, %{{.*}} : ui8
// CHECK:         arith.maxui %{{.*}}, %{{.*}} : ui8
// CHECK:         arith.uitofp %{{.*}} : ui8 to f64
// CHECK:         arith.extui %{{.*}} : ui8 to ui64
// CHECK-NOT:     arith.divsi
// CHECK-NOT:     arith.sitofp
