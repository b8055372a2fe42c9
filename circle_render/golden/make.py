"""Regenerate golden/SCENE.png: the reference renderer's frame 0 of every scene at 256x256, seed 0,
and golden/SCENE_FRAME.png for the later frames listed in LATER_FRAMES.

    python -m circle_render.golden.make
"""
from pathlib import Path

from circle_render.cpu.reference import reference_image
from circle_render.cpu.shading import to_bytes
from circle_render.io.images import write_image
from circle_render.scenes import SCENE_NAMES, make_scene

GOLDEN_DIR = Path(__file__).resolve().parent
GOLDEN_SIZE = 256
LATER_FRAMES = {"snow": (240, 600)}        # frame 0 of snow is all sky: the flakes start above it


def golden_path(name: str, frame: int = 0) -> Path:
    return GOLDEN_DIR / (f"{name}.png" if frame == 0 else f"{name}_{frame:04d}.png")


def golden_cases() -> list[tuple[str, int]]:
    """(scene, frame) of every golden picture."""
    return [(name, 0) for name in SCENE_NAMES] + [(n, f) for n, frames in LATER_FRAMES.items() for f in frames]


def main() -> None:
    for name, frame in golden_cases():
        img = reference_image(make_scene(name, 0), GOLDEN_SIZE, GOLDEN_SIZE, steps=frame + 1)
        write_image(golden_path(name, frame), to_bytes(img))
        print("wrote", golden_path(name, frame))


if __name__ == "__main__":
    main()
