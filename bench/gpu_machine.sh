#!/bin/bash
# The GPU checks, as one script for a machine with a CUDA GPU and no network (the
# device machine of these sessions): install the wheels carried in .whl/ (pycuda built
# from its sdist on a CPU machine with the CUDA toolkit, and arignote's dependencies),
# then run the GPU tests, the seed programs with device=cuda and `python -m bench gpu`.
# Logs go to $OUT (or ./gpu-logs).
set -u
OUT=${OUT:-./gpu-logs}
mkdir -p "$OUT" /tmp/site
export PYTHONUNBUFFERED=1
{
  nvidia-smi -L; nvcc --version | tail -1
  python3 -c "import sys, numpy, llvmlite; print(sys.version.split()[0], 'numpy', numpy.__version__, 'llvmlite', llvmlite.__version__)"
} 2>&1 | tee "$OUT/machine.log"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl 2>&1 | tail -3
export PYTHONPATH=/tmp/site  # the carried wheels first: llvmlite 0.50, and setuptools>=77 for the build below
rm -rf /tmp/site/arignote /tmp/site/arignote-*.dist-info build arignote.egg-info
python3 -m pip install -q --no-deps --no-build-isolation --no-index --upgrade --target /tmp/site . 2>&1 | grep -v "already exists" | tail -3
cd /tmp  # import the installed arignote, not the checkout
python3 -c "import arignote, llvmlite, pycuda.driver as d; d.init(); print('arignote', arignote.__file__, 'llvmlite', llvmlite.__version__, d.Device(0).name())" 2>&1 | tee -a "$OUT/machine.log"
cd - > /dev/null
timeout 300 python3 -m pytest -p no:cacheprovider -q -n 4 test/gpu -k "cuda" -rs 2>&1 | tee "$OUT/tests.log" | tail -30
( time ARIGNOTE_FLAGS=device=cuda python3 examples/theano_tutorial/06_logreg_train.py ) > "$OUT/seed06.log" 2>&1
echo "rc=$?" >> "$OUT/seed06.log"
head -3 "$OUT/seed06.log"; tail -4 "$OUT/seed06.log"
timeout 170 python3 -m bench gpu --repeats 5 --python-profile ${BENCH_ARGS:-} 2>&1 | tee "$OUT/bench.log"
