"""`arignote.config`: flags, validation, sources and precedence, change_flags; test values
(`x.tag.test_value`, `config.compute_test_value`)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import arignote
import arignote.compile.device as device_module
import arignote.tensor as T
from arignote.compile.device import (
    DeviceFallbackWarning,
    DeviceUnavailableError,
)
from arignote.configuration import FLAGS, Config, change_flags, config, flag_named, parse_flags
from arignote.testvalue import TestValueError, TestValueWarning

SPEC_FLAGS = [
    "floatX",
    "device",
    "mode",
    "linker",
    "optimizer",
    "optimizer_including",
    "optimizer_excluding",
    "profile",
    "profile_memory",
    "profile_optimizer",
    "profiling.n_apply",
    "profiling.n_ops",
    "profiling.min_memory_size",
    "compiledir",
    "exception_verbosity",
    "allow_gc",
    "compute_test_value",
]

BAD_VALUES = {
    "floatX": ("float16", "'float64', 'float32'"),
    "device": ("tpu", "'cpu', 'cuda'"),
    "mode": ("FAST", "'FAST_RUN', 'FAST_COMPILE', 'Mode', 'DebugMode'"),
    "linker": ("cc", "'cvm', 'cvm_nogc', 'vm', 'vm_nogc', 'c|py', 'c|py_nogc', 'c', 'py'"),
    "optimizer": ("o9", "'fast_run', 'fast_compile', 'None'"),
    "optimizer_including": (3, "rewrite tags separated by ':'"),
    "optimizer_excluding": (None, "rewrite tags separated by ':'"),
    "profile": ("yes", "True, False, 'True', 'False', '1', '0'"),
    "profile_memory": (2, "True, False, 'True', 'False', '1', '0'"),
    "profile_optimizer": ("", "True, False, 'True', 'False', '1', '0'"),
    "profiling.n_apply": ("-1", "an integer >= 0"),
    "profiling.n_ops": ("many", "an integer >= 0"),
    "profiling.min_memory_size": (1.5, "an integer >= 0"),
    "compiledir": ("", "a non-empty directory path"),
    "exception_verbosity": ("medium", "'low', 'high'"),
    "allow_gc": ("nope", "True, False, 'True', 'False', '1', '0'"),
    "compute_test_value": ("on", "'off', 'ignore', 'warn', 'raise'"),
}


def run_python(code: str, flags: str | None = None, rc: str | None = None, **env: str):
    environ = {k: v for k, v in os.environ.items() if k not in ("ARIGNOTE_FLAGS", "ARIGNOTERC")}
    if flags is not None:
        environ["ARIGNOTE_FLAGS"] = flags
    if rc is not None:
        environ["ARIGNOTERC"] = rc
    environ.update(env)
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=environ, timeout=120
    )


# --- flags and validation ------------------------------------------------------------


def test_every_spec_flag_exists_with_a_description() -> None:
    for name in SPEC_FLAGS:
        assert name in FLAGS, name
        assert FLAGS[name].doc
        FLAGS[name].validate(FLAGS[name].default)
    assert set(BAD_VALUES) == set(SPEC_FLAGS)


@pytest.mark.parametrize("name", SPEC_FLAGS)
def test_bad_value_lists_the_choices(name: str) -> None:
    value, choices = BAD_VALUES[name]
    before = getattr(config, name)
    with pytest.raises(ValueError, match="valid choices") as info:
        setattr(config, name, value)
    assert choices in str(info.value)
    assert name in str(info.value)
    assert getattr(config, name) == before


@pytest.mark.parametrize(
    ("value", "expected"),
    [(True, True), (False, False), ("True", True), ("False", False), ("1", True), ("0", False)]
    + [(1, True), (0, False), ("true", True), (" false ", False)],
)
def test_booleans(value: object, expected: bool) -> None:
    c = Config({})
    c.profile = value
    assert c.profile is expected


def test_ints_parse() -> None:
    c = Config({})
    c.profiling.n_apply = "7"
    assert c.profiling.n_apply == 7
    c.profiling__n_ops = 3
    assert c.profiling.n_ops == 3
    with pytest.raises(ValueError, match="an integer >= 0"):
        c.profiling.n_ops = True


def test_dotted_names_and_aliases() -> None:
    c = Config({})
    assert c.profiling.n_apply == c.profiling__n_apply == FLAGS["profiling.n_apply"].default
    c.profiling__n_apply = 5
    assert c.profiling.n_apply == 5
    assert getattr(c, "profiling.n_apply") == 5
    c.profiling.min_memory_size = 10
    assert c.profiling__min_memory_size == 10
    assert flag_named("profiling__n_ops") is FLAGS["profiling.n_ops"]
    with pytest.raises(ValueError, match="group of flags"):
        c.profiling = 3
    with pytest.raises(AttributeError):
        _ = c.profiling.no_such
    assert "n_apply" in dir(c.profiling)


def test_other_values() -> None:
    c = Config({})
    for device in ("cuda", "cuda1", "gpu", "gpu0"):
        c.device = device
    for device in ("GPU", "cuda-1", "opencl0:0", "cuda 1"):
        with pytest.raises(ValueError, match="config.device: invalid value"):
            c.device = device
    c.optimizer = None
    assert c.optimizer == "None"
    c.optimizer_excluding = "fusion:inplace"
    c.compiledir = "~/somewhere"
    assert not c.compiledir.startswith("~")
    for mode in ("FAST_RUN", "FAST_COMPILE", "DebugMode", "DEBUG_MODE", "Mode", "NanGuardMode"):
        c.mode = mode


def test_unknown_flag_assignment() -> None:
    with pytest.raises(ValueError, match="unknown config flag 'no_such_flag'.*floatX"):
        config.no_such_flag = 1
    with pytest.raises(AttributeError):
        _ = config.no_such_flag


def test_parse_flags() -> None:
    assert parse_flags("floatX=float32, profile=True,") == {"floatX": "float32", "profile": "True"}
    with pytest.raises(ValueError, match="expected name=value"):
        parse_flags("floatX")


def test_print_lists_every_flag() -> None:
    text = str(config)
    for name, flag in FLAGS.items():
        assert f"{name} (" in text
        assert flag.doc in text
    assert "Value:  " in text
    assert "also profiling__n_apply" in text


def test_print_from_the_command_line() -> None:
    result = run_python("import arignote; print(arignote.config)", flags="")
    assert result.returncode == 0, result.stderr
    for name in SPEC_FLAGS:
        assert name in result.stdout


# --- sources and precedence ----------------------------------------------------------

RC = """\
# a comment
[global]
floatX = float32
device = cpu
profile = True   ; inline comment
linker = py

[profiling]
n_apply = 7
"""

SHOW = (
    "import arignote; c = arignote.config; "
    "print(c.floatX, c.profile, c.linker, c.profiling.n_apply, c.source('floatX'))"
)


def test_rc_file(tmp_path: Path) -> None:
    rc = tmp_path / "arignoterc"
    rc.write_text(RC)
    result = run_python(SHOW, rc=str(rc))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[:4] == ["float32", "True", "py", "7"]
    assert str(rc) in result.stdout


def test_home_rc_file(tmp_path: Path) -> None:
    (tmp_path / ".arignoterc").write_text("[global]\nfloatX = float32\n")
    result = run_python(SHOW, HOME=str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[0] == "float32"


def test_flags_beat_rc_file_and_assignment_beats_flags(tmp_path: Path) -> None:
    rc = tmp_path / "arignoterc"
    rc.write_text(RC)
    code = (
        SHOW
        + "; c.floatX = 'float64'; c.profiling.n_apply = 9; print(c.floatX, c.profiling.n_apply)"
    )
    result = run_python(code, flags="floatX=float64,profiling__n_apply=3", rc=str(rc))
    assert result.returncode == 0, result.stderr
    first, second = result.stdout.splitlines()
    assert first.split() == ["float64", "True", "py", "3", "ARIGNOTE_FLAGS"]
    result = run_python(code, flags="floatX=float64,profiling.n_apply=3", rc=str(rc))
    assert result.stdout.splitlines()[0].split()[3] == "3"
    assert second.split() == ["float64", "9"]


def test_several_rc_files_later_wins(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("[global]\nfloatX = float32\nprofile = True\n")
    b.write_text("[global]\nfloatX = float64\n")
    result = run_python(SHOW, rc=f"{a}{os.pathsep}{b}{os.pathsep}{tmp_path / 'missing'}")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[:2] == ["float64", "True"]


def test_config_object_with_environ(tmp_path: Path) -> None:
    rc = tmp_path / "rc"
    rc.write_text("[global]\nfloatX = float32\nmode = FAST_COMPILE\n")
    c = Config({"ARIGNOTERC": str(rc), "ARIGNOTE_FLAGS": "mode=DebugMode"})
    assert (c.floatX, c.mode) == ("float32", "DebugMode")
    assert c.source("mode") == "ARIGNOTE_FLAGS" and c.source("linker") == "default"


@pytest.mark.parametrize(
    ("flags", "rc_text", "message"),
    [
        ("no_such_flag=1", "", "ARIGNOTE_FLAGS: unknown config flag 'no_such_flag'"),
        ("floatX=float16", "", "ARIGNOTE_FLAGS: config.floatX: invalid value 'float16'"),
        ("floatX", "", "expected name=value"),
        ("", "[global]\nbogus = 1\n", "[global] bogus: unknown config flag 'bogus'"),
        ("", "[profiling]\nn_things = 1\n", "unknown config flag 'profiling.n_things'"),
        ("", "[nosection]\nx = 1\n", "unknown config flag 'nosection.x'"),
        ("", "[global]\nprofile = maybe\n", "config.profile: invalid value 'maybe'"),
        ("", "floatX = float32\n", "not a valid config file"),
    ],
)
def test_unknown_flags_and_bad_values_fail_at_import(
    tmp_path: Path, flags: str, rc_text: str, message: str
) -> None:
    rc = tmp_path / "rc"
    rc.write_text(rc_text)
    result = run_python("import arignote.tensor", flags=flags, rc=str(rc))
    assert result.returncode != 0
    assert "ValueError" in result.stderr and message in result.stderr, result.stderr


# --- the device ------------------------------------------------------------------------

DEVICE_RUN = """
import warnings
import numpy as np
import arignote, arignote.tensor as T
from arignote.compile.device import DeviceFallbackWarning, DeviceUnavailableError
print("imported", arignote.config.device, arignote.config.force_device)
x = T.vector("x")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
        f = arignote.function([x], x * 2)
        print("ran", f(np.ones(2)).tolist())
        arignote.shared(np.ones(2))
    except DeviceUnavailableError as e:
        print("error", e)
for w in caught:
    print("warning", w.category.__name__, w.filename.endswith("<string>"), w.message)
"""


NO_GPU = pytest.mark.skipif(
    not device_module.gpu_missing(), reason="this machine can use a GPU: nothing falls back"
)
MISSING = "pycuda is not installed" if not device_module.has_pycuda() else "CUDA"


@NO_GPU
@pytest.mark.parametrize("device", ["cuda", "cuda0", "gpu", "gpu1"])
def test_gpu_device_from_the_environment_warns_at_first_use(device: str) -> None:
    """Theano's default (force_device=False): the work falls back to the CPU, with a
    warning at function() and at shared() (not at import) naming what is missing."""
    result = run_python(DEVICE_RUN, flags=f"device={device}")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"imported {device} False"
    assert lines[1] == "ran [2.0, 2.0]"
    warned = [line for line in lines if line.startswith("warning DeviceFallbackWarning True")]
    assert len(warned) == 2, result.stdout
    for line, what in zip(warned, ("function()", "shared()"), strict=True):
        assert f"config.device={device!r} (set in ARIGNOTE_FLAGS) cannot be used" in line
        assert MISSING in line
        assert f"{what} runs on the CPU instead" in line
    assert result.stderr == ""


@NO_GPU
def test_gpu_device_with_force_device_is_an_error_at_compile_time() -> None:
    result = run_python(DEVICE_RUN, flags="device=cuda,force_device=True")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "imported cuda True"
    assert lines[1].startswith("error config.device='cuda' (set in ARIGNOTE_FLAGS) cannot")
    assert MISSING in lines[1]
    assert "function() is refused because config.force_device is True" in lines[1]
    assert len(lines) == 2  # no fallback, no warning


@NO_GPU
def test_gpu_device_set_in_code() -> None:
    x = T.vector("x")
    with change_flags(device="cuda0"):
        with pytest.warns(DeviceFallbackWarning, match=r"config.device='cuda0' \(set in code\)"):
            f = arignote.function([x], x + 1)
        with pytest.warns(DeviceFallbackWarning, match="shared\\(\\) runs on the CPU"):
            arignote.shared(np.zeros(2))
        with change_flags(force_device=True):
            with pytest.raises(DeviceUnavailableError, match=re.escape(MISSING)):
                arignote.function([x], x + 1)
            with pytest.raises(DeviceUnavailableError, match="shared"):
                arignote.shared(np.zeros(2))
    np.testing.assert_array_equal(f(np.zeros(2)), [1.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        arignote.function([x], x + 1)  # device=cpu (the default): nothing to say
        arignote.shared(np.zeros(2))


@pytest.mark.parametrize(
    ("pycuda", "driver", "gpu", "expected"),
    [
        (False, False, False, ["pycuda is not installed", "no CUDA driver", "no NVIDIA GPU"]),
        (True, False, True, ["no CUDA driver"]),
        (True, True, False, ["no NVIDIA GPU"]),
        (True, True, True, []),
    ],
)
def test_what_is_missing_is_named(
    monkeypatch: pytest.MonkeyPatch, pycuda: bool, driver: bool, gpu: bool, expected: list[str]
) -> None:
    monkeypatch.setattr(device_module, "has_pycuda", lambda: pycuda)
    monkeypatch.setattr(device_module, "has_cuda_driver", lambda: driver)
    monkeypatch.setattr(device_module, "has_nvidia_gpu", lambda: gpu)
    import arignote.runtime.cuda as cuda

    monkeypatch.setattr(cuda, "require", lambda device="cuda": None)  # (probes pass)
    device_module._probe.cache_clear()
    try:
        missing = device_module.gpu_missing()
    finally:
        device_module._probe.cache_clear()
    assert len(missing) == len(expected)
    for part, text in zip(missing, expected, strict=True):
        assert text in part


# --- change_flags --------------------------------------------------------------------


def test_change_flags_restores() -> None:
    before = (config.floatX, config.profiling.n_apply, config.source("floatX"))
    with config.change_flags(floatX="float32", profiling__n_apply=4):
        assert config.floatX == "float32" and config.profiling.n_apply == 4
        assert T.matrix().dtype == "float32"
    assert (config.floatX, config.profiling.n_apply, config.source("floatX")) == before
    with pytest.raises(RuntimeError), change_flags({"profiling.n_ops": 2}):
        assert config.profiling.n_ops == 2
        raise RuntimeError
    assert config.profiling.n_ops == FLAGS["profiling.n_ops"].default


def test_change_flags_bad_value_restores_the_others() -> None:
    before = config.floatX
    with pytest.raises(ValueError, match="valid choices"), change_flags(floatX="float32", mode="X"):
        pass
    assert config.floatX == before
    with pytest.raises(ValueError, match="unknown config flag"):
        change_flags(nope=1)


def test_change_flags_nests_and_decorates() -> None:
    @change_flags(exception_verbosity="high")
    def verbosity() -> str:
        return config.exception_verbosity

    with change_flags(floatX="float32"):
        with change_flags(floatX="float64"):
            assert config.floatX == "float64"
        assert config.floatX == "float32"
        assert verbosity() == "high" and verbosity() == "high"
    assert config.exception_verbosity == "low"


def test_change_flags_on_the_package() -> None:
    assert arignote.config.change_flags is not None
    with arignote.config.change_flags(allow_gc=False):
        assert arignote.config.allow_gc is False
    assert arignote.config.allow_gc is True


# --- test values ---------------------------------------------------------------------


def test_off_by_default_and_inputs_filter_test_values() -> None:
    assert config.compute_test_value == "off"
    x = T.dmatrix("x")
    x.tag.test_value = [[1, 2, 3]]
    assert x.tag.test_value.dtype == np.float64
    assert not hasattr((x + 1).tag, "test_value")
    with pytest.raises(TypeError, match="wrong number of dimensions"):
        x.tag.test_value = np.ones(3)
    f = T.fvector("f")
    with pytest.raises(TypeError):
        f.tag.test_value = np.ones(3)  # float64 to float32 is a downcast
    row = T.drow("r")
    with pytest.raises(TypeError, match="broadcastable"):
        row.tag.test_value = np.ones((2, 3))


@change_flags(compute_test_value="raise")
def test_test_values_are_computed() -> None:
    x, w = T.dmatrix("x"), T.dvector("w")
    x.tag.test_value = np.arange(6.0).reshape(2, 3)
    w.tag.test_value = np.array([1.0, 2.0, 3.0])
    y = (T.dot(x, w) + 1).sum() * 2.5
    expected = ((np.arange(6.0).reshape(2, 3) @ [1.0, 2.0, 3.0]) + 1).sum() * 2.5
    assert np.allclose(y.tag.test_value, expected)
    assert x.T.tag.test_value.shape == (3, 2)


@change_flags(compute_test_value="raise")
def test_shape_error_is_raised_where_the_expression_is_built() -> None:
    x, y = T.dmatrix("x"), T.dmatrix("y")
    x.tag.test_value = np.ones((2, 3))
    y.tag.test_value = np.ones((4, 3))
    with pytest.raises(ValueError, match="do not match") as info:
        x + y  # the line the message names
    line = sys._getframe().f_lineno - 1
    message = str(info.value)
    assert f'File "{__file__}", line {line}' in message, message
    assert "x + y  # the line the message names" in message
    assert "Elemwise{add}(x, y)" in message
    with pytest.raises(ValueError, match="shapes"):
        T.dot(x, y)


@change_flags(compute_test_value="raise", exception_verbosity="high")
def test_high_verbosity_shows_the_operands() -> None:
    x, y = T.dvector("x"), T.dvector("y")
    x.tag.test_value, y.tag.test_value = np.ones(2), np.ones(3)
    with pytest.raises(ValueError, match=r"float64\[2\], float64\[3\]"):
        x * y


@change_flags(compute_test_value="raise")
def test_missing_test_value_raises() -> None:
    x, y = T.dmatrix("x"), T.dmatrix("y")
    x.tag.test_value = np.ones((2, 3))
    with pytest.raises(TestValueError, match=r"input 1 \(y\) has no test value") as info:
        x - y
    assert isinstance(info.value, ValueError)
    assert __file__ in str(info.value)


@change_flags(compute_test_value="warn")
def test_warn() -> None:
    x, y, q = T.dmatrix("x"), T.dmatrix("y"), T.dmatrix("q")
    x.tag.test_value = np.ones((2, 3))
    y.tag.test_value = np.ones((4, 3))
    with pytest.warns(TestValueWarning, match="do not match") as record:
        z = x + y
    assert record[0].filename == __file__
    assert record[0].lineno == sys._getframe().f_lineno - 2
    assert not hasattr(z.tag, "test_value")
    with pytest.warns(TestValueWarning, match="no test value"):
        q * 2


@change_flags(compute_test_value="ignore")
def test_ignore() -> None:
    x, y, q = T.dmatrix("x"), T.dmatrix("y"), T.dmatrix("q")
    x.tag.test_value = np.ones((2, 3))
    y.tag.test_value = np.ones((4, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        z = x + y
        u = q * 2
        v = x * 2
    assert not hasattr(z.tag, "test_value") and not hasattr(u.tag, "test_value")
    assert np.array_equal(v.tag.test_value, np.full((2, 3), 2.0))


@change_flags(compute_test_value="raise", floatX="float32")
def test_constants_and_floatx() -> None:
    x = T.matrix("x")
    x.tag.test_value = np.ones((2, 2), dtype="float32")
    y = x * 0.5 + np.ones((1, 2), dtype="float32")
    assert y.tag.test_value.dtype == np.float32
    assert np.allclose(y.tag.test_value, 1.5)


# --- the seed program ----------------------------------------------------------------


@pytest.mark.parametrize("linker", ["cvm", "py"])
def test_seed_program_11(tmp_path: Path, linker: str, run_seed) -> None:
    rc = tmp_path / "arignoterc"
    rc.write_text("[global]\nfloatX = float64\ndevice = cpu\n")
    flags = f"floatX=float32,linker={linker}"
    result = run_seed("11_config.py", flags, timeout=120, ARIGNOTERC=str(rc))
    lines = result.stdout.splitlines()
    assert lines[:2] == ["float32", "float64"]
    assert f"Value:  {linker}" in result.stdout and "Source:  ARIGNOTE_FLAGS" in result.stdout
    assert "rejected: config.floatX: invalid value 'float16x'; valid choices:" in lines[-1]


@change_flags(compute_test_value="raise")
def test_test_values_survive_dropped_intermediates() -> None:
    import gc

    from arignote.testvalue import get_test_value

    x = T.dvector("x")
    x.tag.test_value = np.array([1.0, 2.0])
    z = (x + 1) * 2  # the Variable of `x + 1` is dropped at once
    gc.collect()
    assert np.array_equal(get_test_value(z.owner.inputs[0]), [2.0, 3.0])
    assert (z.owner.inputs[0] * 3).tag.test_value.tolist() == [6.0, 9.0]


@change_flags(compute_test_value="raise")
def test_gradient_graphs_get_test_values() -> None:
    x, w = T.dmatrix("x"), T.dvector("w")
    xv, wv = np.arange(6.0).reshape(3, 2), np.array([0.5, -1.0])
    x.tag.test_value, w.tag.test_value = xv, wv
    cost = (T.dot(x, w) ** 2).mean()
    (gw,) = arignote.grad(cost, [w])
    assert np.allclose(gw.tag.test_value, 2 * xv.T @ (xv @ wv) / 3)


# --- Theano's warn.* flags --------------------------------------------------------------


def test_warn_flags_with_theano_defaults() -> None:
    """Theano 1.0's `warn.*` flags are accepted (programs set them, e.g.
    `warn.ignore_bug_before=all`), with Theano's defaults: the bug flags follow
    `warn.ignore_bug_before` ('0.8'), `warn.round` is on (fixed in 0.9)."""
    c = Config({})
    assert c.warn.ignore_bug_before == "0.8" and c.warn__ignore_bug_before == "0.8"
    assert c.warn.round is True and c.warn.vm_gc_bug is False
    for name in ("argmax_pushdown_bug", "sum_sum_bug", "subtensor_merge_bug", "reduce_join"):
        assert getattr(c.warn, name) is False, name
        assert FLAGS[f"warn.{name}"].doc
    c.warn.sum_sum_bug = "True"
    assert c.warn.sum_sum_bug is True
    with pytest.raises(ValueError, match="'None', 'all', '0.3'"):
        c.warn.ignore_bug_before = "0.2"
    every = Config({"ARIGNOTE_FLAGS": "warn.ignore_bug_before=None"})
    assert every.warn.reduce_join is True and every.warn.argmax_pushdown_bug is True
    none = Config({"ARIGNOTE_FLAGS": "warn__ignore_bug_before=all,warn.reduce_join=True"})
    assert none.warn.round is False and none.warn.reduce_join is True
    assert Config({"ARIGNOTE_FLAGS": "warn.ignore_bug_before=0.10"}).warn.round is False


def test_warn_round_warns_of_the_default_mode() -> None:
    x = T.dvector("x")
    with change_flags(warn__round=True), pytest.warns(UserWarning, match="warn.round=False"):
        T.round(x)
    with change_flags(warn__round=False), warnings.catch_warnings():
        warnings.simplefilter("error")
        T.round(x)
    with change_flags(warn__round=True), warnings.catch_warnings():
        warnings.simplefilter("error")
        T.round(x, "half_to_even")


def test_theano_settings_carry_over_when_arignote_has_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc = tmp_path / ".theanorc"
    rc.write_text("[global]\nfloatX = float32\ndevice = gpu0\n[lib]\ncnmem = 0.8\n")
    env = {"HOME": str(tmp_path), "THEANO_FLAGS": "optimizer=fast_compile,cxx="}
    cfg = Config(env)
    assert cfg.floatX == "float32" and cfg.optimizer == "fast_compile"
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "using " + str(rc) + " and THEANO_FLAGS" in err
    assert "skipped: lib.cnmem, cxx" in err  # device=gpu0 is known (it falls back)
    assert cfg.source("floatX") == f"{rc} [global] floatX"


def test_arignote_settings_shadow_theanos(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".theanorc").write_text("[global]\nfloatX = float32\n")
    env = {"HOME": str(tmp_path), "THEANO_FLAGS": "floatX=float32", "ARIGNOTE_FLAGS": ""}
    assert Config(env).floatX == "float64"
    (tmp_path / ".arignoterc").write_text("[global]\noptimizer = fast_compile\n")
    cfg = Config({"HOME": str(tmp_path), "THEANO_FLAGS": "floatX=float32"})
    assert cfg.floatX == "float64" and cfg.optimizer == "fast_compile"
    assert capsys.readouterr().err == ""
    assert Config({"HOME": str(tmp_path / "none")}).floatX == "float64"  # nothing at all
