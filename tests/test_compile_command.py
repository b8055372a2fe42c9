"""`render compile`: a student's kernel compiled as the GPU path compiles it, without a GPU
(NVRTC from its library; CI installs the nvidia-cuda-nvrtc wheel); student compiles see only
the CR_ constants; the course-compatible layer's host side without a GPU."""
import os
import re
import shutil

import pytest
from test_cli import ROOT, render

from circle_render.commands.compile import load_nvrtc
from circle_render.cuda.module import KERNEL_DIR, compile_options, student_compile_options
from circle_render.cuda.student import COURSE_PARAMS, SCENE_KINDS, scene_kind
from circle_render.scenes import SCENE_NAMES, make_scene

NVRTC = load_nvrtc()
needs_nvrtc = pytest.mark.skipif(NVRTC is None, reason="needs NVRTC, CUDA's compiler library: pip install -e '.[compile]'")
needs_compiler = pytest.mark.skipif(NVRTC is None and shutil.which("nvcc") is None,
                                    reason="needs a CUDA compiler: NVRTC (pip install -e '.[compile]') or nvcc on PATH")


def test_ci_has_nvrtc():
    # .ci/run installs the NVRTC wheel and sets this: the tests below must run there
    if os.environ.get("CIRCLE_RENDER_REQUIRE_NVRTC"):
        assert NVRTC is not None, "CIRCLE_RENDER_REQUIRE_NVRTC is set and NVRTC was not found"


@needs_compiler
def test_the_scaffold_and_the_ports_compile(tmp_path):
    p = render("compile", str(ROOT / "assignment" / "my_renderer.py"),
               str(ROOT / "examples" / "course_port" / "tiled_scan.cu"),
               str(ROOT / "examples" / "course_port" / "sort_by_tile.cu"), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.count(": compiles (") == 3 and "my_renderer.cu: compiles" in p.stdout


@needs_compiler
def test_a_file_in_the_current_folder_is_that_file(tmp_path):
    # a bare name is the student's file, not one of the package's kernels
    for name in ("my_renderer.py", "my_renderer.cu"):
        shutil.copy(ROOT / "assignment" / name, tmp_path / name)
    for arg in ("my_renderer.py", "my_renderer.cu", "./my_renderer.cu"):
        p = render("compile", arg, cwd=tmp_path)
        assert p.returncode == 0 and "my_renderer.cu: compiles (" in p.stdout, (arg, p.stdout, p.stderr)


@needs_nvrtc
def test_uint_without_the_headers_fails_as_on_the_gpu(tmp_path):
    # nvcc takes `uint` from glibc; NVRTC, which CuPy uses on the GPU, has no such header
    k = tmp_path / "k.cu"
    k.write_text('extern "C" __global__ void k(uint* out) { out[0] = 1; }\n')
    p = render("compile", str(k), cwd=tmp_path)
    assert p.returncode == 1 and "FAILED (NVRTC" in p.stdout
    assert 'identifier "uint" is undefined' in p.stderr
    k.write_text('#include "helpers.cuh"\nextern "C" __global__ void k(uint* out) { out[0] = 1; }\n')
    assert render("compile", str(k), cwd=tmp_path).returncode == 0


@needs_nvrtc
def test_errors_give_the_students_own_line_numbers(tmp_path):
    """The headers are pasted into the source before compiling; #line keeps the messages on the
    student's lines."""
    lines = (ROOT / "assignment" / "my_renderer.cu").read_text().splitlines()
    lines[11] = "  this is not C;"
    k = tmp_path / "mine.cu"
    k.write_text("\n\n" + "\n".join(lines) + "\n")           # blank lines before the includes too
    p = render("compile", str(k), cwd=tmp_path)
    assert p.returncode == 1 and "mine.cu(14): error" in p.stderr, p.stderr


@needs_compiler
def test_a_students_own_macros_are_not_redefinitions(tmp_path):
    k = tmp_path / "k.cu"
    k.write_text('#define TILE_SIZE 32\n#define BLOCK_THREADS 1024\n#define DT 0.5f\n#include "course_compat.cuh"\n'
                 '#include "helpers.cuh"\nextern "C" __global__ void k(float* o) { o[0] = TILE_SIZE * DT + MINE; }\n')
    p = render("compile", str(k), "-D", "MINE=3", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "warning" not in p.stderr.lower()


def test_student_compiles_see_only_prefixed_constants():
    names = [re.match(r"-D(\w+)=", o).group(1) for o in student_compile_options() if o.startswith("-D")]
    assert names and all(n.startswith("CR_") for n in names)
    assert "-DTILE_SIZE=16" in compile_options() and not any("TILE_SIZE" in n for n in names)
    assert student_compile_options({"TILE": 32})[-1] == "-DTILE=32"


def test_every_prefixed_constant_helpers_uses_is_given():
    given = {re.match(r"-D(\w+)=", o).group(1) for o in student_compile_options() if o.startswith("-D")}
    used = set()
    for header in ("helpers.cuh", "course_compat.cuh"):
        used |= set(re.findall(r"\bCR_\w+", (KERNEL_DIR / header).read_text()))
    assert used and used <= given


def test_plain_kernels_and_course_headers_are_named(tmp_path):
    k = tmp_path / "k.cu"
    k.write_text('#include "exclusiveScan.cu_inl"\n__global__ void kernelRenderCircles() {}\n')
    p = render("compile", str(k), cwd=tmp_path)
    assert p.returncode == 1
    assert "exclusiveScan.cu_inl" in p.stderr and "kernelRenderCircles is not extern \"C\"" in p.stderr


def test_bad_paths_are_one_line_errors(tmp_path):
    for arg, said in ((tmp_path / "none.cu", "no such file"), (ROOT / "README.md", "not a .cu or .py file")):
        p = render("compile", str(arg), cwd=tmp_path)
        assert p.returncode == 2 and said in p.stderr and p.stderr.strip().count("\n") == 0
    py = tmp_path / "r.py"
    py.write_text("x = 1\n")
    p = render("compile", str(py), cwd=tmp_path)
    assert p.returncode == 2 and "names no .cu file" in p.stderr
    p = render("compile", str(ROOT / "assignment" / "my_renderer.cu"), "-D", "1BAD", cwd=tmp_path)
    assert p.returncode == 2 and "NAME=VALUE" in p.stderr


def test_the_parameter_block_matches_the_header():
    header = (KERNEL_DIR / "course_compat.cuh").read_text()
    assert f"sizeof(GlobalConstants) == {COURSE_PARAMS.itemsize}" in header
    fields = re.search(r"struct GlobalConstants \{(.*?)\};", header, re.S).group(1)
    assert re.findall(r"(\w+);", fields) == list(COURSE_PARAMS.names)
    enum = re.search(r"enum SceneName \{(.*?)\};", header, re.S).group(1).split(",")
    course = ["CIRCLE_RGB", "CIRCLE_RGBY", "CIRCLE_TEST_10K", "CIRCLE_TEST_100K", "PATTERN", "SNOWFLAKES",
              "FIREWORKS", "HYPNOSIS", "BOUNCING_BALLS", "SNOWFLAKES_SINGLE_FRAME", "BIG_LITTLE", "LITTLE_BIG",
              "CIRCLE_TEST_1M", "MICRO_2M"]
    assert [e.strip() for e in enum][:len(course)] == course == [course[SCENE_KINDS[n]] for n in SCENE_KINDS]
    assert set(SCENE_KINDS) == set(SCENE_NAMES)


def test_scene_kinds_of_scene_files():
    s = make_scene("snowsingle")
    s.name = "from-a-file"
    assert scene_kind(s) == SCENE_KINDS["snowsingle"]
    r = make_scene("rgb")
    r.name = "mine"
    assert scene_kind(r) == len(SCENE_KINDS) and scene_kind(make_scene("pattern")) == SCENE_KINDS["pattern"]
