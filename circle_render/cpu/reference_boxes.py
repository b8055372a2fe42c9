"""The reference renderer's walks over circles' pixel boxes, shared by its two paths (the
course's, cpu/reference.py, and the drawing options', cpu/reference_drawing.py): each box's view
of the planes, every (circle, pixel) pair grouped by rank, runs of small and big circles, and bands
of rows on threads."""
from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from circle_render.cpu.shading import Bounds
from circle_render.progress import Progress

SMALL_BOX_AREA = 150        # circles with a pixel box this small take the pairs path
MIN_RUN = 64                # shorter runs of one kind are merged into their neighbours
PAIR_MAX_AREA = 4096        # ... but no box bigger than this goes down the pairs path
PAIR_BUDGET = 4_000_000     # (circle, pixel) pairs handled per NumPy batch


def box_views(planes: np.ndarray, position: np.ndarray, ids: np.ndarray, bounds: Bounds, cx: np.ndarray, cy: np.ndarray,
              progress: Progress | None, done: int,
              stop: threading.Event | None) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """Each circle of ``ids`` whose pixel box is not empty, in order: (its index, the squared
    distances (dy*dy) + (dx*dx) over its box, the planes' view of the box). Every 256 circles
    the progress bar moves on and ``stop`` (a threading.Event, or None) may end the walk."""
    x0, x1, y0, y1 = (b[ids].tolist() for b in bounds)
    for k, i in enumerate(ids.tolist()):
        if x0[k] < x1[k] and y0[k] < y1[k]:
            dx = position[i, 0] - cx[x0[k]:x1[k]]
            dy = position[i, 1] - cy[y0[k]:y1[k]]
            yield i, (dy * dy)[:, None] + (dx * dx)[None, :], planes[:, y0[k]:y1[k], x0[k]:x1[k]]
        if k % 256 == 0:
            if stop is not None and stop.is_set():
                return
            if progress is not None:
                progress.update(done + k)


def pairs(ids: np.ndarray, bounds: Bounds) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (circle, pixel) pair of the boxes of ``ids``: circle ids, pixel x, pixel y."""
    x0, x1, y0, y1 = (b[ids].astype(np.int64) for b in bounds)
    w = np.maximum(x1 - x0, 0)
    count = w * np.maximum(y1 - y0, 0)
    total = int(count.sum())
    first = np.repeat(np.cumsum(count) - count, count)
    local = np.arange(total, dtype=np.int64) - first
    ww = np.repeat(w, count)
    return np.repeat(ids, count), np.repeat(x0, count) + local % ww, np.repeat(y0, count) + local // ww


def by_rank(pix: np.ndarray) -> list[np.ndarray]:
    """Pairs (their pixels ``pix``, in circle order) grouped by rank: group k holds the index of
    every pixel's k-th pair, so each group has at most one pair per pixel and blending group 0,
    then group 1, ... blends each pixel's circles in order. Sorting packed int64 keys (pixel,
    pair index) is several times faster than a stable argsort and gives the same order."""
    n = pix.size
    if n == 0:
        return []
    shift = np.int64(max(1, int(n).bit_length()))
    low = (np.int64(1) << shift) - 1
    by_pixel = np.sort((pix << shift) | np.arange(n, dtype=np.int64)) & low
    sorted_pix = pix[by_pixel]
    starts = np.r_[True, sorted_pix[1:] != sorted_pix[:-1]]
    group_start = np.maximum.accumulate(np.where(starts, np.arange(n), 0))
    rank = np.empty(n, dtype=np.int64)
    rank[by_pixel] = np.arange(n) - group_start
    ordered = np.sort((rank << shift) | np.arange(n, dtype=np.int64)) & low
    cuts = np.searchsorted(rank[ordered], np.arange(rank.max() + 2))
    return [ordered[lo:hi] for lo, hi in itertools.pairwise(cuts)]


def runs_of(small: np.ndarray) -> list[np.ndarray]:
    """Index runs of consecutive circles with the same ``small`` value."""
    cuts = np.flatnonzero(np.diff(small.astype(np.int8))) + 1
    return [r for r in np.split(np.arange(small.size), cuts) if r.size]


Runs = tuple[Bounds, np.ndarray, np.ndarray, list[np.ndarray]]     # bounds, areas, small, runs


def split_runs(bounds: Bounds) -> Runs:
    """``_plan`` for given pixel boxes: (bounds, area, small, runs)."""
    area = (bounds[1] - bounds[0]).astype(np.int64) * (bounds[3] - bounds[2])
    small = area <= SMALL_BOX_AREA
    for run in runs_of(small):
        if not small[run[0]] and run.size < MIN_RUN and area[run].max() <= PAIR_MAX_AREA:
            small[run] = True
    for run in runs_of(small):
        if small[run[0]] and run.size < MIN_RUN:
            small[run] = False
    return bounds, area, small, runs_of(small)


BandWork = Callable[[np.ndarray, Bounds, np.ndarray, Any, "threading.Event | None"], None]


def in_bands(band_work: BandWork, planes: np.ndarray, bounds: Bounds, cy: np.ndarray, bar: Progress,
             threads: int | None) -> None:
    """Run ``band_work(planes_band, bounds_band, cy_band, bar, stop)`` on bands of rows, one
    per thread (bounds made relative to the band; the bar goes to the first band)."""
    x0, x1, y0, y1 = bounds
    height = planes.shape[1]
    threads = max(1, min(threads or os.cpu_count() or 1, height))
    edges = np.linspace(0, height, threads + 1).astype(int)
    jobs = []
    for t, (lo, hi) in enumerate(itertools.pairwise(edges)):
        band_bounds = (x0, x1, np.clip(y0 - lo, 0, hi - lo).astype(np.int32),
                       np.clip(y1 - lo, 0, hi - lo).astype(np.int32))
        jobs.append((planes[:, lo:hi], band_bounds, cy[lo:hi], bar if t == 0 else None))
    if len(jobs) == 1:
        band_work(*jobs[0], None)
        return
    stop, pool = threading.Event(), ThreadPoolExecutor(len(jobs))
    try:
        for f in [pool.submit(band_work, *job, stop) for job in jobs]:
            f.result()
    except BaseException:      # Ctrl-C: let the other bands stop at their next check
        stop.set()
        raise
    finally:
        pool.shutdown(wait=True)
