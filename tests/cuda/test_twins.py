"""The twin naming rule: every kernel has a NumPy twin of its name in its file's twin module
(circle_render/twins/NAME.py for kernels/NAME.cu), or a reason in that module's NO_TWIN."""
import re

import pytest

from circle_render.cuda.module import KERNEL_DIR, kernel_files
from circle_render.twins import twin_module

KERNEL = re.compile(r'extern\s+"C"\s+__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s+)?(\w+)\s*\(')


def _kernels(file: str) -> list[str]:
    text = re.sub(r"//.*", "", (KERNEL_DIR / file).read_text())
    return KERNEL.findall(text)


@pytest.mark.parametrize("file", kernel_files())
def test_every_kernel_has_a_twin_named_after_it(file):
    names = _kernels(file)
    assert names, f"no kernels found in {file}"
    module = twin_module(file)
    no_twin = getattr(module, "NO_TWIN", {})
    for name in names:
        assert callable(getattr(module, name, None)) or no_twin.get(name), \
            f"{file}: kernel {name} has no twin in {module.__name__} and no reason in its NO_TWIN"


def test_the_kernel_list_is_complete():
    found = {f: _kernels(f) for f in kernel_files()}
    assert found["bin.cu"] == ["bin_count", "bin_scan", "bin_emit", "bin_back_count", "bin_back_scan", "bin_back_emit"]
    assert found["sparse_bin.cu"] == ["sparse_bin_shared", "sparse_bin_count", "sparse_bin_scan_tiles",
                                      "sparse_bin_scan_groups", "sparse_bin_emit", "sparse_pack"]
    assert found["sparse_draw.cu"] == ["sparse_draw_shared", "sparse_draw_global"]
    assert found["draw.cu"] == ["draw", "draw_front", "draw_back"]
    assert found["walk.cu"] == ["walk"]


def test_the_fast_renderers_stages_are_named_after_their_kernels():
    # one name per stage, through stage, launch site (a method of its path) and kernel: a
    # stage's kernels are named after it (the stage itself, or stage_step)
    from circle_render.cuda import binned, sparse, walk
    found = {k for f in kernel_files() for k in _kernels(f)}
    for path, stages in [(walk.WalkPath, ("walk",)), (binned.BinnedPath, ("bin", "draw")),
                         (binned.LayeredPath, ("bin", "draw_front", "bin_back", "draw_back")),
                         (sparse.SparsePath, ("sparse_pack", "sparse_bin", "sparse_draw"))]:
        for stage in stages:
            assert callable(getattr(path, stage, None)), (path.__name__, stage)
            assert any(k == stage or k.startswith(f"{stage}_") for k in found), stage
