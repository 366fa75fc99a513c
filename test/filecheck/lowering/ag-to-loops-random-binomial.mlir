// RUN: arignote-opt %s -p ag-to-loops | filecheck %s

// ag.mrg_binomial (a dropout mask): the loops of ag.mrg_uniform, but each sample's
// integer becomes an f32 uniform (Theano's constant), widened to f64 (p's type),
// compared with p (read once, before the loops) and cast to the mask's f32: the
// uniforms are never stored.

func.func @f(%s: tensor<?x?xi32>, %p: tensor<f64>, %n: tensor<i64>) -> (tensor<?x?xi32>, tensor<?xf32>) {
  %s2, %m = ag.mrg_binomial %s, %p[%n] {shape = array<i64: -9223372036854775808>, uniform_type = f32} : tensor<?x?xi32>, tensor<f64>, tensor<i64> -> tensor<?x?xi32>, tensor<?xf32>
  func.return %s2, %m : tensor<?x?xi32>, tensor<?xf32>
}

// CHECK-LABEL: func.func @f(
// CHECK:         %[[P:.*]] = memref.load %arg1[] : memref<f64, strided<[], offset: ?>>
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             %[[F:.*]] = arith.sitofp %{{.*}} : i32 to f32
// CHECK-NEXT:        %[[NORM:.*]] = arith.constant 4.6566126{{.*}}e-10 : f32
// CHECK-NEXT:        %[[U:.*]] = arith.mulf %[[F]], %[[NORM]] : f32
// CHECK-NEXT:        %[[WIDE:.*]] = arith.extf %[[U]] : f32 to f64
// CHECK-NEXT:        %[[BELOW:.*]] = arith.cmpf olt, %[[WIDE]], %[[P]] : f64
// CHECK-NEXT:        %[[MASK:.*]] = arith.uitofp %[[BELOW]] : i1 to f32
// CHECK-NEXT:        memref.store %[[MASK]], %{{.*}}[%{{.*}}] : memref<?xf32>
// CHECK-NOT:     memref.alloc
