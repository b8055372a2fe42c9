"""Constants live in circle_render/constants.py and reach the kernels only as compile defines:
no kernel writes its own copy (these tests fail if one does)."""
import re

import numpy as np
import pytest

from circle_render.constants import compile_defines
from circle_render.cuda.module import KERNEL_DIR, compile_options

SOURCES = sorted(KERNEL_DIR.glob("*.cu")) + sorted(KERNEL_DIR.glob("*.cuh"))
FLOAT = re.compile(r"(?<![\w.])(\d+\.\d*|\.\d+)(?:[eE][-+]?\d+)?[fF]?(?![\w.])")


def _code(path) -> str:
    """The file without comments."""
    text = re.sub(r"/\*.*?\*/", "", path.read_text(), flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_no_float_literal_but_zero_and_one(path):
    found = [m.group(0) for m in FLOAT.finditer(_code(path)) if float(m.group(1)) not in (0.0, 1.0)]
    assert not found, f"{path.name} writes {found}: take them from circle_render/constants.py"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_no_kernel_redefines_a_shared_constant(path):
    code = _code(path)
    for name in compile_defines():
        # (helpers.cuh aliases a student compile's CR_NAME as NAME: the value still comes from constants.py)
        assert not re.search(rf"(#\s*define\s+{name}\b(?!\s+CR_{name}\b)|constexpr\s+\w+\s+{name}\b)", code), \
            f"{path.name} defines {name}, which constants.py passes to every kernel"


@pytest.mark.parametrize("name,files", [
    ("FLAT_ALPHA", ["walk.cuh", "shade.cuh"]), ("PIXEL_CENTRE", ["shade.cuh"]), ("DT", ["animate.cu"]),
    ("SNOW_RESPAWN_Y", ["animate.cu"]), ("SUPERTILES", ["bin.cu", "draw.cu"]),
    ("BIN_WARPS", ["bin.cu"]), ("TILE_ITEMS", ["scan.cu"]), ("SPARSE_MIN_BLOCKS", ["sparse_draw.cu"]),
    ("SNOW_RAMP_LAST", ["shade.cuh"]), ("REACH_MARGIN", ["tiles.cuh"])])
def test_kernels_use_the_shared_names(name, files):
    for f in files:
        assert re.search(rf"\b{name}\b", _code(KERNEL_DIR / f)), (name, f)


def test_float_defines_read_back_as_the_same_float32():
    values = compile_defines()
    for option in compile_options():
        name, _, text = option[2:].partition("=")
        if option.startswith("-D") and text.endswith("f") and "." in text:
            assert np.float32(float(text[:-1])) == np.float32(values[name]), name
