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
    assert found["bin.cu"] == ["bin_count", "bin_scan", "bin_emit"]
    assert found["sparse_bin.cu"] == ["sparse_sort", "sparse_count", "sparse_scan_in_groups", "sparse_scan_groups",
                                      "sparse_emit", "pack_records"]
    assert found["sparse_draw.cu"] == ["render_sparse"]
    assert found["draw.cu"] == ["render_fast"]
