"""Which compiles load PTX instead of a cubin (cuda/nvrtc.py: NVRTC 13.0's cubins kept denormals
under -ftz=true): exactly those whose options ask for denormals flushed."""
import pytest

from circle_render.cuda.nvrtc import flushes


@pytest.mark.parametrize("options, expected", [
    ((), False),
    (("--std=c++17", "--fmad=true"), False),
    (("-ftz=true",), True),
    (("--ftz=true",), True),
    (("-ftz=false",), False),
    (("-ftz=true", "-ftz=false"), False),          # NVRTC takes the last
    (("-ftz=false", "-ftz=true"), True),
    (("--use_fast_math",), True),
    (("-use_fast_math", "-ftz=false"), False),
    (("-lineinfo", "--maxrregcount=32"), False),
])
def test_flushes_reads_the_last_ftz_and_fast_math(options, expected):
    assert flushes(options) is expected
