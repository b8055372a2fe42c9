"""Registers and spills of each kernel of a kernel file, as the renderer compiles it (the same
-D options as circle_render/cuda/module.py, with fmad on): needs nvcc, not a GPU.

    python -m benchmarks ptxas draw.cu --tuning '{"FAST_TILE": 32}'

Compile with these options, not with the raw constants: a float define without its f suffix
is a double, and the kernel then does part of its arithmetic in float64.
"""
import argparse
import json
import re
import subprocess
import tempfile
from pathlib import Path

from circle_render.cuda.module import compile_options, kernel_source


def report(file: str, tuning: dict) -> dict[str, str]:
    """{kernel: "N registers, S bytes spill stores, L bytes spill loads"} for kernels/FILE."""
    options = [o for o in compile_options(tuning) if o != "--fmad=false"]
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / file
        src.write_text(kernel_source(file))
        run = subprocess.run(["nvcc", "-arch=sm_90", "-c", "-o", str(Path(tmp) / "k.o"), str(src),
                              "-Xptxas", "-v", *options], capture_output=True, text=True, check=False)
    if run.returncode:
        raise SystemExit(run.stderr)
    out, name, spills = {}, None, ""
    for line in run.stderr.splitlines():
        if m := re.search(r"Compiling entry function '(\w+)'", line):
            name = m.group(1)
        elif "spill stores" in line:
            spills = ", ".join(part.strip() for part in line.split(",")[1:3])
        elif (m := re.search(r"Used (\d+) registers", line)) and name:
            out[name] = f"{m.group(1)} registers, {spills}"
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file", help="a kernel file under circle_render/kernels/, e.g. draw.cu")
    ap.add_argument("--tuning", default="{}", help="JSON of constants to override, as plan_fast's")
    a = ap.parse_args()
    for kernel, text in report(a.file, json.loads(a.tuning)).items():
        print(f"{kernel:<24} {text}")


if __name__ == "__main__":
    main()
