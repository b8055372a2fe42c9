"""Every kernel compiles (nvcc where it is on PATH), and headers are part of the hashed source."""
import shutil
import subprocess

import pytest

from circle_render.cuda.module import KERNEL_DIR, compile_options, kernel_files, kernel_source


def test_headers_are_inlined_into_the_source():
    src = kernel_source("render_tiled.cu")
    assert '#include "' not in src
    assert "block_exclusive_scan" in src and "snow_shade" in src
    assert (KERNEL_DIR / "scan.cuh").read_text().strip().splitlines()[-1] in src


def test_constants_come_from_python():
    from circle_render.constants import TILE_SIZE
    assert f"-DTILE_SIZE={TILE_SIZE}" in compile_options()


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc (the CUDA toolkit) on PATH")
@pytest.mark.parametrize("name", kernel_files())
def test_kernel_compiles_with_nvcc(name, tmp_path):
    src = tmp_path / name
    src.write_text(kernel_source(name))
    opts = [o.replace("--fmad=false", "-fmad=false") for o in compile_options()]
    p = subprocess.run(["nvcc", "-arch=sm_90", "-c", "-o", str(tmp_path / "k.o"), str(src), *opts],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


# each path's kernel files
PATH_FILES = {"walk": ["walk.cu"], "binned": ["bin.cu", "draw.cu"], "sparse": ["sparse_bin.cu", "sparse_draw.cu"]}


def _fast_variants():
    """The distinct (kernel file, constants) the fast renderer compiles, over every scene at two
    sizes (the sparse path counts globally past 2048 pixels)."""
    from circle_render.cuda.fast import plan_fast
    from circle_render.scenes import SCENE_NAMES, make_scene
    seen = {}
    for name in SCENE_NAMES:
        for size in (1024, 4096):
            plan = plan_fast(make_scene(name), size, size)
            for file in PATH_FILES[plan.name]:
                seen.setdefault((file, tuple(sorted(plan.defines.items()))), f"{name}-{size}-{file}")
    return [pytest.param(file, dict(defines), id=case) for (file, defines), case in seen.items()]


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc (the CUDA toolkit) on PATH")
@pytest.mark.parametrize("name,variant", _fast_variants())
def test_fast_renderer_compiles_as_each_scene_uses_it(name, variant, tmp_path):
    # static_asserts (shared memory, ballot words) depend on the per-scene constants
    src = tmp_path / name
    src.write_text(kernel_source(name))
    opts = [o for o in compile_options(variant) if o != "--fmad=false"]
    p = subprocess.run(["nvcc", "-arch=sm_90", "-c", "-o", str(tmp_path / "k.o"), str(src), *opts],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
