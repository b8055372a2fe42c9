"""Loading kernels/*.cu with CuPy: headers inlined (so they are part of what CuPy hashes),
constants passed as -D options, one compiled module per (device, file, options)."""
from __future__ import annotations

import re
from pathlib import Path

from .constants import compile_defines

KERNEL_DIR = Path(__file__).resolve().parent.parent / "kernels"
_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*$', re.M)
# exact float32 rounding (no fused multiply-add) so kernels match the NumPy reference bit for bit
BASE_OPTIONS = ("--std=c++17", "--fmad=false")
_modules: dict = {}


def kernel_source(name: str) -> str:
    """The text of kernels/NAME with each ``#include "x.cuh"`` replaced by the header's text
    (each header once, ``#pragma once`` dropped), so CuPy's cache key covers the headers."""
    done: set[str] = set()

    def expand(file: str, stack: tuple[str, ...]) -> str:
        if file in stack:
            raise ValueError(f"include cycle: {' -> '.join(stack + (file,))}")
        text = re.sub(r"^\s*#\s*pragma\s+once\s*$", "", (KERNEL_DIR / file).read_text(), flags=re.M)

        def inline(m: re.Match) -> str:
            header = m.group(1)
            if header in done:
                return f"// ---- {header} (already included) ----"
            done.add(header)
            return f"// ---- {header} ----\n{expand(header, stack + (file,))}\n"
        return _INCLUDE.sub(inline, text)
    return expand(name, ())


def compile_options(extra: dict[str, int] | None = None) -> tuple[str, ...]:
    defines = {**compile_defines(), **(extra or {})}
    return BASE_OPTIONS + tuple(f"-D{k}={v}" for k, v in sorted(defines.items()))


def load_module(name: str, extra: dict[str, int] | None = None):
    """The compiled ``cupy.RawModule`` for kernels/NAME on the current device (cached)."""
    import cupy
    source = kernel_source(name)
    options = compile_options(extra)
    key = (cupy.cuda.Device().id, name, source, options)
    if key not in _modules:
        _modules[key] = cupy.RawModule(code=source, options=options)
    return _modules[key]


def kernel_files() -> list[str]:
    """Every kernel source (not headers) in kernels/."""
    return sorted(p.name for p in KERNEL_DIR.glob("*.cu"))
