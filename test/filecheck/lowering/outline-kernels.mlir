// RUN: arignote-opt %s -p outline-kernels | filecheck %s

// Each loop nest becomes a call of a kernel; the two identical nests (over other
// buffers) call one kernel. Constants are copied into the kernel, the other values it
// uses are its arguments in order of first use. A `noalias` argument of @f and an
// alloc stay `noalias` in the kernel; @f's argument without the attribute does not.
// A nest that allocates stays in place, and its inner nest is outlined.

// CHECK-LABEL: func.func @f(
// CHECK:         %[[N:.*]] = memref.dim
// CHECK-NEXT:    %[[T:.*]] = memref.alloc(%[[N]])
// CHECK-NEXT:    func.call @f__k0(%[[N]], %a, %[[T]]) : (index, memref<?xf64>, memref<?xf64>) -> ()
// CHECK-NEXT:    func.call @f__k0(%[[N]], %[[T]], %out) : (index, memref<?xf64>, memref<?xf64>) -> ()
// CHECK-NEXT:    func.call @f__k1(%[[N]], %c, %out) : (index, memref<?xf64>, memref<?xf64>) -> ()
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      %[[S:.*]] = memref.alloc
// CHECK-NEXT:      func.call @f__k2(%[[S]])
// CHECK-NEXT:      memref.dealloc %[[S]]
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.dealloc %[[T]]

// CHECK:       func.func private @f__k0(%{{.*}}: index, %{{.*}}: memref<?xf64> {llvm.noalias}, %{{.*}}: memref<?xf64> {llvm.noalias}) attributes {arignote.kernel} {
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[O:.*]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for %{{.*}} = %[[Z]] to %{{.*}} step %[[O]] {
// CHECK:           math.exp
// CHECK:         func.return
// CHECK:       func.func private @f__k1(%{{.*}}: index, %{{.*}}: memref<?xf64>, %{{.*}}: memref<?xf64> {llvm.noalias}) attributes {arignote.kernel} {
// CHECK:           math.tanh
// CHECK:       func.func private @f__k2(%{{.*}}: memref<4xf64> {llvm.noalias}) attributes {arignote.kernel} {
// CHECK-NOT:   func.func private @f__k3

func.func @f(%a: memref<?xf64> {llvm.noalias}, %c: memref<?xf64>, %out: memref<?xf64> {llvm.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f64
  %n = memref.dim %a, %c0 : memref<?xf64>
  %t = memref.alloc(%n) : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i] : memref<?xf64>
    %y = math.exp %x : f64
    memref.store %y, %t[%i] : memref<?xf64>
  }
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %t[%i] : memref<?xf64>
    %y = math.exp %x : f64
    memref.store %y, %out[%i] : memref<?xf64>
  }
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %c[%i] : memref<?xf64>
    %y = math.tanh %x : f64
    memref.store %y, %out[%i] : memref<?xf64>
  }
  scf.for %j = %c0 to %n step %c1 {
    %s = memref.alloc() : memref<4xf64>
    scf.for %k = %c0 to %c4 step %c1 {
      memref.store %zero, %s[%k] : memref<4xf64>
    }
    memref.dealloc %s : memref<4xf64>
  }
  memref.dealloc %t : memref<?xf64>
  func.return
}
