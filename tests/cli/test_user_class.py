"""A user's renderer class under `render SCENE` and `render bench` (run in their own process,
guarded): whatever it does wrong is one line naming it and the method, exit 2; never a
traceback or a silent exit 0."""
import textwrap

import pytest
from helpers import render

BROKEN = """
    import os, sys
    import numpy as np
    from circle_render.cpu.reference import CpuRenderer

    class Raises(CpuRenderer):
        def render(self):
            raise RuntimeError("kernel exploded")

    class Exits(CpuRenderer):
        def render(self):
            sys.exit(0)

    class HardExits(CpuRenderer):
        def clear(self):
            os._exit(0)

    class BadInit(CpuRenderer):
        def __init__(self, **kw):
            raise ValueError("no")

    class WrongShape(CpuRenderer):
        def get_image(self):
            return super().get_image()[:, :, :3]

    class NotArray(CpuRenderer):
        def get_image(self):
            return super().get_image().tolist()

    class NanAlpha(CpuRenderer):
        def get_image(self):
            img = super().get_image().copy()
            img[0, 0, 3] = np.inf
            return img
"""


@pytest.mark.parametrize("cls,message", [
    ("Raises", "renderer '{p}:Raises' raised RuntimeError: kernel exploded in render()"),
    ("Exits", "renderer '{p}:Exits' called sys.exit(0) in render()"),
    ("HardExits", "renderer '{p}:HardExits' called os._exit(0) in clear()"),
    ("BadInit", "renderer '{p}:BadInit' raised ValueError: no in __init__()"),
    ("WrongShape", "renderer '{p}:WrongShape': get_image() returned shape (8, 8, 3), expected (8, 8, 4)"),
    ("NotArray", "renderer '{p}:NotArray': get_image() returned list, not a NumPy array"),
    ("NanAlpha", "renderer '{p}:NanAlpha': get_image() has 1 non-finite values (first at pixel (0, 0) channel a)"),
])
def test_a_broken_class_under_render_scene_is_one_line(tmp_path, cls, message):
    (tmp_path / "broken.py").write_text(textwrap.dedent(BROKEN))
    p = render("rgb", "-r", f"broken.py:{cls}", "-s", "8", "-o", "out.png", cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    assert p.stderr.strip() == "render: error: " + message.format(p="broken.py"), p.stderr
    assert not (tmp_path / "out.png").exists()


def test_an_import_that_exits_is_one_line(tmp_path):
    (tmp_path / "bye.py").write_text("import os\nos._exit(0)\n")
    p = render("rgb", "-r", "bye.py:X", "-s", "8", cwd=tmp_path)
    assert p.returncode == 2 and "cannot load renderer 'bye.py:X': importing 'bye.py' called os._exit(0)" in p.stderr


def test_a_broken_class_under_render_bench_is_one_line(tmp_path):
    (tmp_path / "broken.py").write_text(textwrap.dedent(BROKEN))
    p = render("bench", "-r", "broken.py:Raises", "--scenes", "rgb", "-s", "8", "--runs", "1",
               "-o", "b.json", cwd=tmp_path)
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert "renderer 'broken.py:Raises' raised RuntimeError: kernel exploded in render()" in p.stderr
