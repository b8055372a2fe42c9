"""A student's kernel file compiled as nvcc compiles it, through NVRTC, then loaded by CuPy.

CuPy's own compile (``cupy.RawModule(code=...)``) adds two options of its own after the ones it
is given: ``-ftz=true`` (denormals flushed to zero; NVRTC takes the last of two ``-ftz``, so a
student's ``-ftz=false`` never reaches the compiler) and ``--device-as-default-execution-space``
(a function without ``__device__`` compiles for the GPU, where nvcc refuses to call it from a
kernel). The course compiles with nvcc's defaults, neither of them, and so does ``render
compile``. Here the options go to NVRTC exactly as given, through CuPy's binding of it, for the
GPU's virtual architecture (``-arch=compute_XX``): PTX, which the driver compiles for the GPU
when the module loads, as it does the course's binary (built for compute_75) on a newer GPU.
PTX, not a cubin: NVRTC 13.0's cubins ignore ``-ftz=true`` (measured on the H100: its PTX had
``mul.ftz.f32``, its cubin did not flush). The PTX is kept in the user's cache folder (keyed by
the source with its headers inlined, the options, the architecture and NVRTC's version; the
driver keeps what it compiles from it) and loaded with ``cupy.RawModule(path=...)``.
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
    """-arch=compute_XX for the current GPU: its compute capability, or the newest NVRTC knows."""
    import cupy
    from cupy_backends.cuda.libs import nvrtc
    cc = int(cupy.cuda.Device().compute_capability)
    known = [a for a in nvrtc.getSupportedArchs() if a <= cc]
    return f"-arch=compute_{max(known) if known else cc}"


def compile_ptx(source: str, name: str, options: Sequence[str]) -> bytes:
    """NVRTC's PTX for ``source`` (a file called ``name`` in its messages), ``options`` as given."""
    from cupy_backends.cuda.libs import nvrtc
    prog = nvrtc.createProgram(source, name, (), ())
    try:
        try:
            nvrtc.compileProgram(prog, list(options))
        except nvrtc.NVRTCError:
            raise StudentCompileError(f"{name}: NVRTC could not compile it (options: {' '.join(options)}):\n"
                                      f"{nvrtc.getProgramLog(prog).strip()}") from None
        return bytes(nvrtc.getPTX(prog)).rstrip(b"\0")
    finally:
        nvrtc.destroyProgram(prog)


def cached_ptx(source: str, name: str, options: Sequence[str], fresh: bool = False) -> Path:
    """The PTX file of ``source`` compiled with ``options`` for this GPU, compiled if not cached
    (or if ``fresh``). Written to a temporary file and renamed: a reader never sees half a file."""
    from cupy_backends.cuda.libs import nvrtc
    chosen = (*options, target_arch())
    key = hashlib.sha256(repr((nvrtc.getVersion(), chosen, source)).encode()).hexdigest()[:32]
    folder = cache_dir() / "ptx"
    path = folder / f"{key}.ptx"
    if not fresh and path.is_file() and path.stat().st_size > 0:
        return path
    ptx = compile_ptx(source, name, chosen)
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".part")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(ptx)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def student_module(source: str, name: str, options: Sequence[str]) -> Any:
    """A ``cupy.RawModule`` of the student's source, compiled with exactly ``options``."""
    import cupy
    try:
        module = cupy.RawModule(path=str(cached_ptx(source, name, options)))
        _ = module.module                               # loaded now: a damaged cache file shows here
    except cupy.cuda.driver.CUDADriverError:
        module = cupy.RawModule(path=str(cached_ptx(source, name, options, fresh=True)))
    return module
