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
    (("-use_fast_math", "-ftz=false"), False),      # an explicit -ftz wins over fast math, in either order
    (("-ftz=false", "--use_fast_math"), False),
    (("--use_fast_math=true",), False),              # not a flag NVRTC takes: it refuses the compile
    (("-lineinfo", "--maxrregcount=32"), False),
])
def test_flushes_reads_the_last_ftz_and_fast_math(options, expected):
    assert flushes(options) is expected


@pytest.mark.parametrize("options", [("-ftz=true", "--maxrregcount=32"), ("--use_fast_math", "-Xptxas", "-O1"),
                                     ("--ptxas-options=-v", "-ftz=true")])
def test_ptxas_options_with_flushing_are_refused_by_render_compile_and_the_gpu_path_alike(tmp_path, options):
    """Such a file would reach the GPU as PTX, where ptxas's options do not apply: both sides
    say so instead of dropping them (render compile fails it before compiling)."""
    from circle_render.commands.compile import compile_file
    from circle_render.cuda.nvrtc import StudentCompileError, cached_cubin, ptx_conflict
    k = tmp_path / "k.cu"
    k.write_text('extern "C" __global__ void k(float* o) { o[0] = o[1] * o[2]; }\n')
    result = compile_file(k, options=options)
    assert not result.ok and "cannot be combined with -ftz=true or --use_fast_math" in result.log
    assert "\n" not in result.log and ("-Xptxas -O1" in result.log) == ("-Xptxas" in options)
    with pytest.raises(StudentCompileError, match="reaches the GPU as PTX"):
        cached_cubin(k.read_text(), k.name, options)                 # refused before NVRTC is asked
    assert ptx_conflict(("--maxrregcount=32",)) is None and ptx_conflict(("-ftz=true",)) is None
    assert ptx_conflict(("-ftz=true", "-ftz=false", "--maxrregcount=32")) is None
