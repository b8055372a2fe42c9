"""The package as a user installs it: one namespace in the wheel, data found through
importlib.resources, the version, bare `render`, file modes, and the array API."""
import os
import re
import shutil
import subprocess
import sys
import zipfile

import numpy as np
import pytest
from helpers import ROOT, render

import circle_render
from circle_render.cpu.reference import reference_image
from circle_render.io.images import write_image
from circle_render.scenes import make_scene


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    src = out / "src"                        # a copy, so the build leaves no files in the checkout
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".git", "build", "*.egg-info", "__pycache__",
                                                             ".pytest_cache", "logs"))
    p = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                        "-w", str(out), str(src)], capture_output=True, text=True)
    if p.returncode != 0 and "No module named" in p.stderr:
        pytest.skip(f"cannot build a wheel here: {p.stderr.strip().splitlines()[-1]}")
    assert p.returncode == 0, p.stderr
    return next(out.glob("circle_render-*.whl"))


def test_the_wheel_holds_one_namespace_and_its_data(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names}
    assert top == {"circle_render", f"circle_render-{circle_render.__version__}.dist-info"}, top
    for needed in ("circle_render/kernels/draw.cu", "circle_render/kernels/walk.cuh", "circle_render/py.typed",
                   "circle_render/golden/ref_times.json", "circle_render/scenes/course_noise.json",
                   "circle_render/scenes/glibc_powf_depths.json"):
        assert needed in names, needed
    meta = zipfile.ZipFile(wheel).read(f"circle_render-{circle_render.__version__}.dist-info/METADATA").decode()
    assert re.search(r"^License-Expression: MIT$", meta, re.M) and "Project-URL:" in meta
    assert any(n.endswith("licenses/LICENSE") for n in names)


def test_an_installed_copy_runs_from_site_packages(wheel, tmp_path):
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    code = ("import circle_render, numpy as np; from circle_render.timing.bench import source_commit; "
            "from circle_render.cuda.module import kernel_source; "
            "print(circle_render.__version__, source_commit(), len(kernel_source('draw.cu')) > 1000, "
            "circle_render.make_scene('snowsingle').n)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                       env={**os.environ, "PYTHONPATH": str(site)})
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == [circle_render.__version__, "None", "True", "100000"]


def test_an_installed_copy_caches_compiled_code_outside_site_packages(wheel, tmp_path):
    """Cache files inside site-packages outlive `pip uninstall`, and the leftover folder hides a
    later editable install: an installed copy's cpu-fast caches in the user's cache folder."""
    site = tmp_path / "lib" / "site-packages"
    zipfile.ZipFile(wheel).extractall(site)
    code = ("import circle_render; from circle_render.scenes import make_scene; s = make_scene('rgb');"
            "print(circle_render.render(s.position, s.radius, s.color, 8, 8, renderer='cpu-fast').shape)")
    env = {**os.environ, "PYTHONPATH": str(site), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("NUMBA_CACHE_DIR", None)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert p.returncode == 0, p.stderr
    assert not list((site / "circle_render").rglob("*.nbi"))
    assert list((tmp_path / "cache" / "circle-render" / "numba").rglob("*.nbi"))


def test_version_and_bare_render_prints_the_help():
    p = render("--version")
    assert p.returncode == 0 and p.stdout.strip() == f"render (circle-render) {circle_render.__version__}"
    p = render()
    assert p.returncode == 0 and p.stdout.startswith("Usage: render") and "Commands:" in p.stdout
    assert p.stderr == ""


@pytest.mark.parametrize("mask,mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_outputs_get_the_usual_mode(tmp_path, mask, mode):
    old = os.umask(mask)
    try:
        write_image(tmp_path / "x.png", np.zeros((2, 2, 3), np.uint8))
    finally:
        os.umask(old)
    assert (tmp_path / "x.png").stat().st_mode & 0o777 == mode


def test_render_output_mode_follows_the_umask(tmp_path):
    p = subprocess.run(f"umask 022; {sys.executable} -m circle_render rgb -r cpu -s 8 -o x.png "
                       "--save-scene s.circles", shell=True, cwd=tmp_path, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert p.returncode == 0, p.stderr
    assert {f.name: f.stat().st_mode & 0o777 for f in tmp_path.iterdir()} == {"x.png": 0o644, "s.circles": 0o644}


def test_bench_checks_its_output_before_running(tmp_path):
    p = render("bench", "-o", str(tmp_path / "missing" / "r.json"))
    assert p.returncode == 2 and "folder" in p.stderr and "does not exist" in p.stderr
    p = render("bench", "-o", str(tmp_path / "r.txt"))
    assert p.returncode == 2 and "accepted: .json" in p.stderr


# ---- the array API ----

def test_render_array_api_equals_the_reference():
    s = make_scene("rgby")
    img = circle_render.render(s.position[:, :2], s.radius, s.color, 64, 64, renderer="cpu")
    assert img.shape == (64, 64, 4) and img.dtype == np.float32
    assert np.array_equal(img[..., :3], reference_image(s, 64, 64, steps=0)[..., :3])
    assert (img[..., 3] == 1).all()                       # the output alpha over an opaque background


def test_render_array_api_non_square_snow_and_bytes():
    """On a non-square picture circles are round (docs/drawing.md): the unit square's y is
    scaled by H/W, radii are in x units, and snow's gradient runs over the picture's own rows."""
    from circle_render.drawing import Drawing
    s = make_scene("snowsingle")
    img = circle_render.render(s.position, s.radius, s.color, 40, 24, renderer="cpu", shading="snow")
    placed = s.copy()
    placed.position[:, 1] = (s.position[:, 1].astype(np.float64) * (24 / 40)).astype(np.float32)
    placed.drawing = Drawing(np.ascontiguousarray(np.c_[s.color, np.full(s.n, 0.5)], dtype=np.float32))
    assert np.array_equal(img, reference_image(placed, 40, 24, steps=0))
    assert circle_render.to_bytes(img).shape == (24, 40, 3)


@pytest.mark.parametrize("args,message", [
    (([[0.5, 0.5, 0.5, 0.5]], [0.1], [[1, 0, 0]], 8, 8), "2 or 3 columns"),
    (([[0.5, 0.5]], [0.1, 0.2], [[1, 0, 0]], 8, 8), r"radii must have shape \(1,\)"),
    (([[0.5, 0.5]], [0.0], [[1, 0, 0]], 8, 8), "radii must be above 0"),
    (([[0.5, np.nan]], [0.1], [[1, 0, 0]], 8, 8), "positions must be finite"),
    (([[0.5, 0.5]], [0.1], [[1, 0]], 8, 8), r"colors must have shape \(1, 3\)"),
    (([[0.5, 0.5]], [0.1], [[1, 0, 0]], 0, 8), "width must be a whole number in 1..16384"),
])
def test_render_array_api_refuses_bad_input(args, message):
    with pytest.raises(ValueError, match=message):
        circle_render.render(*args, renderer="cpu")
    with pytest.raises(ValueError, match="unknown renderer 'gpu'"):
        circle_render.render([[0.5, 0.5]], [0.1], [[1, 0, 0]], 8, 8, renderer="gpu")
