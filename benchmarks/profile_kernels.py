"""Runs each kernel of the fast renderer's frame once per scene, outside graphs, after a
warm-up frame: a target for Nsight Compute (ncu --kernel-name ... python -m benchmarks profile).

    python -m benchmarks profile --scenes rand1M,micro2M --size 1024
"""
import argparse

from circle_render.cuda.fast import FastCudaRenderer
from circle_render.scenes import make_scene


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenes", default="rand1M,micro2M,snowsingle")
    ap.add_argument("--size", type=int, default=1024)
    a = ap.parse_args()
    for name in a.scenes.split(","):
        r = FastCudaRenderer()
        r.load(make_scene(name), a.size, a.size)
        r.clear(); r.advance(); r.render(); r.synchronize()      # warm-up (graphs)
        for _, launch in r.kernel_launches():                   # profiled: plain launches
            launch()
        r.synchronize()


if __name__ == "__main__":
    main()
