"""Make the whole cudaRenderer.cu a student hands in to the course, from one of this project's
course-style originals (examples/course_port/*_course.cu) and the course's own cudaRenderer.cu
(the copy in the harness folder that ../shared/tools/course-harness/build.sh makes, .course/):
the original's kernels go after the course's own kernels, its set-up code at the end of
CudaRenderer::setup(), its frame as the body of CudaRenderer::render(). The result is written
outside the project's tree (it holds the course's code) and graded by the course's checker
(benchmarks/device/course_fidelity.sh).

An original is in three parts, each after a marker line:

    (kernels, device globals, course includes: everything before the first marker)
    // ---- host: setup ----     statements run at the end of CudaRenderer::setup()
    // ---- host: render ----    the body of CudaRenderer::render()

    python benchmarks/course_splice.py ORIGINAL.cu .course/harness/render/cudaRenderer.cu -o OUT.cu

Headers the original includes from beside it (examples/course_port/cupy_calls.cuh) go beside the
spliced file (course_fidelity.py copies them). ``kernel_diff`` is the diff of an original's
device code against its port's that examples/course_port/README.md shows (a test keeps it current).
"""
from __future__ import annotations

import argparse
import difflib
import re
from pathlib import Path

MARKERS = ("// ---- host: setup ----", "// ---- host: render ----")


def parts(original: str) -> tuple[str, str, str]:
    """(kernels, setup statements, render body) of a course-style original."""
    lines = original.splitlines(keepends=True)
    found = [i for i, line in enumerate(lines) if line.strip() in MARKERS]
    names = [lines[i].strip() for i in found]
    if names != list(MARKERS):
        raise ValueError(f"expected the marker lines {MARKERS} once each, in that order; found {names}")
    setup_at, render_at = found
    return "".join(lines[:setup_at]), "".join(lines[setup_at + 1:render_at]), "".join(lines[render_at + 1:])


def _body(text: str, signature: str) -> tuple[int, int]:
    """(start, end) of the body of the function whose definition begins with ``signature``
    (between its braces, exclusive), comments and string literals not counted."""
    from circle_render.cuda.module import _blank_comments
    m = re.search(signature, text)
    if m is None:
        raise ValueError(f"the course's cudaRenderer.cu has no {signature!r}: is it the CS149 harness?")
    blank = re.sub(r'"(?:\\.|[^"\\\n])*"', lambda s: " " * len(s.group()), _blank_comments(text))
    start = blank.index("{", m.end() - 1) + 1
    depth = 1
    for i in range(start, len(blank)):
        depth += {"{": 1, "}": -1}.get(blank[i], 0)
        if depth == 0:
            return start, i
    raise ValueError(f"unbalanced braces after {signature!r}")


def splice(original: str, course: str, name: str = "original") -> str:
    kernels, setup, render = parts(original)
    r0, r1 = _body(course, r"\bCudaRenderer::render\(\)\s*\{")
    course = course[:r0] + f"\n// ---- render(): {name} ----\n{render}" + course[r1:]
    _, s1 = _body(course, r"\bCudaRenderer::setup\(\)\s*\{")
    course = course[:s1] + f"\n    // ---- the end of setup(): {name} ----\n{setup}" + course[s1:]
    at = re.search(r"^CudaRenderer::CudaRenderer\(\)", course, re.MULTILINE)
    if at is None:
        raise ValueError("the course's cudaRenderer.cu has no CudaRenderer::CudaRenderer()")
    return course[:at.start()] + f"// ---- kernels: {name} ----\n{kernels}\n" + course[at.start():]


HOST_STARTS = ("// ---- host: setup ----", "// ---- the host code")    # where an original's device code ends
PORT_HOST = "// Host side:"                                            # and a port's


def _device_part(text: str, ends: tuple[str, ...]) -> list[str]:
    lines = text.splitlines()
    at = next((i for i, line in enumerate(lines) if line.startswith(ends)), len(lines))
    return lines[:at]


def kernel_diff(original: str, port: str) -> str:
    """The unified diff (two lines of context) from an original's device code (up to its host
    code) to its port's (up to the line that names its host side), headers left out."""
    diff = difflib.unified_diff(_device_part(original, HOST_STARTS), _device_part(port, (PORT_HOST,)),
                                lineterm="", n=2)
    return "\n".join(list(diff)[2:])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("original", type=Path)
    ap.add_argument("course", type=Path, help="the course's cudaRenderer.cu (the harness copy)")
    ap.add_argument("-o", "--output", type=Path, required=True)
    a = ap.parse_args()
    a.output.write_text(splice(a.original.read_text(), a.course.read_text(), a.original.name))


if __name__ == "__main__":
    main()
