// Round trip of the debugging ops (ag.print, ag.profile_begin/end); `cse` and `dce` keep
// them: two identical prints stay two prints, a print whose result is unused stays.
// RUN: arignote-opt %s | filecheck %s
// RUN: arignote-opt %s --print-op-generic | arignote-opt | filecheck %s
// RUN: arignote-opt %s -p cse,dce | filecheck %s --check-prefix=CSE

func.func @debug(%x: tensor<?xf64>) -> tensor<?xf64> {
  ag.profile_begin {node = 0 : i64}
  %y = ag.print %x {message = "x", attrs = ["__str__", "shape"]} : tensor<?xf64>
  ag.profile_end %y {node = 0 : i64} : tensor<?xf64>
  %z = ag.print %x {message = "x", attrs = ["__str__", "shape"]} : tensor<?xf64>
  %u = ag.print %x {message = "unused", attrs = ["__str__"], callback = 7 : i64} : tensor<?xf64>
  ag.profile_end {node = 1 : i64}
  %s = ag.add %y, %z : tensor<?xf64>, tensor<?xf64> -> tensor<?xf64>
  func.return %s : tensor<?xf64>
}

// CHECK-LABEL: func.func @debug(
// CHECK-NEXT:    ag.profile_begin {node = 0 : i64}
// CHECK-NEXT:    %y = ag.print %x {message = "x", attrs = ["__str__", "shape"]} : tensor<?xf64>
// CHECK-NEXT:    ag.profile_end %y {node = 0 : i64} : tensor<?xf64>
// CHECK-NEXT:    %z = ag.print %x {message = "x", attrs = ["__str__", "shape"]} : tensor<?xf64>
// CHECK-NEXT:    %u = ag.print %x {message = "unused", attrs = ["__str__"], callback = 7 : i64} : tensor<?xf64>
// CHECK-NEXT:    ag.profile_end {node = 1 : i64}

// CSE-LABEL: func.func @debug(
// CSE:         %y = ag.print %x
// CSE:         %z = ag.print %x
// CSE:         %u = ag.print %x
// CSE:         ag.add %y, %z
