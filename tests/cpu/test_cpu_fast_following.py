"""cpu-fast's two draw kernels (cpu/fast_kernels.py): render_tiles_following, for batches of
mostly 9-32 px circles, finds each row's run from the row before's; the pictures must be the
same bits as render_tiles' (and so the reference's) whichever kernel a batch gets."""
import numpy as np
import pytest

from circle_render.cpu import fast
from circle_render.cpu.fast import CpuFastRenderer
from circle_render.scenes import make_scene


def frames(name: str, size: int, monkeypatch, following: bool) -> list:
    monkeypatch.setattr(fast, "mostly_mid_sized", lambda radius, scale: following)
    r = CpuFastRenderer()
    r.load(make_scene(name, 3), size, size)
    out = []
    for _ in range(2):
        r.clear()
        r.advance()
        r.render()
        out.append(np.array(r.get_image()))
    return out


@pytest.mark.parametrize("name", ["rand10k", "rgb", "pattern", "biglittle", "snowsingle", "fireworks", "hypnosis"])
@pytest.mark.parametrize("size", [37, 150, 333])
def test_both_kernels_draw_the_same_bits(name, size, monkeypatch):
    """Sizes where these scenes' circles span 9-32 px rows, clipped at the picture's edges too."""
    a = frames(name, size, monkeypatch, True)
    b = frames(name, size, monkeypatch, False)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))


def test_the_choice_follows_the_circles_sizes():
    rand1m, micro = make_scene("rand1M", 0), make_scene("micro2M", 0)
    assert fast.mostly_mid_sized(rand1m.radius, 1024)          # 19-28 px across
    assert not fast.mostly_mid_sized(rand1m.radius, 4096)      # 75-113 px
    assert not fast.mostly_mid_sized(micro.radius, 1024)       # 2 px
    assert not fast.mostly_mid_sized(np.zeros(0, np.float32), 1024)
