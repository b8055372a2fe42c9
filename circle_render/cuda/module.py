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

import re
from collections.abc import Callable, Iterable
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from circle_render.constants import compile_defines

KERNEL_DIR = Path(str(resources.files("circle_render") / "kernels"))
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"([^"]+)"[ \t]*$', re.M)   # one line, no more
# exact float32 rounding (no fused multiply-add) so kernels match the NumPy reference bit for bit
BASE_OPTIONS = ("--std=c++17", "--fmad=false")
_modules: dict[tuple, Any] = {}      # (device, name, options[, source]) -> cupy.RawModule


def kernel_source(name: str | Path) -> str:
    """The text of kernels/NAME (or of the file NAME, a path: a student's kernel) with each
    ``#include "x.cuh"`` replaced by the header's text (each header once, ``#pragma once``
    dropped), so CuPy's cache key covers the headers. Headers are looked up beside the file,
    then in kernels/."""
    first = Path(name) if is_kernel_file(name) else KERNEL_DIR / name
    folders = (first.parent, KERNEL_DIR)
    done: set[str] = set()

    def find(header: str) -> Path:
        for folder in folders:
            if (folder / header).is_file():
                return folder / header
        raise FileNotFoundError(f"#include \"{header}\": no such header in {', '.join(map(str, folders))}")

    def expand(path: Path, stack: tuple[str, ...]) -> str:
        if path.name in stack:
            raise ValueError(f"include cycle: {' -> '.join((*stack, path.name))}")
        text = re.sub(r"^[ \t]*#[ \t]*pragma[ \t]+once[ \t]*$", "", path.read_text(), flags=re.M)

        def inline(m: re.Match[str]) -> str:
            header = m.group(1)
            if header in done:
                return f"// ---- {header} (already included) ----"
            done.add(header)
            after = text.count("\n", 0, m.start()) + 2          # the line after the #include
            # #line: the compiler's messages give each file's own line numbers, not the pasted text's
            return (f'#line 1 "{header}"\n{expand(find(header), (*stack, path.name))}\n'
                    f'#line {after} "{path.name}"')
        return _INCLUDE.sub(inline, text)
    return expand(first, ())


def _macro(value: float | np.floating | np.integer) -> str:
    """A constant as CUDA source text. Floats get an f suffix (float32, not double) and enough
    digits that the compiler reads back the same float32 the host uses."""
    if isinstance(value, (float, np.floating)):
        return f"{float(value)!r}f"
    return str(int(value))


Defines = dict[str, Any]     # -D macros: name -> int, float (or, a student's, text)


def compile_options(extra: Defines | None = None) -> tuple[str, ...]:
    defines = compile_defines(extra)
    return BASE_OPTIONS + tuple(f"-D{k}={_macro(v)}" for k, v in sorted(defines.items()))


# A kernel file outside kernels/ (a student's) sees only the shading constants that
# helpers.cuh needs, prefixed CR_: no project macro (TILE_SIZE, DT, ...) meets the student's own.
STUDENT_DEFINES = ("PIXEL_CENTRE", "FLAT_ALPHA", "SNOW_MAX_ALPHA", "SNOW_ALPHA_BASE", "SNOW_ALPHA_DEPTH",
                   "SNOW_FALLOFF", "SNOW_RAMP_LAST")


def student_compile_options(extra: Defines | None = None) -> tuple[str, ...]:
    """The options of a student's kernel file: BASE_OPTIONS, the CR_ constants, then ``extra``
    (the student's own -D macros, unprefixed)."""
    ours = {f"CR_{k}": v for k, v in compile_defines().items() if k in STUDENT_DEFINES or k.startswith("SNOW_RAMP_")}
    return (BASE_OPTIONS + tuple(f"-D{k}={_macro(v)}" for k, v in sorted(ours.items()))
            + tuple(f"-D{k}={v if isinstance(v, str) else _macro(v)}" for k, v in sorted((extra or {}).items())))


def is_kernel_file(name: str | Path) -> bool:
    """A path (a student's kernel), not the name of one of kernels/."""
    return isinstance(name, Path) or "/" in str(name)


def load_module(name: str | Path, extra: Defines | None = None, fmad: bool = False, project: bool = False) -> Any:
    """The compiled ``cupy.RawModule`` for kernels/NAME, or for the .cu file at path NAME, on
    the current device (cached; a file is compiled again when its text or a header changes).
    A file gets student_compile_options(extra), or with project=True the options of kernels/
    (every constant, unprefixed: the project's own kernels kept outside the package, such as
    benchmarks/ladder/). fmad=True lets the compiler fuse multiply-adds (faster, no longer
    bit-exact)."""
    import cupy
    is_file = is_kernel_file(name)
    options = student_compile_options(extra) if is_file and not project else compile_options(extra)
    if fmad:
        options = tuple(o for o in options if o != "--fmad=false")
    key = (cupy.cuda.Device().id, str(name), options) + ((kernel_source(name),) if is_file else ())
    if key not in _modules:     # the source (headers inlined) is read only when compiling
        _modules[key] = cupy.RawModule(code=key[-1] if is_file else kernel_source(name), options=options)
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


def kernel_parameters(file: str) -> dict[str, list[str]]:
    """Each ``extern "C"`` kernel of kernels/FILE and its parameters' names, in order."""
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
