// `--help` lists every arignote pass and every named pipeline, one line each.
// RUN: arignote-opt --help | filecheck %s

// CHECK:      usage: arignote-opt
// CHECK:      --emit {mlir,llvm,ptx}
// CHECK:      --print-ir-after-all
// CHECK:      arignote passes
// CHECK-NEXT:   canonicalize {{ +}}{{[^ ].*}}
// CHECK-NEXT:   stabilize {{ +}}{{[^ ].*}}
// CHECK-NEXT:   specialize {{ +}}{{[^ ].*}}
// CHECK-NEXT:   row-fusion {{ +}}{{[^ ].*}}
// CHECK-NEXT:   softmax-xent-pair {{ +}}{{[^ ].*}}
// CHECK-NEXT:   scan-prune {{ +}}{{[^ ].*}}
// CHECK-NEXT:   scan-last-step {{ +}}{{[^ ].*}}
// CHECK-NEXT:   scan-history {{ +}}{{[^ ].*}}
// CHECK-NEXT:   scan-pushout {{ +}}{{[^ ].*}}
// CHECK-NEXT:   fusion {{ +}}{{[^ ].*}}
// CHECK-NEXT:   inplace-update {{ +}}{{[^ ].*}}
// CHECK-NEXT:   inplace {{ +}}{{[^ ].*}}
// CHECK-NEXT:   profile-timers {{ +}}{{[^ ].*}}
// CHECK-NEXT:   ag-to-loops {{ +}}{{[^ ].*}}
// CHECK-NEXT:   parallelize {{ +}}{{[^ ].*}}
// CHECK-NEXT:   gpu-kernels {{ +}}{{[^ ].*}}
// CHECK-NEXT:   convert-arith-to-llvm {{ +}}{{[^ ].*}}
// CHECK-NEXT:   convert-math-to-llvm {{ +}}{{[^ ].*}}
// CHECK-NEXT:   convert-memref-to-llvm {{ +}}{{[^ ].*}}
// CHECK-NEXT:   convert-cf-to-llvm {{ +}}{{[^ ].*}}
// CHECK-NEXT:   convert-func-to-llvm {{ +}}{{[^ ].*}}
// CHECK-NEXT:   convert-to-llvm {{ +}}{{[^ ].*}}
// CHECK-NEXT:   convert-scf-to-cf {{ +}}{{[^ ].*}}
// CHECK-NEXT:   reconcile-unrealized-casts {{ +}}{{[^ ].*}}
// CHECK-NEXT:   merge-identical-functions {{ +}}{{[^ ].*}}
// CHECK-NEXT:   outline-kernels {{ +}}{{[^ ].*}}
// CHECK-EMPTY:
// CHECK-NEXT: pipelines
// CHECK-NEXT:   to-loops {{ +}}{{[^ ].*}}
// CHECK-NEXT:   to-llvm {{ +}}{{[^ ].*}}
// CHECK-NEXT:   to-gpu {{ +}}{{[^ ].*}}
// CHECK-NEXT:   fast_compile {{ +}}{{[^ ].*}}
// CHECK-NEXT:   fast_run {{ +}}{{[^ ].*}}
// CHECK-EMPTY:
// CHECK-NEXT: xDSL passes:
// CHECK:      {{ cse,}}
// CHECK-NOT:  Traceback
