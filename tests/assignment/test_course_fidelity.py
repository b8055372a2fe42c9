"""The same-call proof's tools without a GPU: the course-style originals splice into the course's
file, their device code is their ports' but for the lines README.md lists, and
benchmarks/course_fidelity.py reads the course's checker and scores both tables from one
render check record with the project's own scoring."""
import sys

import pytest
from helpers import ROOT

PORTS = ROOT / "examples" / "course_port"
sys.path.insert(0, str(ROOT / "benchmarks"))

import course_fidelity  # noqa: E402
from course_splice import kernel_diff, parts, splice  # noqa: E402

from circle_render.course import RULES, scene_score  # noqa: E402

DESIGNS = sorted(course_fidelity.DESIGNS)

# The shape of the course's cudaRenderer.cu around the three places a student's code goes.
COURSE = """#include "cudaRenderer.h"
__global__ void kernelRenderCircles() { }
CudaRenderer::CudaRenderer() { image = NULL; }
void CudaRenderer::setup() {
    cudaMemcpyToSymbol(cuConstRendererParams, &params, sizeof(GlobalConstants));  // "}" in a string
}
void CudaRenderer::render() {
    kernelRenderCircles<<<gridDim, blockDim>>>();
    cudaDeviceSynchronize();
}
"""


@pytest.mark.parametrize("design", DESIGNS)
def test_every_original_splices_into_the_courses_file(design):
    original = (PORTS / f"{design}_course.cu").read_text()
    kernels, setup, render = parts(original)
    whole = splice(original, COURSE, f"{design}_course.cu")
    assert whole.index(kernels) < whole.index("CudaRenderer::CudaRenderer()")
    assert whole.index(setup) < whole.index("void CudaRenderer::render()")
    assert "kernelRenderCircles<<<" not in whole and render in whole     # render()'s body replaced
    assert "cudaDeviceSynchronize();" not in render                      # the harness synchronizes


@pytest.mark.parametrize("design", DESIGNS)
def test_an_originals_device_code_is_its_ports_but_for_the_lines_the_readme_lists(design):
    diff = kernel_diff((PORTS / f"{design}_course.cu").read_text(), (PORTS / f"{design}.cu").read_text())
    assert diff in (PORTS / "README.md").read_text()                   # the README shows it, current
    changed = [line for line in diff.splitlines() if line[:1] in "+-" and line[1:].strip()]
    allowed = ('#include "', "//", "__global__", 'extern "C" __global__', "__device__ __forceinline__ void")
    assert all(line[1:].lstrip().startswith(allowed) for line in changed), changed


@pytest.mark.parametrize("design", ["tile_lists", "sort_by_tile"])
def test_the_multi_launch_originals_do_what_their_ports_do(design):
    """The host code the README's table pairs with the port's calls: no allocation, read or
    synchronize a frame for a still scene (a CUDA graph), thrust and CUB from a pool."""
    _, setup, render = parts((PORTS / f"{design}_course.cu").read_text())
    assert "captureFrame(stillFrame)" in setup and "cudaGraphLaunch(frameGraph, 0)" in render
    original = (PORTS / f"{design}_course.cu").read_text()
    for forbidden in ("cudaMalloc(", "cudaFree(", "device_vector", "cudaDeviceSynchronize();"):
        assert forbidden not in original.split("// ---- the host code")[1].replace("// no cudaDeviceSynchronize()", "")
    port = (PORTS / "course_ports.py").read_text()
    assert "self.use_graph = self.graph_still and not self.animated" in port


def checker_output(rows):
    """What the course's checker.py prints: each scene's runs, then its score table."""
    out = []
    for scene, (t, tref, _) in rows.items():
        if t is not None:
            out.append(f"[{scene}] Student times:  [{t}, {t * 1.01}, {t * 1.02}]")
        out.append(f"[{scene}] Reference times:  [{tref}, {tref}, {tref}]")
    out += ["------------", "Score table:", "------------", "-" * 77,
            f"| {'Scene Name':<15} | {'Ref Time (T_ref)':<16} | {'Your Time (T)':<15} | {'Score':<15} |", "-" * 77]
    for scene, (t, tref, pts) in rows.items():
        out.append(f"| {scene:<15} | {tref!s:<16} | {'(F)' if t is None else t!s:<15} | {pts!s:<15} |")
    return "\n".join(out)


def test_the_checkers_table_is_read_with_its_runs():
    rows = course_fidelity.parse_checker(checker_output({"rgb": (0.0894, 0.1087, 9), "rand10k": (None, 0.4957, 0)}))
    assert rows["rgb"] == {"passed": True, "t": 0.0894, "tref": 0.1087, "points": 9,
                           "t_runs": [0.0894, 0.0894 * 1.01, 0.0894 * 1.02], "tref_runs": [0.1087] * 3}
    assert rows["rand10k"]["passed"] is False and rows["rand10k"]["t"] is None


def check_record(scenes):
    return {"scenes": [{"scene": s, "passed": True, "t_ms": t, "tf_stored_ms": stored, "tf_live_ms": live}
                       for s, (t, stored, live) in scenes.items()]}


def test_both_tables_come_from_one_record_scored_by_the_course_module():
    cs149 = RULES["cs149"].scenes
    course = {s: {"passed": True, "t": 1.0, "tref": 1.0, "points": 9} for s in cs149}
    course["rgb"] = {"passed": True, "t": 0.2, "tref": 0.1, "points": 6}
    check = check_record(dict.fromkeys(cs149, (1.0, 1.0, 1.0)))
    check["scenes"][0].update(t_ms=0.2, tf_stored_ms=0.1, tf_live_ms=0.05)     # rgb: live stricter
    text, summary = course_fidelity.table("port", "cs149", course, check)
    assert summary["course"] == 6 + 7 * 9
    assert summary["stored"] == {"total": 69, "diff": 0, "worst_scene_diff": 0, "proof": True}
    live_rgb = scene_score(RULES["cs149"], True, 0.2, 0.05)
    assert live_rgb == 4 and summary["live"]["diff"] == -2 and not summary["live"]["proof"]   # a scene 2 off
    assert "rgb" in text and "Tf stored" in text and "Tf live" in text
    _, cmu = course_fidelity.table("port", "cmu", course, check)
    assert cmu["course"] == scene_score(RULES["cmu"], True, 0.2, 0.1) + 5 * 12


def test_a_gpu_without_stored_times_gets_the_live_table_alone():
    course = {s: {"passed": True, "t": 1.0, "tref": 1.0, "points": 9} for s in RULES["cs149"].scenes}
    check = check_record(dict.fromkeys(RULES["cs149"].scenes, (1.0, None, 1.0)))
    text, summary = course_fidelity.table("port", "cs149", course, check)
    assert "stored" not in summary and summary["live"]["proof"] and "Tf stored" not in text


def test_a_missing_row_fails_the_proof():
    course = {s: {"passed": True, "t": 1.0, "tref": 1.0, "points": 9} for s in RULES["cs149"].scenes if s != "rgb"}
    check = check_record(dict.fromkeys(RULES["cs149"].scenes, (1.0, 1.0, 1.0)))
    _, summary = course_fidelity.table("port", "cs149", course, check)
    assert summary["missing"] == ["rgb"] and not summary["live"]["proof"]


def test_the_checkers_own_points_count_under_its_rules_and_a_disagreement_shows():
    course = {s: {"passed": True, "t": 1.0, "tref": 1.0, "points": 9} for s in RULES["cs149"].scenes}
    course["rgb"]["points"] = 8                                  # not what its T and Tref give
    check = check_record(dict.fromkeys(RULES["cs149"].scenes, (1.0, 1.0, 1.0)))
    text, summary = course_fidelity.table("port", "cs149", course, check)
    assert summary["course"] == 71 and "(course.scene_score gives 9)" in text


def test_the_original_timed_without_f_gives_the_port_over_it(tmp_path):
    """--no-f: the original's own binary run as the checker runs it but without -f, the min Total
    of three runs a scene; the table then shows the port's measured T (no -f cost) over it."""
    render = tmp_path / "render"
    render.write_text('#!/bin/sh\ncase "$*" in *-f*) exit 3;; esac\n'            # never given -f
                      'case "$5" in rgb) echo "Total:    0.0500 ms";; *) echo "Total:    2.0000 ms";; esac\n')
    render.chmod(0o755)
    scenes = RULES["cs149"].scenes
    plain = course_fidelity.time_without_f(tmp_path, tmp_path, scenes)
    assert plain["rgb"] == {"min": 0.05, "runs": [0.05] * 3} and plain["rand1M"]["min"] == 2.0
    course = {s: {"passed": True, "t": 1.0, "tref": 1.0, "points": 9} for s in scenes}
    check = check_record(dict.fromkeys(scenes, (1.0, 1.0, 1.0)))
    for s in check["scenes"]:
        s["t_measured_ms"] = 0.06 if s["scene"] == "rgb" else 2.0
    text, _ = course_fidelity.table("port", "cs149", course, check, plain)
    assert "port/orig no -f" in text
    rgb = next(line for line in text.splitlines() if line.startswith("rgb "))
    assert rgb.split()[-1] == "1.200"
    assert "no -f" not in course_fidelity.table("port", "cs149", course, check)[0]
