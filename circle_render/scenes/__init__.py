"""The course's 14 scenes, by name: ``make_scene("rand10k", seed=0)``."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from circle_render.scenes import generators as g
from circle_render.scenes import snow as s
from circle_render.scenes.scene import FLAT, SNOW, Scene


@dataclass(frozen=True)
class SceneInfo:
    name: str
    description: str
    make: Callable[[int], Scene]
    animated: bool = False      # frames differ (its Scene has an animation step)


def _rand(name: str, n: int) -> Callable[[int], Scene]:
    return lambda seed: g.random_circles(name, n, seed)


SCENES: dict[str, SceneInfo] = {info.name: info for info in [
    SceneInfo("rgb", "3 large overlapping circles: red, green, blue", g.rgb),
    SceneInfo("rgby", "4 circles: red, green, blue and a small yellow one", g.rgby),
    SceneInfo("rand10k", "10,000 random circles, radius 0.02-0.08", _rand("rand10k", 10_000)),
    SceneInfo("rand100k", "100,000 random circles, radius 0.02-0.08", _rand("rand100k", 100_000)),
    SceneInfo("rand1M", "1,000,000 random circles, radius 0.009-0.014", _rand("rand1M", 1_000_000)),
    SceneInfo("micro2M", "2,000,000 tiny circles, radius 0.001", g.micro2M),
    SceneInfo("pattern", "a 16x16 grid of red circles under a 31x31 grid of yellow ones", g.pattern),
    SceneInfo("biglittle", "9,000 big circles, then 1,000 small ones near the top left", g.biglittle),
    SceneInfo("littlebig", "9,000 big circles, then 1,000 small ones near the bottom right", g.littlebig),
    SceneInfo("snow", "100,000 snowflakes falling and fluttering (animated)", s.snow, animated=True),
    SceneInfo("snowsingle", "one still frame of 100,000 snowflakes spread over the screen", s.snowsingle),
    SceneInfo("bouncingballs", "10 balls bouncing under gravity (animated)", g.bouncingballs, animated=True),
    SceneInfo("hypnosis", "25 concentric circles that grow and wrap (animated)", g.hypnosis, animated=True),
    SceneInfo("fireworks", "15 fireworks throwing 20 sparks each (animated)", g.fireworks, animated=True),
]}

SCENE_NAMES = tuple(SCENES)


def make_scene(name: str, seed: int = 0) -> Scene:
    """The circles of course scene ``name`` for ``seed`` (KeyError for an unknown name)."""
    return SCENES[name].make(seed)


__all__ = ["FLAT", "SCENES", "SCENE_NAMES", "SNOW", "Scene", "SceneInfo", "make_scene"]
