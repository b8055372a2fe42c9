"""A student's renderer class is first-class: `render SCENE -r file.py:Class` (or module:Class)
with -o, -b, -c, --save-scene, and `render bench`; help texts list every built-in renderer;
and the CLI snags a newcomer met (what -o and --save-scene say, render list, auto's notice)."""
import os

import numpy as np
import pytest
from helpers import ROOT, check, plugin, render, table_rows

from circle_render import registry
from circle_render.gpu import gpu_available
from circle_render.io.images import read_image

EXAMPLE = f"{ROOT / 'examples' / 'my_renderer.py'}:MyRenderer"


def test_a_students_class_renders_times_and_checks_like_a_built_in(tmp_path):
    p = render("rgb", "-r", EXAMPLE, "-s", "32", "-b", "0:2", "-c", "-o", str(tmp_path / "m.png"))
    assert p.returncode == 0, p.stderr
    assert "Total:" in p.stdout and p.stdout.count("correctness check passed") == 2
    assert f"render: wrote 2 frames: {tmp_path / 'm_0000.png'} ... {tmp_path / 'm_0001.png'}" in p.stderr
    q = render("rgb", "-r", "cpu", "-s", "32", "-b", "0:2", "-o", str(tmp_path / "c.png"))
    assert np.array_equal(read_image(tmp_path / "m_0001.png"), read_image(tmp_path / "c_0001.png"))
    assert f"render: wrote 2 frames: {tmp_path / 'c_0000.png'}" in q.stderr


def test_module_form(tmp_path):
    plugin(tmp_path, "from circle_render.cpu.reference import CpuRenderer\nclass Mine(CpuRenderer):\n    pass\n",
           "student_mod.py")
    p = render("pattern", "-r", "student_mod:Mine", "-s", "16", "-o", "p.png", cwd=tmp_path,
               env={"PYTHONPATH": f"{ROOT}{os.pathsep}{tmp_path}"})
    assert p.returncode == 0, p.stderr
    assert p.stderr.strip() == "render: wrote p.png" and (tmp_path / "p.png").is_file()


BROKEN = """
    from circle_render.cpu.reference import CpuRenderer
    class Raises(CpuRenderer):
        def render(self):
            raise RuntimeError("should not be called")
"""


def test_save_scene_alone_writes_the_file_without_rendering(tmp_path):
    path = plugin(tmp_path, BROKEN)
    p = render("rand10k", "-r", f"{path}:Raises", "--save-scene", str(tmp_path / "s.circles"))
    assert p.returncode == 0, p.stderr
    assert p.stderr.strip() == f"render: wrote {tmp_path / 's.circles'} (10000 circles as drawn in frame 0)"
    a = render(str(tmp_path / "s.circles"), "-r", "cpu", "-s", "24", "-o", str(tmp_path / "a.png"))
    b = render("rand10k", "-r", "cpu", "-s", "24", "-o", str(tmp_path / "b.png"))
    assert a.returncode == b.returncode == 0
    assert np.array_equal(read_image(tmp_path / "a.png"), read_image(tmp_path / "b.png"))


@pytest.mark.parametrize("args,message", [
    (["-r", "metal"], "unknown renderer 'metal'; accepted: auto, cpu"),
    (["-r", "/etc/passwd:X"], "'/etc/passwd' is not a Python file (.py)"),
    (["-r", "nofile.py:X"], "no such file 'nofile.py'"),
    (["-r", f"{ROOT / 'examples' / 'my_renderer.py'}:Nope"], "has no 'Nope'"),
])
def test_a_bad_renderer_is_one_line_exit_2(args, message):
    p = render("rgb", "-s", "8", *args)
    assert p.returncode == 2 and message in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_bench_takes_a_students_class(tmp_path):
    out = tmp_path / "mine.json"
    p = render("bench", "-r", EXAMPLE, "--scenes", "rgb", "-s", "16", "--runs", "1", "-o", str(out))
    assert p.returncode == 0, p.stderr                  # a CPU class: no GPU needed
    import json
    record = json.loads(out.read_text())
    assert record["renderer"] == EXAMPLE and record["scenes"]["rgb"]["total_ms"] > 0
    from circle_render.commands.bench import default_output
    name = default_output(EXAMPLE, 16).name
    assert "-MyRenderer-16-" in name or "-my-renderer-16-" in name


@pytest.mark.parametrize("command,skip", [("scene", ()), ("check", ()), ("bench", ())])
def test_help_lists_every_built_in_renderer(command, skip):
    p = render(command, "--help")
    text = " ".join(p.stdout.split())
    for name in registry.RENDERERS:
        if name not in skip:
            assert name in text, (command, name)
    assert "path/to/file.py:Class" in text


def test_render_list_says_where_the_small_circles_are():
    from circle_render.scenes import SCENES, make_scene
    for name in ("biglittle", "littlebig"):
        small = make_scene(name).position[9000:, :2].mean(axis=0)       # y = 0 at the bottom
        where = ("top" if small[1] > 0.5 else "bottom") + " " + ("left" if small[0] < 0.5 else "right")
        assert SCENES[name].description.endswith(f"small ones near the {where}")
    p = render("list")
    assert "biglittle      9,000 big circles, then 1,000 small ones near the top left" in p.stdout



@pytest.mark.skipif(gpu_available(), reason="a GPU is present")
def test_bare_check_without_a_gpu_says_it_checks_cpu_against_itself(tmp_path):
    p = check(tmp_path, "-s", "16", "--runs", "1", "--scenes", "rgb")
    assert p.returncode == 0
    assert "checking the cpu-fast renderer against itself" in p.stderr
    assert "Tf*: the cpu-fast renderer timed live in this run (no GPU): not the course's times" in p.stdout


def test_a_failed_scene_does_not_time_the_baseline(tmp_path):
    path = plugin(tmp_path, "from circle_render.cpu.reference import CpuRenderer\n"
                            "class Wrong(CpuRenderer):\n    def get_image(self):\n"
                            "        return 1 - super().get_image()\n")
    p = check(tmp_path, "-r", f"{path}:Wrong", "-s", "16", "--runs", "1", "--scenes", "rgb", "--baseline", "cpu")
    assert p.returncode == 1 and "Tf:" not in p.stderr.replace("Tf: n/a", "")
    assert table_rows(p.stdout)["rgb"][0] == "n/a" and "n/a: no Tf" in p.stdout
    assert "reference time Tf (ms): None (not timed: the scene failed)" in (tmp_path / "logs" / "rgb.log").read_text()
