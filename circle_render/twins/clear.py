"""Twin of kernels/clear.cu."""
from circle_render.cpu.shading import clear_image

__all__ = ["clear_image"]
