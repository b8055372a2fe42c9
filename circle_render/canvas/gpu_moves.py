"""update(positions=...) on the GPU as one graph launch, frame after frame.

A move queues three things (canvas.py ``_move_on_gpu``): the check-and-place kernel, from the
user's array into a staging buffer (on_gpu.py ``GpuChecks.place_positions``); the renderer's guarded
copy of the staging buffer into its circles (``update_circles(position=, guard=)``: device work
only); and the copy of the flags to page-locked memory, read by the canvas's next call. Launched
one by one from Python that is about 65 us of host time a move, several times the GPU's work at
10k circles. Users move the same array in place, or make a new one each frame that CuPy's pool
puts at one of a few addresses: so the three are captured as a CUDA graph per array seen twice
(its address, shape, strides and dtype: what the captured kernels read) and replayed with one
graph launch. Each array has two staging buffers, used in turn: the circles before a move keep
theirs intact, so a refused move (a bad value found by the check) goes back to them.
The graphs hold the renderer's buffers: ``clear()`` whenever the renderer may have changed.
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from circle_render.cuda.module import Graph

KEPT = 8                  # arrays remembered (the least recently moved forgotten first)


@dataclass
class _Seen:
    """One positions array: its staging buffers, each with its graph once captured."""
    staging: tuple[Any, Any]
    uses: list[int] = field(default_factory=lambda: [0, 0])
    graphs: list[Graph | None] = field(default_factory=lambda: [None, None])


def array_key(a: Any) -> tuple[Any, ...]:
    """What the captured kernels read of a CuPy array: where it is and how it is laid out."""
    return int(a.data.ptr), tuple(a.shape), tuple(a.strides), a.dtype.str


class MoveGraphs:
    """The moves of one canvas's circles on the GPU, captured per array (see the module's text)."""

    def __init__(self) -> None:
        self._seen: OrderedDict[tuple[Any, ...], _Seen] = OrderedDict()

    def clear(self) -> None:
        self._seen.clear()

    def move(self, a: Any, held: Any, queue: Callable[[Any], None]) -> Any:
        """Queue the move of positions ``a`` (a CuPy array on the canvas's GPU, shape checked):
        ``queue(staging)`` queues the three steps, launched as they are the first time an array
        and buffer are used, captured the second, replayed after. ``held``: the canvas's
        current positions, a staging buffer not to write. Returns the staging buffer that now
        holds the placed positions."""
        import cupy as cp
        key = array_key(a)
        seen = self._seen.get(key)
        if seen is None:
            n = a.shape[0]
            seen = _Seen((cp.empty((n, 3), np.float32), cp.empty((n, 3), np.float32)))
            self._seen[key] = seen
            if len(self._seen) > KEPT:
                self._seen.popitem(last=False)
        self._seen.move_to_end(key)
        k = 1 if seen.staging[0] is held else 0
        staging, graph = seen.staging[k], seen.graphs[k]
        if graph is not None:
            graph()
        elif seen.uses[k] == 0:
            queue(staging)
        else:
            captured = seen.graphs[k] = Graph.capture(lambda: queue(staging))
            captured()
        seen.uses[k] += 1
        return staging
