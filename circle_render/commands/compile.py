"""``render compile``: compile a student's kernel file as the GPU path will, without a GPU.

The same source (circle_render.cuda.module.kernel_source: every header we have inlined, the
file's bytes read as the compiler reads them) and the same options (student_compile_options:
the course's defaults, the class's ``defines`` and ``compile_options``) as ``load_module`` on
the GPU, given to NVRTC, CuPy's compiler, loaded straight from its library (the `.[compile]`
extra, CuPy's [ctk] extra or a CUDA toolkit): no CuPy and no device needed. A kernel CuPy
cannot find by its name (not ``extern "C"``) is an error, as it is on the GPU. Without NVRTC it
falls back to nvcc, which is more lenient (it reads glibc's headers: `uint` passes there), and
says so. The compiler runs in a child process: NVRTC's front end ends the whole process (exit
status 4, no message) on Ctrl-C, and its later stages hold Ctrl-C until they finish.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import glob
import importlib.util
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from circle_render.cuda.module import (
    COURSE_HEADERS,
    KERNEL_DIR,
    check_options,
    kernel_source,
    student_compile_options,
)
from circle_render.cuda.nvrtc import option_name, ptx_conflict
from circle_render.cuda.student import describe_options
from circle_render.errors import UserError

DEFAULT_ARCH = "compute_75"             # the oldest GPUs the courses use (T4, T4G); --arch to change
ARCH = re.compile(r"(compute|sm)_\d{2,3}[af]?")   # what --arch takes: compute_90, sm_86, compute_90a
NVRTC_ONLY = ("device-as-default-execution-space", "default-device")   # options nvcc does not take
# Headers of the course's host code (cudaRenderer.cu, main.cpp): a port has no host code in its .cu
HOST_HEADERS = ("cudaRenderer.h", "image.h", "noise.h", "sceneLoader.h", "util.h", "CycleTimer.h", "ppm.h",
                "cuda.h", "cuda_runtime.h", "driver_functions.h", "stdio.h", "stdlib.h", "string", "vector",
                "algorithm", "cstdio", "cstdlib", "cstring", "math.h", "cmath")
INSTALL = ('install NVRTC, the compiler CuPy uses, with the `.[compile]` extra (`python3 -m pip install -e '
           '".[compile]"`, no GPU needed) or the `.[cuda12]` / `.[cuda13]` extra')


@dataclass
class Target:
    """One kernel file to compile, with the macros and options its renderer compiles it with."""
    path: Path
    defines: dict = field(default_factory=dict)
    options: tuple | str = ()        # a str only as a class wrote it: refused when compiled
    origin: str = ""                 # "my_renderer.py:StudentRenderer", or "" for a .cu given alone


@dataclass
class Compiled:
    path: Path
    compiler: str            # "NVRTC 12.9" or "nvcc (NVRTC not found ...)"
    ok: bool
    log: str
    options: tuple | str = ()        # a str only as a class wrote it: refused when compiled
    errors: list = field(default_factory=list)      # ours, beyond the compiler's log


def _nvrtc_candidates() -> list[str]:
    """Where libnvrtc may be: $CIRCLE_RENDER_NVRTC, the NVIDIA wheels (the .[compile] extra and
    CuPy's [ctk] extra install them), the system's loader path, a CUDA toolkit."""
    found = [os.environ["CIRCLE_RENDER_NVRTC"]] if os.environ.get("CIRCLE_RENDER_NVRTC") else []
    for root in sys.path:
        for pattern in ("nvidia/cuda_nvrtc/lib/libnvrtc.so*", "nvidia/cu1*/lib/libnvrtc.so*"):
            found += sorted(p for p in glob.glob(os.path.join(root, pattern)) if ".alt." not in p)
    system = ctypes.util.find_library("nvrtc")
    if system:
        found.append(system)
    for home in (os.environ.get("CUDA_PATH"), os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if home:
            found += sorted(glob.glob(os.path.join(home, "lib64", "libnvrtc.so*")))
    return found


def load_nvrtc() -> ctypes.CDLL | None:
    """The NVRTC library (ctypes), or None."""
    for candidate in _nvrtc_candidates():
        try:
            lib = ctypes.CDLL(candidate)
            _ = lib.nvrtcVersion                   # AttributeError if it is not NVRTC
            return lib
        except (OSError, AttributeError):
            continue
    return None


def _nvrtc_version(lib: ctypes.CDLL) -> str:
    major, minor = ctypes.c_int(), ctypes.c_int()
    lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    return f"{major.value}.{minor.value}"


def compile_nvrtc(lib: ctypes.CDLL, source: str, name: str, options: tuple[str, ...]) -> tuple[bool, str, str]:
    """Compile with NVRTC: (success, log, PTX). The source goes in as UTF-8, as CuPy gives it."""
    prog = ctypes.c_void_p()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), name.encode(), 0, None, None) != 0:
        raise RuntimeError("nvrtcCreateProgram failed")
    try:
        opts = (ctypes.c_char_p * len(options))(*(o.encode() for o in options))
        status = lib.nvrtcCompileProgram(prog, len(options), opts)
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(prog, log)
        ptx = b""
        if status == 0:
            lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
            buf = ctypes.create_string_buffer(size.value)
            lib.nvrtcGetPTX(prog, buf)
            ptx = buf.value
        return status == 0, log.value.decode(errors="replace").strip(), ptx.decode(errors="replace")
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))


def compile_nvcc(source: str, name: str, options: tuple[str, ...]) -> tuple[bool, str, str]:
    """Compile with nvcc to PTX (the same options): (success, log, PTX)."""
    with tempfile.TemporaryDirectory() as tmp:
        src, ptx = Path(tmp) / name, Path(tmp) / "k.ptx"
        src.write_bytes(source.encode())
        p = subprocess.run(["nvcc", "-ptx", "-o", str(ptx), str(src), *options], capture_output=True,
                           stdin=subprocess.DEVNULL, check=False)
        log = (p.stdout + p.stderr).decode(errors="replace").strip()
        return p.returncode == 0, log, ptx.read_text(errors="replace") if p.returncode == 0 else ""


def _child(conn: Any, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    try:
        conn.send(("ok", fn(*args)))
    except BaseException as e:                      # noqa: BLE001 - reported by the parent
        conn.send(("error", f"{type(e).__name__}: {e}"))
    finally:
        conn.close()


def in_child(fn: Callable[..., Any], *args: Any) -> Any:
    """fn(*args) in a forked child process, its result returned here. Ctrl-C (or SIGTERM) here
    ends the child and raises here as usual; a child that dies says how."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return fn(*args)
    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, fn, args), daemon=True)
    proc.start()
    send.close()
    try:
        kind, value = receive.recv()
    except EOFError:
        proc.join()
        raise RuntimeError(f"the compiler's process ended without an answer (exit status {proc.exitcode})") from None
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join()
        receive.close()
    if kind == "error":
        raise RuntimeError(value)
    return value


def kernel_entries(ptx: str) -> list[str]:
    """The kernels of a PTX text, by the names the driver knows them by."""
    return re.findall(r"^\s*(?:\.visible\s+|\.weak\s+)*\.entry\s+([\w$]+)\s*\(", ptx, re.MULTILINE)


def _plain_name(mangled: str) -> str:
    """_Z17kernelRenderTilesv -> kernelRenderTiles (the first name of a mangled symbol)."""
    m = re.match(r"_Z(?:N|L)?(\d+)", mangled)
    if m:
        n = int(m.group(1))
        start = m.end()
        return mangled[start:start + n]
    return mangled


def _hints(log: str, path: Path) -> list[str]:
    """One line for each header the compiler could not open: where we looked, and what a port
    includes instead of a course header."""
    out = []
    missing = re.findall(r'(?:cannot|could not) open source file "([^"]+)"', log)     # NVRTC's words
    missing += re.findall(r"fatal error: (\S+?): No such file or directory", log)    # nvcc's (its preprocessor's)
    for header in dict.fromkeys(missing):
        name = Path(header).name
        if name in COURSE_HEADERS:
            out.append(f'{path}: note: "{header}" is one of the course\'s headers: include "course_compat.cuh" '
                       "instead (docs/assignment.md, section 7)")
        elif name in HOST_HEADERS or header.startswith("thrust/"):
            out.append(f'{path}: note: "{header}" serves the course\'s host code, which a port writes in Python: '
                       "delete the include (docs/assignment.md, section 7)")
        else:
            out.append(f'{path}: note: "{header}" is neither beside the file that includes it nor in {KERNEL_DIR} '
                       "(where a port's headers are looked for, on the GPU as here)")
    if re.search(r'identifier "uint" is undefined', log):
        out.append(f'{path}: note: `uint` is not a CUDA type (nvcc finds it in glibc\'s headers): include '
                   '"helpers.cuh" or "course_compat.cuh", which define it (docs/assignment.md, section 6)')
    return out


def _import_renderers(path: Path) -> list[Target]:
    """The kernel files the renderer classes of a .py file compile, each with its class's
    defines and compile_options (the module is imported, as render check imports it)."""
    spec = importlib.util.spec_from_file_location(f"_render_compile_{abs(hash(str(path)))}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    out: dict = {}
    for name, cls in vars(module).items():
        kernel_file = getattr(cls, "kernel_file", None) if isinstance(cls, type) else None
        if kernel_file is None or not isinstance(kernel_file, (str, Path)):
            continue
        defines, options = dict(getattr(cls, "defines", {}) or {}), getattr(cls, "compile_options", ()) or ()
        options = tuple(options) if isinstance(options, list) else options   # a str is refused where it is used
        key = (str(kernel_file), tuple(sorted(defines.items())), options)
        out.setdefault(key, Target(Path(kernel_file), defines, options, f"{path.name}:{name}"))
    return list(out.values())


def targets_of(path: Path) -> tuple[list[Target], str]:
    """The files to compile for PATH, and a notice (or ""): PATH itself, or for a .py file the
    kernel files its renderer classes name (imported; if it cannot be imported here, e.g. it
    needs CuPy, the .cu files beside it that it names, with default options)."""
    if not path.is_file():
        raise UserError(f"{path}: no such file (give a .cu kernel file or the .py file of your renderer)")
    if path.suffix in (".cu", ".cuh"):
        return [Target(path)], ""
    if path.suffix != ".py":
        raise UserError(f"{path}: not a .cu or .py file")
    try:
        found = _import_renderers(path)
        if found:
            return found, ""
        notice = f"{path}: no class in it has a kernel_file"
    except Exception as e:                          # noqa: BLE001 - any error of the student's module
        notice = f"{path}: could not import it here ({type(e).__name__}: {' '.join(str(e).split())[:150]})"
    text = path.read_bytes().decode("utf-8", errors="replace")
    names = re.findall(r"[\"']([\w./-]+\.cu)[\"']", text)
    files = [path.parent / n for n in dict.fromkeys(names) if (path.parent / n).is_file()]
    if not files:
        raise UserError(f"{notice}, and it names no .cu file beside it; give the .cu file(s) instead")
    return [Target(f) for f in files], f"{notice}: compiling the .cu files it names, with the default options"


def compile_file(path: Path, arch: str = DEFAULT_ARCH, defines: dict | None = None, nvrtc: ctypes.CDLL | None = None,
                 options: tuple | str = ()) -> Compiled:
    """Compile one kernel file as load_module(path, defines, options=options) will on the GPU."""
    try:
        source = kernel_source(path)
    except OSError as e:
        return Compiled(path, "source assembly", False, f"{e.strerror or e}: {e.filename or path}")
    try:
        chosen = student_compile_options(defines, options)   # the GPU path's own checks of defines and options
    except ValueError as e:
        return Compiled(path, "not compiled", False, f"{path}: error: {e}")
    given = (*chosen, f"-arch={arch}")
    conflict = ptx_conflict(chosen)
    if conflict:                                         # the GPU path refuses it the same way (cuda/nvrtc.py)
        return Compiled(path, "not compiled", False, f"{path}: error: {conflict}", chosen)
    run: tuple[Any, ...]
    if nvrtc is not None:
        compiler, run = f"NVRTC {_nvrtc_version(nvrtc)}", (compile_nvrtc, nvrtc)
    else:
        compiler = ("nvcc (NVRTC not found: nvcc is more lenient, e.g. it accepts `uint`; "
                    "the .[compile] extra installs NVRTC)")
        run = (compile_nvcc,)
        given = tuple(o for o in given if option_name(o) not in NVRTC_ONLY)   # nvcc compiles host code itself
    try:
        ok, log, ptx = in_child(*run, source, path.name, given)
        real = arch.replace("compute_", "sm_")
        if ok and nvrtc is not None and real != arch:     # ptxas too, as the GPU path's cubin: its limits
            ok, log, _ = in_child(compile_nvrtc, nvrtc, source, path.name, (*chosen, f"-arch={real}"))
    except RuntimeError as e:
        return Compiled(path, compiler, False, str(e), chosen)
    result = Compiled(path, compiler, ok, log, chosen)
    if not ok:
        result.errors += _hints(log, path)
    for entry in kernel_entries(ptx):
        if entry.startswith("_Z"):
            name = _plain_name(entry)
            result.errors.append(f'{path}: error: kernel {name} is not extern "C": CuPy\'s get_function cannot '
                                 f'find it by that name (write extern "C" __global__ void {name}(...))')
            result.ok = False
    return result


def _parse_defines(items: tuple[str, ...]) -> dict:
    out = {}
    for item in items:
        name, _, value = item.partition("=")
        if not re.fullmatch(r"[A-Za-z_]\w*", name):
            raise UserError(f"-D {item!r}: give NAME or NAME=VALUE")
        out[name] = value or "1"
    return out


def _parse_options(items: tuple[str, ...]) -> tuple[str, ...]:
    words = tuple(w for item in items for w in item.split())
    try:
        return check_options(words)
    except ValueError:
        raise UserError(f"--option {' '.join(items)!r}: each word must be an option; options start with '-' and "
                        "take a value after '=' (--option=--ftz=true, --option=--fmad=false)") from None


def _shown(path: Path) -> str:
    """A path as the user would write it: relative to the current folder when it is inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve())) if path.is_absolute() else str(path)
    except ValueError:
        return str(path)


def compile_command(files: tuple[str, ...], arch: str, defines: tuple[str, ...], options: tuple[str, ...] = ()) -> None:
    if not ARCH.fullmatch(arch):
        raise UserError(f"--arch {arch!r}: give a GPU architecture such as compute_75 (a T4), compute_86 (an "
                        "RTX 3090) or compute_90 (an H100); sm_XX too")
    extra, own = _parse_defines(defines), _parse_options(options)
    plan = [targets_of(Path(name)) for name in files]       # a bad path is named first, compiler or not
    nvrtc = load_nvrtc()
    if nvrtc is None and shutil.which("nvcc") is None:
        raise UserError(f"no CUDA compiler found: {INSTALL}, or put nvcc on PATH")
    failed = 0
    for targets, notice in plan:
        if notice:
            click.echo(notice, err=True)
        for t in targets:
            chosen = t.options if isinstance(t.options, str) else (*t.options, *own)   # a str: refused, as on the GPU
            result = compile_file(t.path, arch, {**t.defines, **extra}, nvrtc, chosen)
            if result.log:
                click.echo(result.log, err=True)
            for line in result.errors:
                click.echo(line, err=True)
            origin = f" for {t.origin}" if t.origin else ""
            click.echo(f"{_shown(t.path)}{origin}: {'compiles' if result.ok else 'FAILED'} ({result.compiler}, {arch}; "
                       f"options {describe_options(result.options)})")
            failed += not result.ok
    if failed:
        sys.exit(1)
