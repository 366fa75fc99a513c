// arignote-run executes a function of an ag module: native code (the default) and the
// reference interpreter give the same results; inputs are literals or .npy files.
// RUN: arignote-run %s -i "[[1, 2], [3, 4]]" -i "[[10, 20], [30, 40]]" | filecheck %s --check-prefix=NATIVE
// RUN: arignote-run %s -i "[[1, 2], [3, 4]]" -i "[[10, 20], [30, 40]]" --linker py | filecheck %s --check-prefix=NATIVE
// RUN: python -c "import numpy; numpy.save('%t.npy', numpy.full((1, 3), 0.5))"
// RUN: arignote-run %s -i %t.npy -i "[[1.0, 2.0, 3.0]]" -O fast_run --save %t.out | filecheck %s --check-prefix=NPY
// RUN: python -c "import numpy; print(numpy.load('%t.out/result0.npy').tolist())" | filecheck %s --check-prefix=SAVED
// RUN: not arignote-run %s -i "[[1, 2]]" -i "[[1, 2, 3]]" 2>&1 | filecheck %s --check-prefix=MISMATCH
// RUN: not arignote-run %s -i 1 2>&1 | filecheck %s --check-prefix=COUNT
// RUN: not arignote-run %s -e nowhere -i 1 -i 1 2>&1 | filecheck %s --check-prefix=ENTRY

// NATIVE:      // result 0: tensor<?x?xf64> = shape (2, 2)
// NATIVE-NEXT: {{\[\[}}22., 44.],
// NATIVE-NEXT:  [66., 88.]]

// NPY:      // result 0: tensor<?x?xf64> = shape (1, 3)
// NPY-NEXT: {{\[\[}}3., 5., 7.]]
// SAVED: {{\[\[}}3.0, 5.0, 7.0]]

// MISMATCH: arignote-run: error: ValueError: ag.add: operand shapes (1, 2) and (1, 3) do not match at dimension 1
// COUNT: arignote-run: error: @main takes 2 arguments, got 1 (-i VALUE, once per argument)
// ENTRY: arignote-run: error: no function @nowhere in the module (functions: main)

func.func @main(%x: tensor<?x?xf64>, %y: tensor<?x?xf64>) -> tensor<?x?xf64> {
  %two = ag.constant dense<2.0> : tensor<f64>
  %s = ag.add %x, %y : tensor<?x?xf64>, tensor<?x?xf64> -> tensor<?x?xf64>
  %r = ag.mul %s, %two : tensor<?x?xf64>, tensor<f64> -> tensor<?x?xf64>
  func.return %r : tensor<?x?xf64>
}
