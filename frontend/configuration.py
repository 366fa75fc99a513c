"""`arignote.config`: validated configuration flags (Theano's `theano.config`).

Each flag (`Flag`) has a default, a description and a validator; `FLAGS` holds them all,
keyed by their canonical name. A dotted name (`profiling.n_apply`) is also spelled with a
double underscore (`profiling__n_apply`) and read as a nested attribute
(`config.profiling.n_apply`).

Values come from, highest first:

1. assignment in code: `arignote.config.floatX = "float32"` (or, for a block,
   `with arignote.config.change_flags(floatX="float32"): ...`);
2. the environment variable `ARIGNOTE_FLAGS`: `name=value` pairs joined by commas;
3. the config files: those listed (colon separated) in the environment variable
   `ARIGNOTERC`, else `~/.arignoterc` and `~/.arignoterc.txt`; INI format, plain names in
   the `[global]` section, `profiling.n_apply` as `n_apply` in `[profiling]`;
4. the flag's default.

When none of ARIGNOTE_FLAGS, ARIGNOTERC and the arignote config files exists, a Theano
user's settings carry over: THEANO_FLAGS and THEANORC (else `~/.theanorc`,
`~/.theanorc.txt`) are read the same way; the flags arignote does not know, or whose
value it cannot take, are skipped, and one line on standard error says what was read
and skipped.

An unknown flag or a bad value raises `ValueError` listing the valid choices, for
ARIGNOTE_FLAGS and the config files when this module is imported.
See `print(arignote.config)` and docs/config.md.
"""

from __future__ import annotations

import configparser
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import ContextDecorator
from dataclasses import dataclass
from typing import Any

# --- value converters: each takes a value (a string from a flag or file, or a Python
# value from code) and returns the flag's value or raises ValueError/TypeError -----------

_TRUE = ("true", "1")
_FALSE = ("false", "0")


def to_bool(value: Any) -> bool:
    """True/False, 'True'/'False' (any case), 1/0 and '1'/'0'."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
    raise ValueError(value)


def to_count(value: Any) -> int:
    """An integer >= 0, or a string of one."""
    if isinstance(value, bool):
        raise ValueError(value)
    if isinstance(value, str):
        value = int(value.strip())
    if not isinstance(value, int) or value < 0:
        raise ValueError(value)
    return int(value)


def to_choice(value: Any) -> str:
    """A string (None is 'None'); the flag's choices then decide."""
    if value is None:
        return "None"
    if not isinstance(value, str):
        raise ValueError(value)
    return value.strip()


def to_text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(value)
    return value.strip()


def to_path(value: Any) -> str:
    """A non-empty directory path; `~` is expanded."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(value)
    return os.path.expanduser(value.strip())


_DEVICE = re.compile(r"cpu|cuda\d*|gpu\d*")


def to_device(value: Any) -> str:
    text = to_choice(value)
    if not _DEVICE.fullmatch(text):
        raise ValueError(value)
    return text


@dataclass(frozen=True)
class Flag:
    """One configuration property.

    `convert` turns a string or Python value into the flag's value (ValueError or
    TypeError when it cannot); then, when `choices` is given, the value must be one of
    them. `expected` describes the valid values in error messages (by default, the
    choices).
    """

    name: str
    default: Any
    doc: str
    choices: tuple[Any, ...] | None = None
    convert: Callable[[Any], Any] = to_choice
    expected: str | None = None
    bug_fixed_in: str | None = None
    """For a `warn.*` flag about a bug of old Theano versions: the version that fixed
    it. Its default is then `warn_default(bug_fixed_in)` (from `warn.ignore_bug_before`)."""

    @property
    def alias(self) -> str:
        """The double-underscore spelling of a dotted name (`profiling__n_apply`)."""
        return self.name.replace(".", "__")

    @property
    def valid(self) -> str:
        if self.expected is not None:
            return self.expected
        return ", ".join(map(repr, self.choices or ()))

    def validate(self, value: Any) -> Any:
        """The flag's value for `value`; ValueError listing the valid choices if bad."""
        try:
            converted = self.convert(value)
        except (ValueError, TypeError):
            converted = _INVALID
        if converted is _INVALID or (self.choices is not None and converted not in self.choices):
            raise ValueError(
                f"config.{self.name}: invalid value {value!r}; valid choices: {self.valid}"
            )
        return converted


_INVALID = object()
_BOOL = "True, False, 'True', 'False', '1', '0'"
_COUNT = "an integer >= 0"

MODES = ("FAST_RUN", "FAST_COMPILE", "Mode", "DebugMode", "DEBUG_MODE", "NanGuardMode")
"""The mode names `config.mode` accepts (`arignote.compile.mode` decides which run)."""

LINKERS = ("cvm", "cvm_nogc", "vm", "vm_nogc", "c|py", "c|py_nogc", "c", "py")
_LINKERS = LINKERS

OPTIMIZERS = ("fast_run", "fast_compile", "None")


BUG_VERSIONS = (
    "None", "all", "0.3", "0.4", "0.4.1", "0.5", "0.6", "0.7", "0.8", "0.8.1", "0.8.2",
    "0.9", "0.10", "1.0", "1.0.1", "1.0.2", "1.0.3", "1.0.4", "1.0.5",
)  # fmt: skip
"""The values of `warn.ignore_bug_before` (Theano's)."""

_IGNORE_BUG_BEFORE = "0.8"  # Theano 1.0's default


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def warn_default(version: str, ignore_bug_before: str = _IGNORE_BUG_BEFORE) -> bool:
    """Whether to warn about a bug of old Theano versions fixed in `version` (Theano's
    `warn_default`): yes unless `ignore_bug_before` is 'all' or that version or later.
    Versions compare numerically ('0.10' is after '0.9')."""
    if ignore_bug_before == "None":
        return True
    if ignore_bug_before == "all":
        return False
    return _version(ignore_bug_before) < _version(version)


def _bug_flag(name: str, fixed_in: str, doc: str) -> Flag:
    return Flag(
        f"warn.{name}",
        warn_default(fixed_in),
        doc + " Accepted for Theano's programs: arignote never had this bug, so it never warns.",
        convert=to_bool,
        expected=_BOOL,
        bug_fixed_in=fixed_in,
    )


def _warn_flags() -> tuple[Flag, ...]:
    """Theano's `warn.*` flags: warnings about bugs of old Theano versions (accepted,
    never raised: arignote has none of them) and `warn.round`."""
    return (
        Flag(
            "warn.ignore_bug_before",
            _IGNORE_BUG_BEFORE,
            "If 'None', warn about all the bugs of old Theano versions that a warn.* flag "
            "names; if 'all', about none; if a version, only about the bugs fixed after "
            "it. Sets the default of those flags (each can also be set on its own).",
            BUG_VERSIONS,
        ),
        _bug_flag(
            "argmax_pushdown_bug",
            "0.3",
            "Warn where Theano's local_argmax_pushdown optimization gave a wrong result "
            "(fixed 27 May 2010).",
        ),
        _bug_flag(
            "gpusum_01_011_0111_bug",
            "0.3",
            "Warn where Theano's GpuSum with pattern 01, 011 or 0111 and a first dimension "
            "over 4096 was silently wrong (fixed 31 May 2010).",
        ),
        _bug_flag(
            "sum_sum_bug",
            "0.3",
            "Warn where two consecutive sums generated bad code (fixed 2 August 2010).",
        ),
        _bug_flag(
            "sum_div_dimshuffle_bug",
            "0.3",
            "Warn where a sum of a division of dimshuffled tensors gave a wrong result "
            "(Theano between June and August 2010).",
        ),
        _bug_flag(
            "subtensor_merge_bug",
            "0.5",
            "Warn where indexing a subtensor of negative stride (x[a:b:-1][c]) could give "
            "a wrong result (before Theano 0.5rc2).",
        ),
        _bug_flag(
            "gpu_set_subtensor1",
            "0.6",
            "Warn where moving set_subtensor(x[int vector], new_value) to the GPU could "
            "give a wrong result (before Theano 0.6).",
        ),
        _bug_flag(
            "identify_1pexp_bug",
            "0.4.1",
            "Warn where Theano's is_1pexp could yield a wrong result (before 2011-12-18).",
        ),
        _bug_flag(
            "signal_conv2d_interface",
            "0.7",
            "Warn where the interface of signal.conv2d changed (mid June 2014).",
        ),
        _bug_flag(
            "reduce_join",
            "0.7",
            "Warn where reducing a Join along an axis other than 0 gave a wrong result "
            "(before Theano 0.7).",
        ),
        _bug_flag(
            "inc_set_subtensor1",
            "0.7",
            "Warn where inc_subtensor and set_subtensor with some advanced indexing "
            "patterns gave wrong results (before Theano 0.7).",
        ),
        Flag(
            "warn.vm_gc_bug",
            False,
            "Theano's flag about a bug of an unreleased development version (July 2012); "
            "accepted, never warns.",
            convert=to_bool,
            expected=_BOOL,
        ),
        Flag(
            "warn.round",
            warn_default("0.9"),
            "Warn when tensor.round is called without a mode: its default changed from "
            "'half_away_from_zero' to 'half_to_even', NumPy's (in Theano 0.9).",
            convert=to_bool,
            expected=_BOOL,
            bug_fixed_in="0.9",
        ),
    )


def _default_compiledir() -> str:
    return os.path.join(os.path.expanduser("~"), ".arignote", "compiledir")


def _default_openmp() -> bool:
    """Whether parallel loops pay by default: more than one thread and a thread pool
    on this platform."""
    from arignote.runtime.threadpool import available, default_threads

    return available() and default_threads() > 1


FLAGS: dict[str, Flag] = {
    f.name: f
    for f in (
        Flag(
            "floatX",
            "float64",
            "The dtype of float variables and constants created without a dtype, and of "
            "the true division of integers.",
            ("float64", "float32"),
        ),
        Flag(
            "device",
            "cpu",
            "Where compiled functions run: 'cpu' (native code through LLVM), or an NVIDIA "
            "GPU: 'cuda' / 'cuda<N>' (Theano's older 'gpu' / 'gpu<N>' too), through PTX "
            "run by pycuda (the gpu extra). Where the GPU cannot be used, function() and "
            "shared() warn and run on the CPU, or raise with force_device "
            "(arignote.compile.device).",
            convert=to_device,
            expected="'cpu', 'cuda', 'cuda<N>' (e.g. 'cuda0'), 'gpu', 'gpu<N>'",
        ),
        Flag(
            "warn_transfers",
            False,
            "On a GPU (device=cuda): warn (TransferWarning) at each copy a compiled "
            "function makes between host and GPU: a NumPy input copied to the device, an "
            "output copied back (keep data on the device with shared variables, device "
            "arrays as inputs, return_device=True or transfer('gpu')).",
            convert=to_bool,
            expected=_BOOL,
        ),
        Flag(
            "force_device",
            False,
            "When the device cannot be used: False falls back to the CPU with a warning "
            "naming what is missing (as Theano does), True raises an error.",
            convert=to_bool,
            expected=_BOOL,
        ),
        Flag(
            "mode",
            "FAST_RUN",
            "The default compile mode of arignote.function (a name; see "
            "arignote.compile.mode for the modes that run).",
            MODES,
        ),
        Flag(
            "linker",
            "cvm",
            "How compiled graphs execute: 'py' runs the reference interpreter, the others "
            "native code; 'c' refuses a graph with an op that has no native lowering, the "
            "others then run the whole function on the interpreter (with a warning); the "
            "'_nogc' variants are accepted and change nothing.",
            LINKERS,
        ),
        Flag(
            "optimizer",
            "fast_run",
            "The graph rewrite pipeline: 'fast_run' (all rewrites), 'fast_compile' (few, "
            "cheap rewrites) or 'None' (no rewrites).",
            OPTIMIZERS,
        ),
        Flag(
            "optimizer_including",
            "",
            "Rewrite tags to add to the optimizer, separated by ':' (e.g. 'fusion:inplace').",
            convert=to_text,
            expected="a string of rewrite tags separated by ':'",
        ),
        Flag(
            "optimizer_excluding",
            "",
            "Rewrite tags to remove from the optimizer, separated by ':' (e.g. 'fusion:inplace').",
            convert=to_text,
            expected="a string of rewrite tags separated by ':'",
        ),
        Flag(
            "profile",
            False,
            "Profile every compiled function; the profiles are printed at process exit.",
            convert=to_bool,
            expected=_BOOL,
        ),
        Flag(
            "profile_memory",
            False,
            "With profile, also report the peak memory of intermediates per function and per node.",
            convert=to_bool,
            expected=_BOOL,
        ),
        Flag(
            "compile_progress",
            True,
            "Show a one-line progress display on stderr while a native compile runs "
            "longer than 2 s (only when stderr is a terminal).",
            convert=to_bool,
            expected=_BOOL,
        ),
        Flag(
            "profile_optimizer",
            False,
            "With profile, also report the time spent in each graph rewrite.",
            convert=to_bool,
            expected=_BOOL,
        ),
        Flag(
            "profiling.n_apply",
            20,
            "Number of Apply nodes listed in a profile (the rest are summed up).",
            convert=to_count,
            expected=_COUNT,
        ),
        Flag(
            "profiling.n_ops",
            20,
            "Number of Ops listed in a profile (the rest are summed up).",
            convert=to_count,
            expected=_COUNT,
        ),
        Flag(
            "profiling.min_memory_size",
            1024,
            "In the memory profile, nodes whose outputs take fewer bytes than this are not listed.",
            convert=to_count,
            expected=_COUNT,
        ),
        Flag(
            "compiledir",
            _default_compiledir(),
            "The directory where compiled code is cached ('~' is expanded); see compile_cache.",
            convert=to_path,
            expected="a non-empty directory path",
        ),
        Flag(
            "compile_cache",
            True,
            "Keep the native code of compiled functions on disk in compiledir, keyed by "
            "the graph, the flags that change code, the versions and the host CPU: a "
            "function compiled before (in any process) loads without being compiled.",
            convert=to_bool,
            expected=_BOOL,
        ),
        Flag(
            "compile_cache_max_mb",
            256,
            "The most disk space (MiB) the compile cache takes; beyond it the least "
            "recently used entries are deleted.",
            convert=to_count,
            expected=_COUNT,
        ),
        Flag(
            "compile_cache_verbose",
            False,
            "Print a line to stderr for each compile cache hit, miss, store and deletion "
            "(they are also logged on the 'arignote.cache' logger at DEBUG level).",
            convert=to_bool,
            expected=_BOOL,
        ),
        Flag(
            "check_ir",
            False,
            "Verify the IR again after the graph pipeline, so that a pass that leaves an "
            "invalid op is caught at that op (the emitted IR and the final LLVM-dialect "
            "module are always verified); the test suite turns it on.",
            convert=to_bool,
            expected=_BOOL,
        ),
        Flag(
            "exception_verbosity",
            "low",
            "How much an error raised for a graph tells: 'low' a short message, 'high' "
            "also the shapes and dtypes of the values involved.",
            ("low", "high"),
        ),
        Flag(
            "malloc_tuning",
            False,
            "Set glibc's malloc thresholds (mmap 32 MiB, trim 128 MiB) when the first "
            "function is compiled natively, so that the temporaries native code frees "
            "at each call are not returned to the system and page-faulted in again at "
            "the next (arignote.runtime.malloc_tuning); process-wide (NumPy and every "
            "other library see it), so off by default; left alone when the environment "
            "sets MALLOC_*_ or GLIBC_TUNABLES.",
            convert=to_bool,
            expected=_BOOL,
        ),
        Flag(
            "allow_gc",
            True,
            "Theano's flag, accepted and without effect: a compiled function allocates its "
            "intermediates at each call and frees them before it returns.",
            convert=to_bool,
            expected=_BOOL,
        ),
        Flag(
            "openmp",
            _default_openmp(),
            "Run large loops of native code on several threads (arignote's own thread "
            "pool; OMP_NUM_THREADS, else the usable cores, sets how many): elementwise "
            "loops and the row loop of gemv_pair. False compiles serial "
            "code. The default is True when more than one thread is available.",
            convert=to_bool,
            expected=_BOOL,
        ),
        Flag(
            "openmp_elemwise_minsize",
            200000,
            "With openmp, the least work for which a loop is split across threads: "
            "elements times the elementwise ops computed per element (a single "
            "elementwise op splits from this many elements).",
            convert=to_count,
            expected=_COUNT,
        ),
        Flag(
            "glue_o0_minsize",
            3000,
            "The size (LLVM instructions) from which the glue of a native function (its "
            "shape arithmetic, allocations and kernel calls; not its loops, which are "
            "kernels compiled at O3) is compiled without optimisation: a deep network "
            "then compiles much faster (a 64-layer MLP: 4.1 -> 2.8 s) and its calls take a "
            "little longer (that MLP's step: 1-8 % on 8 x 64 batches). A huge value: "
            "everything at O3.",
            convert=to_count,
            expected=_COUNT,
        ),
        Flag(
            "compute_test_value",
            "off",
            "Compute the value of each expression when it is built, from the test values "
            "of its inputs (x.tag.test_value), to catch errors such as shape mismatches "
            "at the line that builds the expression: 'off' (no), 'ignore' (inputs without "
            "a test value and failures are skipped), 'warn' (they warn), 'raise' (they "
            "raise).",
            ("off", "ignore", "warn", "raise"),
        ),
        Flag(
            "print_test_value",
            False,
            "repr() of a variable with a test value (x.tag.test_value) shows the value "
            "on the line after its name, as Theano's.",
            convert=to_bool,
            expected=_BOOL,
        ),
        *_warn_flags(),
    )
}


def flag_named(name: str) -> Flag | None:
    """The flag called `name` (dotted or with double underscores), or None."""
    flag = FLAGS.get(name)
    if flag is None and "__" in name:
        flag = FLAGS.get(name.replace("__", "."))
    return flag


def _unknown(name: str) -> ValueError:
    known = ", ".join(sorted(FLAGS, key=str.lower))
    return ValueError(f"unknown config flag {name!r}; known flags: {known}")


class _Section:
    """`config.profiling`: the flags whose names start with `profiling.`."""

    def __init__(self, config: Config, prefix: str):
        object.__setattr__(self, "_config", config)
        object.__setattr__(self, "_prefix", prefix)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._config, f"{self._prefix}.{name}")

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._config, f"{self._prefix}.{name}", value)

    def __dir__(self) -> list[str]:
        start = self._prefix + "."
        return sorted({n[len(start) :].split(".")[0] for n in FLAGS if n.startswith(start)})

    def __repr__(self) -> str:
        start = self._prefix + "."
        items = (
            f"{n[len(start) :]}={getattr(self._config, n)!r}" for n in FLAGS if n.startswith(start)
        )
        return f"<config.{self._prefix}: {', '.join(items)}>"


def _is_section(prefix: str) -> bool:
    start = prefix + "."
    return any(n.startswith(start) for n in FLAGS)


_UNSET = object()


class Config:
    """The configuration flags (see `print(arignote.config)` and docs/config.md).

    `environ` (default `os.environ`) provides ARIGNOTE_FLAGS, ARIGNOTERC and HOME.
    """

    def __init__(self, environ: Mapping[str, str] | None = None):
        env = os.environ if environ is None else environ
        object.__setattr__(self, "_assigned", {})  # name -> value set in code
        object.__setattr__(self, "_sources", {})  # name -> where its value came from
        for name, flag in FLAGS.items():
            object.__setattr__(self, name, flag.default)
        own_files = [path for path in config_files(env) if os.path.isfile(path)]
        if own_files or "ARIGNOTE_FLAGS" in env or "ARIGNOTERC" in env:
            for path, name, value in read_config_files(own_files):
                self._load(name, value, path)
            for name, value in parse_flags(env.get("ARIGNOTE_FLAGS", "")).items():
                self._load(name, value, "ARIGNOTE_FLAGS")
        else:
            self._load_theano_settings(env)
        self._derive_bug_warnings()

    def _load_theano_settings(self, env: Mapping[str, str]) -> None:
        """A Theano user's settings when arignote has none of its own: THEANORC's files
        (else ~/.theanorc, ~/.theanorc.txt), then THEANO_FLAGS. The flags arignote knows
        apply; the others (and values it cannot take) are skipped. One line on standard
        error says so."""
        files = [path for path in theano_config_files(env) if os.path.isfile(path)]
        settings = read_config_files(files)
        flags = env.get("THEANO_FLAGS", "")
        settings += [("THEANO_FLAGS", name, value) for name, value in parse_flags(flags).items()]
        if not settings:
            return
        skipped = []
        for source, name, value in settings:
            try:
                self._load(name, value, source)
            except ValueError:
                skipped.append(name)
        used = " and ".join([*files, *(["THEANO_FLAGS"] if flags else [])])
        note = f"; skipped: {', '.join(skipped)}" if skipped else ""
        sys.stderr.write(f"arignote: no ARIGNOTE_FLAGS or ~/.arignoterc, using {used}{note}\n")

    def _derive_bug_warnings(self) -> None:
        """The defaults of the `warn.*` bug flags not set in a file or ARIGNOTE_FLAGS,
        from the `warn.ignore_bug_before` loaded (Theano derives them at import too)."""
        ignore = self.__dict__["warn.ignore_bug_before"]
        for name, flag in FLAGS.items():
            if flag.bug_fixed_in is not None and name not in self._sources:
                object.__setattr__(self, name, warn_default(flag.bug_fixed_in, ignore))

    def _load(self, name: str, value: str, source: str) -> None:
        flag = flag_named(name)
        if flag is None:
            raise ValueError(f"{source}: {_unknown(name)}")
        try:
            object.__setattr__(self, flag.name, flag.validate(value))
        except ValueError as e:
            raise ValueError(f"{source}: {e}") from None
        self._sources[flag.name] = source

    # Current values live in the instance __dict__ under their canonical names, so that
    # reading a plain flag (`config.compute_test_value`) is an ordinary attribute lookup;
    # __getattr__ only handles aliases, sections and flags added to FLAGS later.

    def __getattr__(self, name: str) -> Any:
        flag = flag_named(name)
        if flag is not None:
            return self.__dict__.get(flag.name, flag.default)
        if not name.startswith("__") and _is_section(name):
            return _Section(self, name)
        raise AttributeError(f"arignote.config has no flag {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        flag = flag_named(name)
        if flag is None:
            if _is_section(name):
                raise ValueError(f"config.{name} is a group of flags, not a flag")
            raise _unknown(name)
        value = flag.validate(value)
        object.__setattr__(self, flag.name, value)
        self._assigned[flag.name] = value
        self._sources[flag.name] = "code"

    def __delattr__(self, name: str) -> None:
        raise AttributeError("config flags cannot be deleted")

    def __dir__(self) -> list[str]:
        names = {n for n in FLAGS if "." not in n} | {n.split(".")[0] for n in FLAGS}
        names |= {f.alias for f in FLAGS.values()}
        return sorted(names | set(type(self).__dict__))

    def __iter__(self) -> Iterator[str]:
        """The canonical flag names."""
        return iter(FLAGS)

    def source(self, name: str) -> str:
        """Where a flag's value came from: 'default', 'code', 'ARIGNOTE_FLAGS' or a
        config file's path."""
        flag = flag_named(name)
        if flag is None:
            raise _unknown(name)
        return self._sources.get(flag.name, "default")

    def change_flags(self, *args: Mapping[str, Any], **kwargs: Any) -> change_flags:
        """A context manager (and decorator) that sets flags and restores them on exit,
        even when an exception leaves the block:

            with arignote.config.change_flags(floatX="float32", profiling__n_apply=5):
                ...
        """
        return change_flags(*args, config=self, **kwargs)

    def __str__(self) -> str:
        lines = []
        for flag in FLAGS.values():
            alias = f"; also {flag.alias}" if flag.alias != flag.name else ""
            lines.append(f"{flag.name} ({flag.valid}{alias})")
            lines.append(f"    Doc:  {flag.doc}")
            lines.append(f"    Value:  {getattr(self, flag.name)}")
            source = self._sources.get(flag.name, "default")
            if source != "default":
                lines.append(f"    Source:  {source}")
            lines.append("")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return "<arignote.config: print it to list the flags>"


class change_flags(ContextDecorator):  # noqa: N801 - Theano's name
    """Set flags for a block (or a decorated function) and restore them on exit, even
    when an exception leaves it. Names may be dotted (pass a dict) or use double
    underscores:

        with change_flags(floatX="float32"): ...
        with change_flags({"profiling.n_apply": 5}): ...
    """

    def __init__(self, *args: Mapping[str, Any], config: Config | None = None, **kwargs: Any):
        changes: dict[str, Any] = {}
        for mapping in args:
            changes.update(mapping)
        changes.update(kwargs)
        self._config = config
        self._changes: dict[str, Any] = {}
        for name, value in changes.items():
            flag = flag_named(name)
            if flag is None:
                raise _unknown(name)
            self._changes[flag.name] = value
        self._saved: list[list[tuple[str, Any, Any, Any]]] = []

    @property
    def config(self) -> Config:
        return self._config if self._config is not None else globals()["config"]

    def __enter__(self) -> change_flags:
        cfg = self.config
        saved = [
            (
                name,
                getattr(cfg, name),
                cfg._assigned.get(name, _UNSET),
                cfg._sources.get(name, _UNSET),
            )
            for name in self._changes
        ]
        self._saved.append(saved)
        try:
            for name, value in self._changes.items():
                setattr(cfg, name, value)
        except BaseException:
            self._restore()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._restore()

    def _restore(self) -> None:
        cfg = self.config
        for name, value, assigned, source in reversed(self._saved.pop()):
            object.__setattr__(cfg, name, value)
            for store, old in ((cfg._assigned, assigned), (cfg._sources, source)):
                if old is _UNSET:
                    store.pop(name, None)
                else:
                    store[name] = old


# --- sources -------------------------------------------------------------------------


def parse_flags(text: str) -> dict[str, str]:
    """`name=value,name=value` pairs (ARIGNOTE_FLAGS); a malformed pair is a `ValueError`."""
    result = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"ARIGNOTE_FLAGS: expected name=value, got {item!r}")
        result[name.strip()] = value.strip()
    return result


def _expand_home(path: str, env: Mapping[str, str]) -> str:
    if path.startswith("~") and env.get("HOME"):
        return env["HOME"] + path[1:]
    return os.path.expanduser(path)


def config_files(env: Mapping[str, str] | None = None) -> list[str]:
    """The config files to read, lowest precedence first: those listed (colon
    separated) in ARIGNOTERC, else ~/.arignoterc and ~/.arignoterc.txt."""
    env = os.environ if env is None else env
    listed = env.get("ARIGNOTERC")
    names = ["~/.arignoterc", "~/.arignoterc.txt"] if listed is None else listed.split(os.pathsep)
    return [_expand_home(n.strip(), env) for n in names if n.strip()]


def theano_config_files(env: Mapping[str, str] | None = None) -> list[str]:
    """Theano's config files: those listed in THEANORC, else ~/.theanorc and
    ~/.theanorc.txt (read only when arignote has no settings of its own)."""
    env = os.environ if env is None else env
    listed = env.get("THEANORC")
    names = ["~/.theanorc", "~/.theanorc.txt"] if listed is None else listed.split(os.pathsep)
    return [_expand_home(n.strip(), env) for n in names if n.strip()]


def read_config_files(paths: Iterable[str]) -> list[tuple[str, str, str]]:
    """The (path, flag name, value) settings of the INI files `paths` (missing files are
    skipped); a `[global]` option is a plain name, an option `o` of section `s` is `s.o`."""
    settings = []
    for path in paths:
        if not os.path.isfile(path):
            continue
        parser = configparser.ConfigParser(
            interpolation=None, default_section="\x00", inline_comment_prefixes=("#", ";")
        )
        parser.optionxform = str  # type: ignore[assignment, method-assign]  # floatX
        try:
            parser.read(path, encoding="utf-8")
        except configparser.Error as e:
            raise ValueError(f"{path}: not a valid config file: {e}") from None
        for section in parser.sections():
            for option, value in parser.items(section, raw=True):
                name = option if section == "global" else f"{section}.{option}"
                settings.append((f"{path} [{section}] {option}", name, value))
    return settings


config = Config()
"""The process's configuration."""
