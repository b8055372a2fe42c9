"""glibc's ``rand()`` (the TYPE_3 additive feedback generator), reproduced exactly.

The course draws every random value with ``rand()`` after ``srand(seed)``. The generator is
r[i] = r[i-31] + r[i-3] (mod 2**32) and the k-th output is r[k + 344] >> 1. Because the
recurrence is linear mod 2**32, a block of L outputs is an (L x 31) integer matrix times the
31 values before the block; that turns a Python loop per draw into one matrix product per
block, which is how two million circles' worth of draws take well under a second.
"""
from __future__ import annotations

import functools

import numpy as np

RAND_MAX = 2147483647
_LAG = 31          # the long lag; the short lag is 3
_BLOCK = 8192
_MASK = np.uint64(0xFFFFFFFF)


def _seed_table(seed: int) -> list[int]:
    """r[0..33] as glibc's srandom_r makes them (signed 32-bit Schrage arithmetic)."""
    word = int(np.int32(np.uint32(seed & 0xFFFFFFFF)))  # srand takes unsigned int, stores int32
    if word == 0:
        word = 1
    r = [word]
    for _ in range(1, 31):
        hi = int(word / 127773)           # C division truncates toward zero
        lo = word - hi * 127773
        word = 16807 * lo - 2836 * hi
        if word < 0:
            word += 2147483647
        r.append(word)
    r += [r[0], r[1], r[2]]               # r[31..33] = r[0..2]
    return [v & 0xFFFFFFFF for v in r]


@functools.cache
def _block_matrix(length: int) -> np.ndarray:
    """Row t gives r[s+t] as a combination (mod 2**32) of r[s-31 .. s-1]."""
    rows = np.zeros((length + _LAG, _LAG), dtype=np.uint64)
    rows[:_LAG] = np.eye(_LAG, dtype=np.uint64)
    for t in range(_LAG, length + _LAG):
        rows[t] = (rows[t - _LAG] + rows[t - 3]) & _MASK
    return np.ascontiguousarray(rows[_LAG:])


class GlibcRand:
    """A stream of glibc ``rand()`` values after ``srand(seed)``; seed 0 acts as seed 1."""

    def __init__(self, seed: int = 0):
        if not 0 <= seed <= 0xFFFFFFFF:
            raise ValueError(f"seed must be in 0..4294967295, got {seed}")
        r = _seed_table(seed)
        for i in range(34, 344):
            r.append((r[i - 31] + r[i - 3]) & 0xFFFFFFFF)
        self._state = np.array(r[-_LAG:], dtype=np.uint64)  # r[313..343]
        self._buffer = np.empty(0, dtype=np.int64)

    def _refill(self, count: int) -> None:
        blocks = []
        produced = 0
        matrix = _block_matrix(_BLOCK)
        while produced < count:
            # uint64 products wrap mod 2**64, which keeps them right mod 2**32
            values = (matrix @ self._state) & _MASK
            self._state = values[-_LAG:].copy()
            blocks.append((values >> np.uint64(1)).astype(np.int64))
            produced += _BLOCK
        self._buffer = np.concatenate([self._buffer, *blocks])

    def ints(self, count: int) -> np.ndarray:
        """The next ``count`` outputs of ``rand()`` as int64."""
        if count > self._buffer.size:
            self._refill(count - self._buffer.size)
        out, self._buffer = self._buffer[:count], self._buffer[count:]
        return out

    def floats(self, count: int) -> np.ndarray:
        """The next ``count`` values of the course's randomFloat(): float(rand()) / float(RAND_MAX)."""
        return self.ints(count).astype(np.float32) / np.float32(RAND_MAX)

    def float_table(self, rows: int, cols: int) -> np.ndarray:
        """rows x cols draws, made row by row (one row per circle, one column per draw)."""
        return self.floats(rows * cols).reshape(rows, cols)
