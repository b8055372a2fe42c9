"""`render compile`: a student's kernel compiled as the GPU path compiles it, without a GPU
(NVRTC from its library; CI installs the nvidia-cuda-nvrtc wheel); student compiles see only
the CR_ constants; the course-compatible layer's host side without a GPU."""
import os
import re
import shutil

import pytest
from helpers import ROOT, render

from circle_render.commands.compile import load_nvrtc
from circle_render.cuda.module import KERNEL_DIR, compile_options, student_compile_options
from circle_render.cuda.student import COURSE_PARAMS, SCENE_KINDS, scene_kind
from circle_render.scenes import SCENE_NAMES, make_scene

NVRTC = load_nvrtc()
needs_nvrtc = pytest.mark.skipif(NVRTC is None,
                                 reason="needs NVRTC, CUDA's compiler library: pip install -e '.[compile]'")
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
    assert p.stdout.count(": compiles (") == 3
    assert "my_renderer.cu for my_renderer.py:StudentRenderer: compiles" in p.stdout


@needs_compiler
def test_a_file_in_the_current_folder_is_that_file(tmp_path):
    # a bare name is the student's file, not one of the package's kernels
    for name in ("my_renderer.py", "my_renderer.cu"):
        shutil.copy(ROOT / "assignment" / name, tmp_path / name)
    for arg in ("my_renderer.py", "my_renderer.cu", "./my_renderer.cu"):
        p = render("compile", arg, cwd=tmp_path)
        assert p.returncode == 0, (arg, p.stderr)
        assert "my_renderer.cu" in p.stdout and ": compiles (" in p.stdout, (arg, p.stdout)


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
    # names students give their own macros, defined before the headers (the course's scan wants
    # SCAN_BLOCK_DIM before its header, so a port keeps them there)
    k.write_text('#define TILE_SIZE 32\n#define BLOCK_THREADS 1024\n#define DT 0.5f\n#define THREADS 1024\n'
                 '#define WARPS 32\n#define SCAN_BLOCK_DIM THREADS\n#include "course_compat.cuh"\n'
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


@needs_compiler
def test_plain_kernels_and_course_headers_are_named(tmp_path):
    k = tmp_path / "k.cu"
    k.write_text('#include "exclusiveScan.cu_inl"\n__global__ void kernelRenderCircles() {}\n')
    p = render("compile", str(k), cwd=tmp_path)
    assert p.returncode == 1 and 'include "course_compat.cuh" instead' in p.stderr, p.stderr
    k.write_text('#include "course_compat.cuh"\n__global__ void kernelRenderCircles() {}\n'
                 'extern "C" { __global__ void fine() {} }\nextern "C" __global__ void alsoFine() {}\n')
    p = render("compile", str(k), cwd=tmp_path)
    assert p.returncode == 1 and "FAILED" in p.stdout
    assert p.stderr.count("is not extern") == 1 and 'kernel kernelRenderCircles is not extern "C"' in p.stderr


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
    fields = re.search(r"struct GlobalConstants \{(.*?)\};", header, re.DOTALL).group(1)
    assert re.findall(r"(\w+);", fields) == list(COURSE_PARAMS.names)
    enum = re.search(r"enum SceneName \{(.*?)\};", header, re.DOTALL).group(1).split(",")
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


# Every form of #include the preprocessor accepts reaches the same header, from any folder: the
# GPU path and render compile both inline it (kernel_source), so neither depends on the folder
# the command runs in (NVRTC looks for a header it is left in the current folder).
INCLUDE_FORMS = {
    "trailing line comment": '#include "mine.cuh"  // my header',
    "trailing block comment": '#include "mine.cuh" /* my header */',
    "comment before": '/* first */ #include "mine.cuh"',
    "spaces and tabs": ' \t#  \tinclude\t "mine.cuh" ',
    "no space": '#include"mine.cuh"',
    "continued line": '#include \\\n  "mine.cuh"',
    "continued after #": '# \\\ninclude "mine.cuh"',
    "crlf": '#include "mine.cuh"\r',
    "in a subfolder, including its neighbour": '#include "sub/outer.cuh"',
    "angled, from the package": '#include <course_compat.cuh>\n#define MINE 3',
}


@needs_compiler
@pytest.mark.parametrize("form", list(INCLUDE_FORMS))
def test_every_include_form_compiles_from_any_folder(tmp_path, form):
    from circle_render.cuda.module import kernel_source
    (tmp_path / "src" / "sub").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "src" / "mine.cuh").write_text("#pragma once\n#define MINE 3\n")
    (tmp_path / "src" / "sub" / "outer.cuh").write_text('#pragma once\n#include "inner.cuh"  // beside me\n')
    (tmp_path / "src" / "sub" / "inner.cuh").write_text("#pragma once\n#define MINE 3\n")
    k = tmp_path / "src" / "k.cu"
    k.write_bytes((INCLUDE_FORMS[form] + '\nextern "C" __global__ void k(float* o) { o[0] = MINE; }\n').encode())
    p = render("compile", str(k), cwd=tmp_path / "elsewhere")
    assert p.returncode == 0, p.stderr
    assert "#define MINE 3" in kernel_source(k)


@needs_compiler
def test_includes_in_comments_are_not_includes_and_guards_decide(tmp_path):
    from circle_render.cuda.module import kernel_source
    (tmp_path / "bad.cuh").write_text("#error this header must not be read\n")
    (tmp_path / "guarded.cuh").write_text('#ifndef GUARDED\n#define GUARDED\n#include "guarded.cuh"\n'
                                          "__device__ int twice() { return 2; }\n#endif\n")
    (tmp_path / "count.cuh").write_text("COUNT += 1;\n")          # no guard: pasted at every include
    k = tmp_path / "k.cu"
    k.write_text('// #include "bad.cuh"\n/* and\n#include "bad.cuh"\n*/\n#include "guarded.cuh"\n'
                 '#include "guarded.cuh"\n__device__ const char* s = "#include \\"bad.cuh\\"";\n'
                 'extern "C" __global__ void k(int* o) { int COUNT = 0;\n#include "count.cuh"\n'
                 '#include "count.cuh"\n o[0] = COUNT + twice(); }\n')
    p = render("compile", str(k), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert kernel_source(k).count("COUNT += 1;") == 2 and "must not be read" not in kernel_source(k)


@needs_compiler
def test_a_missing_header_fails_and_says_where_it_was_looked_for(tmp_path):
    k = tmp_path / "k.cu"
    k.write_text('#include "nowhere.cuh"   // a comment\nextern "C" __global__ void k() {}\n')
    p = render("compile", str(k), cwd=tmp_path)
    assert p.returncode == 1 and "FAILED" in p.stdout
    assert '"nowhere.cuh" is neither beside the file that includes it nor in' in p.stderr


def test_missing_headers_are_named_in_either_compilers_words(tmp_path):
    # the notes come from the compiler's log: NVRTC's words and nvcc's (its preprocessor's, when
    # render compile falls back to nvcc), as each printed them for the same two includes
    from circle_render.commands.compile import _hints
    k = tmp_path / "k.cu"
    nvrtc = ('k.cu(1): catastrophic error: cannot open source file "exclusiveScan.cu_inl"\n'
             'k.cu(2): catastrophic error: cannot open source file "nowhere.cuh"\n')
    nvcc = ("k.cu:1:10: fatal error: exclusiveScan.cu_inl: No such file or directory\n"
            "    1 | #include \"exclusiveScan.cu_inl\"\ncompilation terminated.\n"
            "k.cu:2:10: fatal error: nowhere.cuh: No such file or directory\n")
    for log in (nvrtc, nvcc):
        notes = _hints(log, k)
        assert len(notes) == 2, (log, notes)
        assert '"exclusiveScan.cu_inl" is one of the course\'s headers: include "course_compat.cuh"' in notes[0]
        assert '"nowhere.cuh" is neither beside the file that includes it nor in' in notes[1]
    uint = _hints("k.cu(3): error: identifier \"uint\" is undefined\n", k)      # no header note; uint's own
    assert len(uint) == 1 and "`uint` is not a CUDA type" in uint[0]


@needs_compiler
def test_any_bytes_the_compiler_reads(tmp_path):
    k = tmp_path / "k.cu"
    body = b'extern "C" __global__ void k(float* o) { o[0] = 1; }\n'
    k.write_bytes(b"\xef\xbb\xbf// caf\xe9 \xff\xfe latin-1 in a comment\n" + body)     # a BOM, then bytes not UTF-8
    (tmp_path / "h.cuh").write_bytes(b"\xef\xbb\xbf#pragma once\n// \xe9\n#define H 1\n")
    p = render("compile", str(k), cwd=tmp_path)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    k.write_bytes(b'#include "h.cuh"\n' + body)              # a BOM mid-file would be a stray character
    assert render("compile", str(k), cwd=tmp_path).returncode == 0
    k.write_bytes(b"\xe9" + body)                              # a stray byte in code: the compiler's error
    p = render("compile", str(k), cwd=tmp_path)
    assert p.returncode == 1 and "FAILED" in p.stdout and "Traceback" not in p.stderr


@needs_compiler
def test_options_are_the_courses_and_the_students_own(tmp_path):
    k = tmp_path / "k.cu"
    k.write_text('extern "C" __global__ void k(float* o) { o[0] = o[1] * o[2] + o[3]; }\n')
    p = render("compile", str(k), cwd=tmp_path)
    assert p.returncode == 0 and "options --std=c++17 --fmad=true --device-as-default-execution-space (and" in p.stdout
    p = render("compile", str(k), "--option=--fmad=false", "--option", "-lineinfo", cwd=tmp_path)
    assert p.returncode == 0 and "options --std=c++17 --device-as-default-execution-space --fmad=false -lineinfo (and" \
        in p.stdout, p.stdout
    p = render("compile", str(k), "--option=--no-such-option", cwd=tmp_path)
    assert p.returncode == 1 and "FAILED" in p.stdout
    p = render("compile", str(k), "--option=fmad", cwd=tmp_path)
    assert p.returncode == 2 and "start with '-'" in p.stderr


@needs_compiler
def test_ptxas_limits_and_host_helpers_as_on_the_gpu(tmp_path):
    """A helper without __device__ compiles (NVRTC compiles none for the host, as on the GPU);
    a kernel over ptxas's limits fails here as on the GPU (NVRTC's ptxas stage, sm_75)."""
    helper = tmp_path / "helper.cu"
    helper.write_text('float twice(float v) { return 2 * v; }\n'
                      'extern "C" __global__ void run(float* out) { out[0] = twice(out[0]); }\n')
    assert render("compile", str(helper), cwd=tmp_path).returncode == 0
    big = tmp_path / "big.cu"
    big.write_text('extern "C" __global__ void run(float* out) { __shared__ float s[40000]; s[threadIdx.x] = out[0]; '
                   '__syncthreads(); out[threadIdx.x] = s[(threadIdx.x + 1) % 40000]; }\n')
    p = render("compile", str(big), cwd=tmp_path)
    if "nvcc" not in p.stdout:                      # nvcc's -ptx stops before ptxas
        assert p.returncode == 1 and "FAILED" in p.stdout and "shared data" in p.stderr, (p.stdout, p.stderr)


@needs_compiler
def test_a_renderer_file_compiles_each_class_with_its_own_options(tmp_path):
    shutil.copy(ROOT / "assignment" / "my_renderer.cu", tmp_path / "my_renderer.cu")
    (tmp_path / "r.py").write_text(
        "from pathlib import Path\nfrom circle_render.cuda.student import ScaffoldRenderer\n"
        "K = Path(__file__).with_name('my_renderer.cu')\n"
        "class Plain(ScaffoldRenderer):\n    kernel_file = K\n"
        "class Exact(ScaffoldRenderer):\n    kernel_file = K\n    defines = {'TILE': 8}\n"
        "    compile_options = ('--fmad=false',)\n")
    p = render("compile", str(tmp_path / "r.py"), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert len(lines) == 2 and "r.py:Plain" in lines[0] and "--fmad=true" in lines[0]
    assert "r.py:Exact" in lines[1] and "-DTILE=8 --fmad=false" in lines[1] and "--fmad=true" not in lines[1]
    (tmp_path / "s.py").write_text("import not_installed_here\nKERNEL = 'my_renderer.cu'\n")
    p = render("compile", str(tmp_path / "s.py"), cwd=tmp_path)
    assert p.returncode == 0 and "could not import it here (ModuleNotFoundError" in p.stderr


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc (the fallback without NVRTC)")
def test_the_nvcc_fallback_compiles_the_scaffold():
    """Without NVRTC, nvcc compiles the scaffold: the options only NVRTC takes are left out."""
    from circle_render.commands.compile import compile_file
    result = compile_file(ROOT / "assignment" / "my_renderer.cu", nvrtc=None)
    assert result.ok and result.compiler.startswith("nvcc"), result.log


@needs_nvrtc
def test_notes_for_uint_and_the_courses_host_headers(tmp_path):
    k = tmp_path / "k.cu"
    k.write_text('extern "C" __global__ void k(uint* out) { out[0] = 1; }\n')
    p = render("compile", str(k), cwd=tmp_path)
    assert p.returncode == 1 and 'include "helpers.cuh" or "course_compat.cuh"' in p.stderr, p.stderr
    for header in ("<stdio.h>", '"cudaRenderer.h"', "<thrust/sort.h>"):
        k.write_text(f'#include {header}\nextern "C" __global__ void k(float* out) {{ out[0] = 1; }}\n')
        p = render("compile", str(k), cwd=tmp_path)
        assert p.returncode == 1 and "serves the course's host code" in p.stderr, (header, p.stderr)


def test_a_bad_arch_is_named(tmp_path):
    p = render("compile", "--arch", "90", str(ROOT / "assignment" / "my_renderer.cu"), cwd=tmp_path)
    assert p.returncode == 2 and "--arch '90': give a GPU architecture such as compute_75" in p.stderr, p.stderr


def test_no_compiler_names_the_compile_extra(monkeypatch):
    from circle_render.commands import compile as compile_cmd
    from circle_render.errors import UserError
    monkeypatch.setattr(compile_cmd, "load_nvrtc", lambda: None)
    monkeypatch.setattr(compile_cmd.shutil, "which", lambda name: None)
    with pytest.raises(UserError, match=r"\.\[compile\]"):
        compile_cmd.compile_command((str(ROOT / "assignment" / "my_renderer.cu"),), "compute_75", ())


@needs_nvrtc
def test_ctrl_c_during_a_compile_ends_it_at_once(tmp_path):
    """NVRTC's front end ends its process with status 4 on Ctrl-C, and its later stages hold
    Ctrl-C until they are done: the compile runs in a child, and the command exits 130 at once."""
    import signal
    import subprocess
    import sys
    import time
    body = "\n".join(f"    x = x * {1 + i * 1e-6:.7f}f + sinf(x * {i}.0f);" for i in range(300))
    k = tmp_path / "slow.cu"
    k.write_text('extern "C" __global__ void k(float* o) { float x = o[0];\n' + body + "\n o[1] = x; }\n")
    for delay in (1.5, 3.0):                       # the front end, then the optimizer
        p = subprocess.Popen([sys.executable, "-m", "circle_render", "compile", str(k)], cwd=tmp_path,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(ROOT)},
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        time.sleep(delay)
        sent = time.monotonic()
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
        assert p.returncode == 130 and time.monotonic() - sent < 2, (p.returncode, err)
        assert err.strip().splitlines()[-1] == "render: interrupted; no partial output was written"
        assert "Traceback" not in err


def test_the_host_side_scene_names_are_the_courses():
    from circle_render.cuda.student import CUSTOM_SCENE, SceneName
    header = (KERNEL_DIR / "course_compat.cuh").read_text()
    enum = [e.strip() for e in re.search(r"enum SceneName \{(.*?)\};", header, re.DOTALL).group(1).split(",")]
    assert [m.name for m in SceneName] == enum and SceneName.CUSTOM_SCENE == CUSTOM_SCENE
    assert all(SceneName(SCENE_KINDS[n]) == SCENE_KINDS[n] for n in SCENE_NAMES)


@needs_compiler
def test_a_students_own_copy_of_a_course_helper(tmp_path):
    """A changed shadePixel with the course's parameters, or the course's scan kept beside the
    file, is a second definition unless COURSE_OWN_... leaves the name to the student."""
    own = ('__device__ __inline__ void shadePixel(int i, float2 c, float3 p, float4* img) { img->x = 1.f; }\n'
           '__device__ __inline__ void sharedMemExclusiveScan(int t, uint* in, uint* out, volatile uint* s, uint n) '
           '{ out[t] = 0; }\n'
           'extern "C" __global__ void k(float4* img) {\n'
           '    shadePixel(0, make_float2(0, 0), make_float3(0, 0, 0), img);\n}\n')
    k = tmp_path / "k.cu"
    k.write_text('#include "course_compat.cuh"\n' + own)
    assert render("compile", str(k), cwd=tmp_path).returncode == 1
    k.write_text('#define COURSE_OWN_SHADE_PIXEL\n#define COURSE_OWN_SCAN\n#include "course_compat.cuh"\n' + own)
    p = render("compile", str(k), cwd=tmp_path)
    assert p.returncode == 0, p.stderr


@needs_compiler
def test_a_classs_bad_options_or_defines_fail_its_compile_in_one_line(tmp_path):
    """A str for compile_options, a define of None: the GPU path's own checks refuse them
    (student_compile_options), and render compile says so per class, exit 1, no traceback."""
    (tmp_path / "k.cu").write_text('extern "C" __global__ void k(float* o) { o[0] = 1; }\n')
    (tmp_path / "r.py").write_text(
        "class Text:\n    kernel_file = 'k.cu'\n    compile_options = '--fmad=false'\n"
        "class NoValue:\n    kernel_file = 'k.cu'\n    defines = {'FLAG': None}\n"
        "class Fine:\n    kernel_file = 'k.cu'\n    defines = {'FLAG': True}\n")
    p = render("compile", "r.py", cwd=tmp_path)
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    assert "compile options must be a tuple of strings" in p.stderr and "FLAG=None" in p.stderr
    assert "k.cu for r.py:Fine: compiles" in p.stdout, p.stdout
    from circle_render.cuda.module import student_compile_options
    with pytest.raises(ValueError, match="FLAG=None"):
        student_compile_options({"FLAG": None})
