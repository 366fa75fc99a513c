# RUN: python %s | filecheck %s

# Elementwise sin (float32 and float64) and arctan2 (float32) compile to vectorised loops:
# the loop's `vector.body` loads and stores vectors of floats (8 or 16 on Intel cores, 4 on
# AMD Zen 3: the target's cost model chooses) and calls
# neither libm (`sinf`, `atan2f`) nor an LLVM intrinsic that becomes a libm call
# (`llvm.sin`): `lowering/loops/vector_math.py` expands them inline.

import re

import arignote
import arignote.tensor as T
from arignote.configuration import change_flags
from arignote.runtime import cpu

built: list[cpu.NativeModule] = []
original = cpu.NativeModule.__init__


def record(self, *args, **kwargs) -> None:
    original(self, *args, **kwargs)
    built.append(self)


def vector_body(ir: str) -> str:
    """The `vector.body` block of the (only) vectorised loop."""
    match = re.search(r"^vector\.body:.*?(?=^\S)", ir, re.S | re.M)
    assert match, "no vectorised loop"
    return match.group(0)


cpu.NativeModule.__init__ = record
with change_flags(compile_cache=False):
    x, y = T.fvector("x"), T.fvector("y")
    d = T.dvector("d")
    cases = {
        "sin float32": arignote.function([x], T.sin(x)),
        "sin float64": arignote.function([d], T.sin(d)),
        "arctan2 float32": arignote.function([x, y], T.arctan2(y, x)),
    }
for (name, _), native in zip(cases.items(), built, strict=True):
    print(f"== {name}")
    print(vector_body(native.optimized_llvm_ir))
    print("== end")

# CHECK-LABEL: == sin float32
# CHECK:       vector.body:
# CHECK-NOT:   call {{.*}}@{{(sinf|sin|llvm\.sin\..*)}}(
# CHECK:       load <{{[0-9]+}} x float>
# CHECK-NOT:   call {{.*}}@{{(sinf|sin|llvm\.sin\..*)}}(
# CHECK:       fpext <{{[0-9]+}} x float>
# CHECK-NOT:   call {{.*}}@{{(sinf|sin|llvm\.sin\..*)}}(
# CHECK:       fptrunc <{{[0-9]+}} x double> {{.*}} to <{{[0-9]+}} x float>
# CHECK-NOT:   call {{.*}}@{{(sinf|sin|llvm\.sin\..*)}}(
# CHECK:       store <{{[0-9]+}} x float>
# CHECK-NOT:   call {{.*}}@{{(sinf|sin|llvm\.sin\..*)}}(
# CHECK:       == end

# CHECK-LABEL: == sin float64
# CHECK:       vector.body:
# CHECK-NOT:   call {{.*}}@{{(sin|llvm\.sin\..*)}}(
# CHECK:       fmul {{.*}}<{{[0-9]+}} x double>
# CHECK-NOT:   call {{.*}}@{{(sin|llvm\.sin\..*)}}(
# CHECK:       store <{{[0-9]+}} x double>
# CHECK-NOT:   call {{.*}}@{{(sin|llvm\.sin\..*)}}(
# CHECK:       == end

# CHECK-LABEL: == arctan2 float32
# CHECK:       vector.body:
# CHECK-NOT:   call {{.*}}@{{(atan2f|atan2|atanf)}}(
# CHECK:       fdiv {{.*}}<{{[0-9]+}} x double>
# CHECK-NOT:   call {{.*}}@{{(atan2f|atan2|atanf)}}(
# CHECK:       store <{{[0-9]+}} x float>
# CHECK-NOT:   call {{.*}}@{{(atan2f|atan2|atanf)}}(
# CHECK:       == end
