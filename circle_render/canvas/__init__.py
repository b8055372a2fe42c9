"""The Canvas: circles kept where they are drawn, frame after frame (canvas/canvas.py).

- ``canvas.py``: ``Canvas`` (set, update, render, the picture out, show);
- ``inputs.py``: what arrays are and where they live (host or CUDA), from their metadata;
- ``circles.py``: ``Circles``, the placed float32 circles, and ``HostChecks`` (checked and placed on the host);
- ``on_gpu.py``: ``GpuChecks`` (the same on the GPU, as CuPy kernels) and the picture converted there;
- ``picture.py``: the picture converted on the host.
"""
from circle_render.canvas.canvas import Canvas
from circle_render.canvas.inputs import ArgumentError

__all__ = ["ArgumentError", "Canvas"]
