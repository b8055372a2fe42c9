"""Regenerate golden/SCENE.png: the reference renderer's frame 0 of every scene at 256x256, seed 0.

    python -m golden.make
"""
from pathlib import Path

from circle_render.io.images import write_image
from circle_render.cpu.reference import reference_image
from circle_render.cpu.shading import to_bytes
from circle_render.scenes import SCENE_NAMES, make_scene

GOLDEN_DIR = Path(__file__).resolve().parent
GOLDEN_SIZE = 256


def golden_path(name: str) -> Path:
    return GOLDEN_DIR / f"{name}.png"


def main():
    for name in SCENE_NAMES:
        img = reference_image(make_scene(name, 0), GOLDEN_SIZE, GOLDEN_SIZE)
        write_image(golden_path(name), to_bytes(img))
        print("wrote", golden_path(name))


if __name__ == "__main__":
    main()
