// --emit=ptx prints the PTX of the kernels of a module lowered with -p to-gpu (llvmlite's
// NVPTX target, no GPU needed): one .entry per launch site, a grid-stride loop over
// [lower, upper) with the context struct as a byte-array parameter; --arch picks the
// target. A module not lowered for the GPU gives the one-line error.
// RUN: arignote-opt %s -p to-gpu --emit=ptx | filecheck %s
// RUN: arignote-opt %s -p to-gpu --emit=ptx --arch=sm_80 | filecheck %s --check-prefix=SM80
// RUN: not arignote-opt %s --emit=ptx 2>&1 | filecheck %s --check-prefix=UNLOWERED

// CHECK:       .version 8.0
// CHECK-NEXT:  .target sm_90
// CHECK-NEXT:  .address_size 64
// CHECK:       .visible .entry f__par0__kernel(
// CHECK-NEXT:    .param .u64 f__par0__kernel_param_0,
// CHECK-NEXT:    .param .u64 f__par0__kernel_param_1,
// CHECK-NEXT:    .param .align 8 .b8 f__par0__kernel_param_2[{{[0-9]+}}]
// CHECK:         mov.u32 {{.*}}%ntid.x
// CHECK:         mov.u32 {{.*}}%ctaid.x
// CHECK:         mul.rn.f32
// CHECK:       .visible .entry f__par1__kernel(
// CHECK:         fma.rn.f32
// CHECK:       .visible .entry f__par2__kernel(

// SM80: .target sm_80

// UNLOWERED: arignote-opt: error: cannot emit PTX: lower with -p to-gpu first

func.func @f(%x: tensor<?xf32>, %y: tensor<?xf32>) -> (tensor<?xf32>, tensor<f32>) {
  %0 = ag.mul %x, %y : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
  %1 = ag.exp %0 : tensor<?xf32>
  %2 = ag.reduce_sum %1 {axes = array<i64: 0>} : tensor<?xf32> -> tensor<f32>
  func.return %1, %2 : tensor<?xf32>, tensor<f32>
}
