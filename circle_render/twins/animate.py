"""Twins of kernels/animate.cu: the CPU animation steps, which are the reference. Both sides
round every operation the same way (the kernels are compiled without contraction), so tests
compare them exactly."""
from circle_render.cpu.animation import step_bouncingballs, step_fireworks, step_hypnosis, step_snow

__all__ = ["step_bouncingballs", "step_fireworks", "step_hypnosis", "step_snow"]
