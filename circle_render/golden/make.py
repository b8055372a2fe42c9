"""Regenerate golden/SCENE.png: the reference renderer's frame 0 of every scene at 256x256, seed 0,
and golden/SCENE_FRAME.png for the later frames listed in LATER_FRAMES.

    python -m circle_render.golden.make
"""
import os
from pathlib import Path

import numpy as np

from circle_render.cpu.reference import reference_image
from circle_render.cpu.shading import to_bytes
from circle_render.io.images import read_image, write_image
from circle_render.scenes import SCENE_NAMES, make_scene

GOLDEN_DIR = Path(__file__).resolve().parent
GOLDEN_SIZE = 256
LATER_FRAMES = {"snow": (240, 600)}        # frame 0 of snow is all sky: the flakes start above it


def golden_path(name: str, frame: int = 0) -> Path:
    return GOLDEN_DIR / (f"{name}.png" if frame == 0 else f"{name}_{frame:04d}.png")


def golden_cases() -> list[tuple[str, int]]:
    """(scene, frame) of every golden picture."""
    return [(name, 0) for name in SCENE_NAMES] + [(n, f) for n, frames in LATER_FRAMES.items() for f in frames]


def write_if_changed(path: Path, pixels: np.ndarray) -> bool:
    """Write ``pixels`` to ``path`` unless the file there already holds the same pixels (a PNG
    written again differs in its bytes, which git would show as a change). True if written."""
    fresh = path.with_name(f".{path.name}.new.png")
    write_image(fresh, pixels)
    if path.exists() and np.array_equal(read_image(path), read_image(fresh)):
        fresh.unlink()
        return False
    os.replace(fresh, path)
    return True


def main() -> None:
    for name, frame in golden_cases():
        img = reference_image(make_scene(name, 0), GOLDEN_SIZE, GOLDEN_SIZE, steps=frame + 1)
        path = golden_path(name, frame)
        print("wrote" if write_if_changed(path, to_bytes(img)) else "unchanged", path)


if __name__ == "__main__":
    main()
