"""A student's kernel file compiled as the course compiles it, through NVRTC, then loaded by CuPy.

CuPy's own compile (``cupy.RawModule(code=...)``) adds ``-ftz=true`` after the options it is
given (denormals flushed to zero; NVRTC takes the last of two ``-ftz``, so a student's
``-ftz=false`` never reaches the compiler). nvcc's default, the course's, keeps denormals. Here
the options go to NVRTC exactly as given (module.py ``student_compile_options``: nvcc's
defaults, with ``--device-as-default-execution-space`` as CuPy gives it, since NVRTC compiles
no host code), through CuPy's binding of it, to a cubin for the GPU's architecture: ptxas runs
at compile time, so its errors come with their log and its options (``--maxrregcount``,
``-Xptxas``) apply. One exception, measured on the H100 with NVRTC 13.0 (CuPy 14.2, driver
13.0): its cubins kept denormals under ``-ftz=true`` (the PTX had ``mul.ftz.f32``, and that PTX
loaded by the driver flushed), whatever else the options held; so a compile that asks for
flushing (``-ftz=true``, ``--use_fast_math``) is checked as a cubin (ptxas's errors) and loaded
as PTX, which the driver compiles for the GPU. Both are kept in the user's cache folder (keyed by
the source with its headers inlined, the options, the architecture and NVRTC's version) and
loaded with ``cupy.RawModule(path=...)``.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from circle_render.user_cache import cache_dir


class StudentCompileError(RuntimeError):
    """NVRTC refused a student's kernel file: the message is the compiler's log."""


def target_arch() -> str:
    """-arch=sm_XX for the current GPU: its compute capability, or the newest NVRTC knows."""
    import cupy
    from cupy_backends.cuda.libs import nvrtc
    cc = int(cupy.cuda.Device().compute_capability)
    known = [a for a in nvrtc.getSupportedArchs() if a <= cc]
    return f"-arch=sm_{max(known) if known else cc}"


def option_name(option: str) -> str:
    """'--fmad=false' and '-fmad=false' -> 'fmad'; '-lineinfo' -> 'lineinfo'."""
    return option.lstrip("-").split("=", 1)[0]


def flushes(options: Sequence[str]) -> bool:
    """Whether ``options`` ask for denormals flushed to zero: the last -ftz=true or -ftz=false
    decides (as NVRTC does, in whatever order --use_fast_math stands); without one, a bare
    --use_fast_math (which implies -ftz=true) flushes."""
    ftz = [o.partition("=")[2] for o in options if option_name(o) == "ftz"]
    if ftz:
        return ftz[-1] == "true"
    return any(o.lstrip("-") == "use_fast_math" for o in options)


PTXAS_OPTIONS = ("maxrregcount", "Xptxas", "ptxas-options")     # options NVRTC hands to ptxas only


def ptx_conflict(options: Sequence[str]) -> str | None:
    """Why ``options`` cannot all take effect on the GPU, or None: a compile that flushes
    denormals is loaded as PTX (above), and ptxas's options do not reach the driver's compile."""
    lost = []
    for i, o in enumerate(options):
        if option_name(o) in PTXAS_OPTIONS:
            lost.append(f"{o} {options[i + 1]}" if o.lstrip("-") == "Xptxas" and i + 1 < len(options) else o)
    if not lost or not flushes(options):
        return None
    bounds = any(option_name(o) == "maxrregcount" for o in options)
    return (f"{', '.join(lost)} cannot be combined with -ftz=true or --use_fast_math here: one NVRTC (13.0) "
            "drops -ftz=true from cubins, so such a file reaches the GPU as PTX, which ptxas's options do not "
            "reach; drop one of the two" + (" (__launch_bounds__ in the kernel limits registers on either path)"
                                            if bounds else ""))


def compile_cubin(source: str, name: str, options: Sequence[str], ptx: bool = False) -> bytes:
    """NVRTC's cubin (or, with ``ptx``, its PTX) for ``source`` (a file called ``name`` in its
    messages), ``options`` as given."""
    from cupy_backends.cuda.libs import nvrtc
    prog = nvrtc.createProgram(source, name, (), ())
    try:
        try:
            nvrtc.compileProgram(prog, list(options))
        except nvrtc.NVRTCError:
            raise StudentCompileError(f"{name}: NVRTC could not compile it (options: {' '.join(options)}):\n"
                                      f"{nvrtc.getProgramLog(prog).strip()}") from None
        return bytes(nvrtc.getPTX(prog) if ptx else nvrtc.getCUBIN(prog))
    finally:
        nvrtc.destroyProgram(prog)


def cached_cubin(source: str, name: str, options: Sequence[str], fresh: bool = False) -> Path:
    """The file the GPU loads for ``source`` compiled with ``options``: its cubin for this GPU, or
    where the options ask for flushing denormals its PTX (after the cubin compiled: ptxas's
    errors); compiled if not cached (or if ``fresh``). Written to a temporary file and renamed:
    a reader never sees half a file."""
    conflict = ptx_conflict(options)
    if conflict:
        raise StudentCompileError(f"{name}: {conflict}")
    from cupy_backends.cuda.libs import nvrtc
    arch = target_arch()
    as_ptx = flushes(options)
    chosen = (*options, arch.replace("sm_", "compute_") if as_ptx else arch)
    key = hashlib.sha256(repr((nvrtc.getVersion(), chosen, source)).encode()).hexdigest()[:32]
    folder = cache_dir() / "cubin"
    path = folder / f"{key}.{'ptx' if as_ptx else 'cubin'}"
    if not fresh and path.is_file() and path.stat().st_size > 0:
        return path
    if as_ptx:
        compile_cubin(source, name, (*options, arch))         # ptxas's checks, as for every file
    code = compile_cubin(source, name, chosen, ptx=as_ptx)
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".part")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(code)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _loaded(path: Path) -> Any:
    import cupy
    module = cupy.RawModule(path=str(path))
    _ = module.module                                   # loaded now: a damaged file shows here
    return module


def student_module(source: str, name: str, options: Sequence[str]) -> Any:
    """A ``cupy.RawModule`` of the student's source, compiled with exactly ``options``; a cached
    file the driver refuses is compiled again, and refused twice, a StudentCompileError says why."""
    import cupy
    try:
        return _loaded(cached_cubin(source, name, options))
    except cupy.cuda.driver.CUDADriverError:
        pass                                            # a damaged cache file, most likely
    path = cached_cubin(source, name, options, fresh=True)
    try:
        return _loaded(path)
    except cupy.cuda.driver.CUDADriverError as e:
        from cupy_backends.cuda.libs import nvrtc
        why = (f"; PTX, which -ftz=true and --use_fast_math take here, needs a driver at least as new as "
               f"NVRTC {'.'.join(map(str, nvrtc.getVersion()))}: update the driver or drop that option"
               if path.suffix == ".ptx" else "")
        raise StudentCompileError(f"{name}: the GPU's driver could not load it ({e}){why}") from None
