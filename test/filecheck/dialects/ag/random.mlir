// RUN: arignote-opt %s | arignote-opt | filecheck %s

// CHECK-LABEL: func.func @draw(
// CHECK:         %{{.*}}, %{{.*}} = ag.mrg_uniform %{{.*}}[%{{.*}}] {shape = array<i64: -9223372036854775808, 3>} : tensor<?x?xi32>, tensor<i64> -> tensor<?x?xi32>, tensor<?x3xf32>
// CHECK:         %{{.*}}, %{{.*}} = ag.mrg_uniform %{{.*}}[] {shape = array<i64: 5>} : tensor<4x6xi32> -> tensor<4x6xi32>, tensor<5xf64>
func.func @draw(%s: tensor<?x?xi32>, %n: tensor<i64>, %t: tensor<4x6xi32>) -> (tensor<?x3xf32>, tensor<5xf64>) {
  %s2, %u = ag.mrg_uniform %s[%n] {shape = array<i64: -9223372036854775808, 3>} : tensor<?x?xi32>, tensor<i64> -> tensor<?x?xi32>, tensor<?x3xf32>
  %t2, %v = ag.mrg_uniform %t[] {shape = array<i64: 5>} : tensor<4x6xi32> -> tensor<4x6xi32>, tensor<5xf64>
  func.return %u, %v : tensor<?x3xf32>, tensor<5xf64>
}

// CHECK-LABEL: func.func @mask(
// CHECK:         %{{.*}}, %{{.*}} = ag.mrg_binomial %{{.*}}, %{{.*}}[%{{.*}}] {shape = array<i64: -9223372036854775808>, uniform_type = f32} : tensor<?x?xi32>, tensor<f64>, tensor<i64> -> tensor<?x?xi32>, tensor<?xf32>
func.func @mask(%s: tensor<?x?xi32>, %p: tensor<f64>, %n: tensor<i64>) -> tensor<?xf32> {
  %s2, %m = ag.mrg_binomial %s, %p[%n] {shape = array<i64: -9223372036854775808>, uniform_type = f32} : tensor<?x?xi32>, tensor<f64>, tensor<i64> -> tensor<?x?xi32>, tensor<?xf32>
  func.return %m : tensor<?xf32>
}
