"""``render compile``: compile a student's kernel file as the GPU path will, without a GPU.

The same source (circle_render.cuda.module.kernel_source: headers inlined) and the same options
(student_compile_options) as ``load_module(path)`` on the GPU, given to NVRTC, CuPy's compiler,
loaded straight from its library (the nvidia-cuda-nvrtc wheel, CuPy's [ctk] extra or a CUDA
toolkit): no CuPy and no device needed. Without NVRTC it falls back to nvcc, which is more
lenient (it reads glibc's headers: `uint` passes there), and says so.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import click

from circle_render.cuda.module import kernel_source, student_compile_options
from circle_render.errors import UserError

DEFAULT_ARCH = "compute_75"             # the oldest GPUs the courses use (T4, T4G); --arch to change


@dataclass
class Compiled:
    path: Path
    compiler: str            # "NVRTC 12.9" or "nvcc (NVRTC not found)"
    ok: bool
    log: str


def _nvrtc_candidates() -> list[str]:
    """Where libnvrtc may be: $CIRCLE_RENDER_NVRTC, the NVIDIA wheels (CuPy's [ctk] extra
    installs them), the system's loader path, a CUDA toolkit."""
    found = [os.environ["CIRCLE_RENDER_NVRTC"]] if os.environ.get("CIRCLE_RENDER_NVRTC") else []
    for root in sys.path:
        for pattern in ("nvidia/cuda_nvrtc/lib/libnvrtc.so*", "nvidia/cu1*/lib/libnvrtc.so*"):
            found += sorted(p for p in glob.glob(os.path.join(root, pattern)) if ".alt." not in p)
    if ctypes.util.find_library("nvrtc"):
        found.append(ctypes.util.find_library("nvrtc"))
    for home in (os.environ.get("CUDA_PATH"), os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if home:
            found += sorted(glob.glob(os.path.join(home, "lib64", "libnvrtc.so*")))
    return found


def load_nvrtc():
    """The NVRTC library (ctypes), or None."""
    for candidate in _nvrtc_candidates():
        try:
            lib = ctypes.CDLL(candidate)
            lib.nvrtcVersion
            return lib
        except (OSError, AttributeError):
            continue
    return None


def _nvrtc_version(lib) -> str:
    major, minor = ctypes.c_int(), ctypes.c_int()
    lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    return f"{major.value}.{minor.value}"


def compile_nvrtc(lib, source: str, name: str, options: tuple[str, ...]) -> tuple[bool, str]:
    """Compile with NVRTC: (success, log)."""
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
        return status == 0, log.value.decode(errors="replace").strip()
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))


def compile_nvcc(source: str, name: str, options: tuple[str, ...]) -> tuple[bool, str]:
    """Compile with nvcc to PTX (the same options; nvcc spells fmad with one dash)."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / name
        src.write_text(source)
        opts = [o.replace("--fmad=", "-fmad=") for o in options]
        p = subprocess.run(["nvcc", "-ptx", "-o", str(Path(tmp) / "k.ptx"), str(src), *opts],
                           capture_output=True, text=True)
        return p.returncode == 0, (p.stdout + p.stderr).strip()


def kernel_files_of(path: Path) -> list[Path]:
    """The .cu files to compile: PATH itself, or for a .py file the .cu files beside it that it
    names (the scaffold names my_renderer.cu)."""
    if not path.is_file():
        raise UserError(f"{path}: no such file (give a .cu kernel file or the .py file of your renderer)")
    if path.suffix == ".cu":
        return [path]
    if path.suffix != ".py":
        raise UserError(f"{path}: not a .cu or .py file")
    names = re.findall(r"[\"']([\w./-]+\.cu)[\"']", path.read_text())
    files = [path.parent / n for n in dict.fromkeys(names) if (path.parent / n).is_file()]
    if not files:
        raise UserError(f"{path} names no .cu file beside it; give the .cu file(s) instead")
    return files


def compile_file(path: Path, arch: str = DEFAULT_ARCH, defines: dict | None = None, nvrtc=None) -> Compiled:
    """Compile one kernel file as load_module(path, defines) will on the GPU."""
    try:
        source = kernel_source(path)
    except (FileNotFoundError, ValueError) as e:
        return Compiled(path, "source assembly", False, str(e))
    options = student_compile_options(defines) + (f"-arch={arch}",)
    if nvrtc is not None:
        ok, log = compile_nvrtc(nvrtc, source, path.name, options)
        return Compiled(path, f"NVRTC {_nvrtc_version(nvrtc)}", ok, log)
    ok, log = compile_nvcc(source, path.name, options)
    return Compiled(path, "nvcc (NVRTC not found: nvcc is more lenient, e.g. it accepts `uint`)", ok, log)


def plain_kernels(path: Path) -> list[str]:
    """__global__ functions without extern "C": CuPy cannot find them by name."""
    text = re.sub(r"//[^\n]*|/\*.*?\*/", "", path.read_text(), flags=re.S)
    out = []
    for m in re.finditer(r"__global__\s+(?:void\s+)?(?:__launch_bounds__\s*\([^)]*\)\s*)?(?:void\s+)?(\w+)\s*\(",
                         text):
        if 'extern "C"' not in text[max(0, m.start() - 40):m.start()]:
            out.append(m.group(1))
    return out


def _parse_defines(items: tuple[str, ...]) -> dict:
    out = {}
    for item in items:
        name, _, value = item.partition("=")
        if not re.fullmatch(r"[A-Za-z_]\w*", name):
            raise UserError(f"-D {item!r}: give NAME or NAME=VALUE")
        out[name] = value or "1"
    return out


def compile_command(files: tuple[str, ...], arch: str, defines: tuple[str, ...]) -> None:
    targets = [f for name in files for f in kernel_files_of(Path(name))]
    extra = _parse_defines(defines)
    nvrtc = load_nvrtc()
    if nvrtc is None and shutil.which("nvcc") is None:
        raise UserError("no CUDA compiler found: install NVRTC with `python3 -m pip install nvidia-cuda-nvrtc-cu12` "
                        "(or the .[cuda12] / .[cuda13] extra), or put nvcc on PATH")
    failed = 0
    for path in targets:
        result = compile_file(path, arch, extra, nvrtc)
        if result.log:
            click.echo(result.log, err=True)
        for name in plain_kernels(path):
            click.echo(f"{path}: warning: kernel {name} is not extern \"C\": CuPy's get_function cannot find it "
                       "by that name", err=True)
        click.echo(f"{path}: {'compiles' if result.ok else 'FAILED'} ({result.compiler}, {arch})")
        failed += not result.ok
    if failed:
        sys.exit(1)
