"""Launches replayed as a CUDA graph run in the order they were captured, every replay."""
import numpy as np
import pytest

pytestmark = pytest.mark.gpu

AFFINE = 'extern "C" __global__ void affine(float* p, float a, float b) { p[0] = p[0] * a + b; }'


def test_graph_replays_its_launches_in_order():
    import cupy as cp

    from circle_render.cuda.module import Graph, Launch, device_synchronize
    f = cp.RawModule(code=AFFINE).get_function("affine")
    p = cp.ones(1, dtype=np.float32)
    double_plus_one = Launch(f, (1,), (1,), (p, np.float32(2), np.float32(1)))
    triple = Launch(f, (1,), (1,), (p, np.float32(3), np.float32(0)))
    g = Graph([double_plus_one, triple])
    assert float(p.get()[0]) == 1.0           # capturing runs nothing
    g()
    device_synchronize()
    assert float(p.get()[0]) == 9.0           # (1 * 2 + 1) * 3, not 1 * 3 * 2 + 1
    g()
    triple()                                  # a graph and a plain launch share the default stream
    assert float(p.get()[0]) == 171.0         # ((9 * 2 + 1) * 3) * 3


def test_render_graph_equals_its_stages_one_by_one():
    # render() replays every stage as one graph; run_stage() replays one stage's graph
    from circle_render.cuda.fast import FastCudaRenderer
    from circle_render.scenes import make_scene
    s = make_scene("snow")                    # binned, and moving: stale lists would show
    one, staged = FastCudaRenderer(), FastCudaRenderer()
    for r in (one, staged):
        r.load(s.copy(), 256, 256)
    for _ in range(3):
        one.clear(); one.advance(); one.render()
        staged.clear(); staged.advance()
        for name in staged.stage_names:
            staged.run_stage(name)
    assert np.array_equal(one.get_image(), staged.get_image())
