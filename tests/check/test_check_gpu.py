"""`render check` on a GPU: the calibrated Tf (the course's design timed live, scaled by its
ratio to the course's binary) gives the course's design full points and the starter none; a
kernel fault in a user's renderer fails that scene only."""
import textwrap

import pytest
from helpers import render, table_rows

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("rules", ["cmu", "cs149"])
def test_calibrated_tf_gives_the_courses_design_full_points(tmp_path, rules):
    p = render("check", "-r", "cuda-tiled", "--rules", rules, "--tf", "live", "-S", "0", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    rows = table_rows(p.stdout)
    assert rows[""][1] == "72/72", p.stdout
    assert all(r[0].endswith("*") for name, r in rows.items() if name)     # every Tf calibrated
    assert "Tf*: cuda-tiled (the course's design) timed live" in p.stdout and "--tf live" in p.stdout


def test_starter_still_fails_under_calibrated_tf(tmp_path):
    p = render("check", "-r", "cuda-starter", "--tf", "live", "-S", "0", cwd=tmp_path)
    assert p.returncode == 1
    rows = table_rows(p.stdout)
    assert rows[""][1] == "0/72" and all(r[1].endswith("(F)") for name, r in rows.items() if name)


FAULTY = """
    import cupy as cp
    from circle_render.cuda.tiled import TiledCudaRenderer

    WILD = cp.RawKernel(r'''extern "C" __global__ void wild(float* p) { p[threadIdx.x] = 1.0f; }''', "wild")

    class Faulty(TiledCudaRenderer):
        needs_gpu = True
        def load(self, scene, width, height):
            self.fault = scene.name == "rgb"
            super().load(scene, width, height)
        def render(self):
            if self.fault:
                WILD((1,), (32,), (cp.uint64(0xdead0000),))   # an illegal address: the context is lost
            super().render()
"""


def test_a_kernel_fault_fails_only_its_scene(tmp_path):
    (tmp_path / "faulty.py").write_text(textwrap.dedent(FAULTY))
    p = render("check", "-r", "faulty.py:Faulty", "-s", "64", "--runs", "1", "--scenes",
               "rgb,pattern", "--baseline", "cuda-tiled", "-S", "0", cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    rows = table_rows(p.stdout)
    assert rows["rgb"][1].endswith("(F)") and "(F)" not in rows["pattern"][1], p.stdout
    log = (tmp_path / "logs" / "rgb.log").read_text()
    assert "illegal" in log.lower() or "SIG" in log, log
