"""Loading kernels/*.cu with CuPy, and launching them.

Sources: headers are inlined (so they are part of what CuPy hashes for its cache), constants
are passed as -D options (circle_render/constants.py), one compiled module per (device, file,
options). Launches: a ``Launch`` binds a kernel to its grid, block and arguments; a ``Graph``
captures launches once through CuPy's stream capture and replays them with one graph launch;
a ``KernelFile`` launches a file's kernels with named arguments, checked against the kernels'
parameters, and records each launch under its stage (the fast renderer's paths).
Everything goes through CuPy's own API (benchmarks/launch_overhead.py measured the driver
called through ctypes against it: docs/perf-notes.md).
"""
from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from circle_render.constants import compile_defines
from circle_render.cuda.nvrtc import option_name, student_module

KERNEL_DIR = Path(str(resources.files("circle_render") / "kernels"))
# exact float32 rounding (no fused multiply-add) so the project's kernels match the NumPy
# reference bit for bit; a student's file compiles as the course compiles (STUDENT_OPTIONS)
BASE_OPTIONS = ("--std=c++17", "--fmad=false")
_modules: dict[tuple[Any, ...], Any] = {}      # (device, name, options, a file's source) -> cupy.RawModule

# The course's own headers: a port includes course_compat.cuh instead (docs/assignment.md, section 7).
COURSE_HEADERS = ("exclusiveScan.cu_inl", "circleBoxTest.cu_inl", "lookupColor.cu_inl", "noiseCuda.cu_inl")


def read_source(path: Path) -> str:
    """A source file's text as the compiler reads its bytes: UTF-8, a byte that is not UTF-8
    replaced (U+FFFD; the compiler accepts it where it accepts any byte: comments, strings),
    a leading byte-order mark dropped (inlined mid-file it would be a stray character)."""
    return path.read_bytes().decode("utf-8", errors="replace").removeprefix("\ufeff")


def _blank_comments(text: str) -> str:
    """``text`` with every comment turned to spaces (newlines kept), the same length: offsets
    and line numbers stay those of ``text``. String and character literals are kept whole (a
    ``//`` or ``/*`` inside one is no comment); a backslash-newline continues a ``//`` comment."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":                                   # a literal: skip to its closing quote
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        elif text.startswith("//", i):
            j = i
            while j < n and (text[j] != "\n" or text[j - 1] == "\\" or text[j - 2:j] == "\\\r"):
                j += 1
            out[i:j] = [" " if ch not in "\r\n" else ch for ch in text[i:j]]
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out[i:j] = [" " if ch not in "\r\n" else ch for ch in text[i:j]]
            i = j
        else:
            i += 1
    return "".join(out)


# A directive's logical line, comments blanked: `#`, `include`, then "name" or <name>, with any
# spaces, tabs and backslash-newlines between (the preprocessor joins those lines first).
_GAP = r"(?:[ \t\f\v]|\\\r?\n)*"
_INCLUDE = re.compile(rf"^{_GAP}#{_GAP}include{_GAP}(?:\"([^\"\n]+)\"|<([^>\n]+)>){_GAP}\r?$", re.MULTILINE)
_PRAGMA_ONCE = re.compile(rf"^{_GAP}#{_GAP}pragma{_GAP}once{_GAP}\r?$", re.MULTILINE)


def _line_name(path: Path) -> str:
    return str(path.name).replace("\\", "\\\\").replace('"', '\\"')


def kernel_source(name: str | Path) -> str:
    """The text of kernels/NAME (or of the file NAME, a path: a student's kernel) with every
    ``#include`` of a header we have replaced by the header's text, so that CuPy's cache key
    covers the headers and the source compiles the same from any folder. Every form the
    preprocessor accepts is recognised: ``"x.cuh"`` or ``<x.cuh>``, spaces after ``#``, comments
    after it, a line split with backslashes; one inside a comment is not an include. A quoted
    name is looked up beside the file that includes it, then in kernels/; an angled one in
    kernels/ (the include path). Headers with ``#pragma once`` are pasted once, others at each
    include (their guards decide); one that includes itself again is skipped there, as its guard
    would. ``#line`` keeps the compiler's messages on each file's own line numbers. An include
    of a header we do not have is left for the compiler, which says it cannot open it."""
    first = Path(name) if is_kernel_file(name) else KERNEL_DIR / name
    once: set[Path] = set()

    def find(header: str, quoted: bool, here: Path) -> Path | None:
        for folder in ((here.parent, KERNEL_DIR) if quoted else (KERNEL_DIR,)):
            if (folder / header).is_file():
                return (folder / header).resolve()
        return None

    def expand(path: Path, stack: tuple[Path, ...]) -> str:
        text = read_source(path)
        blank = _blank_comments(text)
        if _PRAGMA_ONCE.search(blank):
            once.add(path)
        pieces, at = [], 0
        for m in _INCLUDE.finditer(blank):
            header = m.group(1) or m.group(2)
            found = find(header, m.group(1) is not None, path)
            if found is None:
                continue                                 # the compiler's to report
            pieces.append(text[at:m.start()])
            at = m.end() - (1 if blank[m.end() - 1:m.end()] == "\r" else 0)
            after = text.count("\n", 0, m.end()) + 2    # the line after the directive's last line
            if found in stack or found in once:
                pieces.append(f"// ---- {header} (already included) ----")
                continue
            pieces.append(f'#line 1 "{_line_name(found)}"\n{expand(found, (*stack, found))}\n'
                          f'#line {after} "{_line_name(path)}"')
        pieces.append(text[at:])
        return _PRAGMA_ONCE.sub("", "".join(pieces)) if path in once else "".join(pieces)
    top = first.resolve()
    return expand(top, (top,))


def _macro(value: float | np.floating | np.integer) -> str:
    """A constant as CUDA source text. Floats get an f suffix (float32, not double) and enough
    digits that the compiler reads back the same float32 the host uses."""
    if isinstance(value, (float, np.floating)):
        return f"{float(value)!r}f"
    return str(int(value))


Defines = dict[str, Any]     # -D macros: name -> int, float (or, a student's, text)


def compile_options(extra: Defines | None = None) -> tuple[str, ...]:
    return _compile_options(tuple(sorted((extra or {}).items())))


@functools.cache
def _compile_options(extra: tuple[tuple[str, Any], ...]) -> tuple[str, ...]:
    """compile_options, made once per set of defines (about 50 us each time: every renderer's
    load asks for them to find its compiled modules)."""
    defines = compile_defines(dict(extra))
    return BASE_OPTIONS + tuple(f"-D{k}={_macro(v)}" for k, v in sorted(defines.items()))


# A kernel file outside kernels/ (a student's) sees only the shading constants that
# helpers.cuh needs, prefixed CR_: no project macro (TILE_SIZE, DT, ...) meets the student's own.
STUDENT_DEFINES = ("PIXEL_CENTRE", "FLAT_ALPHA", "SNOW_MAX_ALPHA", "SNOW_ALPHA_BASE", "SNOW_ALPHA_DEPTH",
                   "SNOW_FALLOFF", "SNOW_RAMP_LAST")
# ... and compiles as the course compiles it: nvcc's defaults, multiply-adds fused (the course's
# Makefile passes nvcc only -O3 -m64), denormals kept (no -ftz). NVRTC compiles no host code, so
# a function without __device__ is compiled for the GPU (--device-as-default-execution-space, as
# CuPy does): a host helper nvcc would accept beside the kernels compiles here too. The student's
# own options come last and replace a default of the same name: ("--fmad=false",) turns fusing off.
STUDENT_OPTIONS = ("--std=c++17", "--fmad=true", "--device-as-default-execution-space")


def check_options(options: Sequence[str] | str) -> tuple[str, ...]:
    """A student's compiler options: a tuple (or list) of strings each starting with '-'."""
    if isinstance(options, str) or not all(isinstance(o, str) and o.startswith("-") and o.strip() == o and o
                                           for o in options):
        raise ValueError(f"compile options must be a tuple of strings such as ('--fmad=false',), got {options!r}")
    return tuple(options)


def student_compile_options(extra: Defines | None = None, options: Sequence[str] = ()) -> tuple[str, ...]:
    """The options of a student's kernel file: STUDENT_OPTIONS (less those ``options`` names
    again), the CR_ constants, ``extra`` (the student's own -D macros, unprefixed), then
    ``options`` (the student's own compiler options, e.g. ('--fmad=false', '-lineinfo'))."""
    own = check_options(options)
    for k, v in (extra or {}).items():
        if not isinstance(v, (str, int, float, np.integer, np.floating)):
            raise ValueError(f"defines must give each macro a number or text, such as {{'TILE': 32}}, got {k}={v!r}")
    names = {option_name(o) for o in own}
    ours = {f"CR_{k}": v for k, v in compile_defines().items() if k in STUDENT_DEFINES or k.startswith("SNOW_RAMP_")}
    return (tuple(o for o in STUDENT_OPTIONS if option_name(o) not in names)
            + tuple(f"-D{k}={_macro(v)}" for k, v in sorted(ours.items()))
            + tuple(f"-D{k}={v if isinstance(v, str) else _macro(v)}" for k, v in sorted((extra or {}).items()))
            + own)


def is_kernel_file(name: str | Path) -> bool:
    """A path (a student's kernel), not the name of one of kernels/."""
    return isinstance(name, Path) or "/" in str(name)


def module_options(name: str | Path, extra: Defines | None = None, fmad: bool | None = None, project: bool = False,
                   options: Sequence[str] = ()) -> tuple[str, ...]:
    """The options load_module compiles NAME with (see there)."""
    if is_kernel_file(name) and not project:
        chosen = student_compile_options(extra, options)
    else:
        chosen = compile_options(extra) + check_options(options)
    if fmad is not None:
        chosen = (*(o for o in chosen if option_name(o) != "fmad"), f"--fmad={str(fmad).lower()}")
    return chosen


def load_module(name: str | Path, extra: Defines | None = None, fmad: bool | None = None, project: bool = False,
                options: Sequence[str] = ()) -> Any:
    """The compiled ``cupy.RawModule`` for kernels/NAME, or for the .cu file at path NAME, on
    the current device (cached; a file is compiled again when its text or a header changes).
    kernels/ files get compile_options(extra): every constant, multiply-adds not fused, so they
    round as the NumPy reference does. A file gets student_compile_options(extra, options), as
    the course compiles (fused), or with project=True the options of kernels/ (the project's own
    kernels kept outside the package, such as benchmarks/ladder/). fmad=True or False decides
    fusing whatever the kind (True: faster, no longer bit-exact). A student's file is compiled
    with its options exactly (cuda/nvrtc.py: CuPy would add -ftz=true); the others through CuPy."""
    import cupy
    is_file = is_kernel_file(name)
    chosen = module_options(name, extra, fmad, project, options)
    text = kernel_source(name) if is_file else None     # a file's text is part of its key
    key = (cupy.cuda.Device().id, str(name), chosen, text)
    if key not in _modules:     # kernels/ sources (headers inlined) are read only when compiling
        if text is not None and not project:    # as nvcc compiles it: no option of CuPy's own (nvrtc.py)
            _modules[key] = student_module(text, Path(name).name, chosen)
        else:
            _modules[key] = cupy.RawModule(code=text or kernel_source(name), options=chosen)
    return _modules[key]


def kernel_files() -> list[str]:
    """Every kernel source (not headers) in kernels/."""
    return sorted(p.name for p in KERNEL_DIR.glob("*.cu"))


_SCALARS = (np.int32, np.int64, np.uint64, np.float32)
Grid = tuple[int, ...]


def i32(value: int) -> np.int32:
    """A kernel's int argument (a Python int would reach it as 64 bits: see Launch)."""
    return np.int32(value)


class Launch:
    """One kernel launch: a CuPy RawKernel bound to its grid, block and arguments.

    Scalars must be NumPy-typed (CuPy would pass a Python int as 64 bits and a float as a
    double, whatever the kernel declares) and arrays C-contiguous; both are checked here, once.
    The arrays must stay in place as long as the launch (or a Graph holding it) is used.
    """

    def __init__(self, kernel: Any, grid: Iterable[int], block: Iterable[int], args: Iterable[Any],
                 shared_mem: int = 0):
        import cupy
        args = tuple(args)
        for a in args:
            if isinstance(a, cupy.ndarray):
                if not a.flags.c_contiguous:
                    raise ValueError("kernel array arguments must be C-contiguous")
            elif not isinstance(a, _SCALARS):
                raise TypeError(f"kernel scalars must be one of {[t.__name__ for t in _SCALARS]}, "
                                f"got {type(a).__name__}")
        self.kernel, self.grid, self.block = kernel, tuple(grid), tuple(block)
        self.args, self.shared_mem = args, shared_mem

    def __call__(self) -> None:
        self.kernel(self.grid, self.block, self.args, shared_mem=self.shared_mem)


class Graph:
    """Launches captured once, in order, into a CUDA graph (CuPy's stream capture), replayed
    with one graph launch on the stream that is current when it is built. A replay costs the
    host a few microseconds however many kernels it holds, where each kernel launched alone costs
    several (benchmarks/launch_overhead.py; docs/perf-notes.md, "Replay")."""

    def __init__(self, launches: Iterable[Launch]):
        self.launches = tuple(launches)
        self._capture(self._replay_launches)

    def _replay_launches(self) -> None:
        for launch in self.launches:
            launch()

    @classmethod
    def capture(cls, issue: Callable[[], object]) -> Graph:
        """The graph of the kernels that ``issue()`` launches (on the current stream)."""
        graph = cls.__new__(cls)
        graph.launches = ()
        graph._capture(issue)
        return graph

    def _capture(self, issue: Callable[[], object]) -> None:
        import cupy
        capture = cupy.cuda.Stream(non_blocking=True)   # the legacy stream cannot capture
        with capture:
            capture.begin_capture()
            try:
                issue()
            finally:
                graph = capture.end_capture()
        self._stream = cupy.cuda.get_current_stream()
        graph.upload(self._stream)
        self._graph = graph

    def __call__(self) -> None:
        self._graph.launch(self._stream)


def device_synchronize() -> None:
    """Wait for all work on the current device, as the course's timing does."""
    import cupy
    cupy.cuda.runtime.deviceSynchronize()


_KERNEL = re.compile(r'extern\s+"C"\s+__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s+)?(\w+)\s*\(([^)]*)\)')


@functools.cache
def kernel_parameters(file: str) -> dict[str, list[str]]:
    """Each ``extern "C"`` kernel of kernels/FILE and its parameters' names, in order (read once
    a process: reading the source, headers inlined, took 10-30 ms of every renderer's load)."""
    code = re.sub(r"//.*", "", kernel_source(file))
    return {name: [p.split()[-1].lstrip("*&") for p in params.split(",")] for name, params in _KERNEL.findall(code)}


Launches = list[tuple[str, Launch]]      # ("stage/kernel", launch), in the order made


class KernelFile:
    """One kernel file compiled with the given defines (fused multiply-adds allowed). ``launch``
    takes the arguments by name, checked against the kernel's parameters, launches the kernel
    and records the launch in ``launched`` under its stage (for graphs and probes)."""

    def __init__(self, file: str, defines: Defines, launched: Launches):
        self.file, self.module, self.params = file, load_module(file, defines, fmad=True), kernel_parameters(file)
        self._launched = launched

    def launch(self, stage: str, kernel: str, grid: Grid, block: Grid, shared_mem: int = 0, **args: Any) -> None:
        if list(args) != self.params[kernel]:
            raise TypeError(f"{self.file}:{kernel} takes ({', '.join(self.params[kernel])}), given ({', '.join(args)})")
        launch = Launch(self.module.get_function(kernel), grid, block, tuple(args.values()), shared_mem)
        launch()
        self._launched.append((f"{stage}/{kernel}", launch))
