"""The course's time of a renderer, from what the checker measured on its own clock.

The course's checker times ``render -r cuda -b 0:4 SCENE -s 1024 -f logs/output``: per frame,
clear + advance + render, each with a device synchronize inside the timed region; the per-frame
average over frames 0..3; the minimum of 3 runs. ``render check`` runs the same frames back to
back in its worker, each frame one round trip timed by the checker (session.py), and after the
run's last frame copies its picture out (``get_image()``, twice) and compares it. Per run:

    Total = mean over the frames of (frame round trip - echo) + excess
    excess = max(0, first get_image() - min(second get_image(), cap) - slack)

- echo: the channel's own round trip, measured by trusted code before the renderer's code was
  loaded (a renderer can gain at most this much, a few microseconds, by answering faster);
- first get_image(): right after the last frame, so work a renderer put off until its picture
  was asked for (or left running when it answered) is in it; the second call, with nothing left
  to do, is the same copy again. The difference, past ``slack`` (the copy's own noise:
  SLACK_FRACTION of it plus SLACK_NS), is added to every frame's time, as if each frame had put
  that much off (a renderer that draws once, in get_image(), pays for four frames);
- cap: the second call is taken as at most CAP_FACTOR times the honest copy measured by trusted
  code (plus CAP_NS), so a renderer that slows its second call down hides no more than that.

Two things keep an honest renderer's numbers clean (the effects were measured on the H100, record
benchmarks/results/H100-check-0f6cf65.txt; these counter-measures came after it): the worker keeps
freed memory (keep_the_heap: else the first get_image() after a load paid ~1.5 ms of page faults
that the second did not, on rand1M), and after a picture is copied out the renderer draws
WARM_FRAMES untimed frames before the next run loads (else that run's first frame ran ~0.04 ms
slower: the copy's cost to caches and clocks, which the course's runs, separate processes, do
not pay).

The course's ``-f`` (a picture written to a file after every frame) makes the course's small
frames slower for both programs; ``render check`` does not write a picture after every frame
(its own copy slowed the next frame by about 0.15 ms on the H100, three times what ``-f`` costs
the course's binary) but adds the course's measured ``-f`` cost to T and to Tf alike where Tf is
the course's (course.output_costs()).
"""
from __future__ import annotations

from dataclasses import dataclass

SLACK_FRACTION = 0.10
SLACK_NS = 50_000
CAP_FACTOR = 1.5
CAP_NS = 200_000
FRAMES = (0, 4)          # the course's -b 0:4


@dataclass(frozen=True)
class RunRecord:
    """One timed run's round trips (ns): each frame, then get_image() twice after the last."""
    frames_ns: tuple[int, ...]
    image_ns: int
    again_ns: int

    def split_ms(self, echo_ns: int, copy_ns: int) -> tuple[float, float]:
        """(the frames' mean time, the excess of the first get_image()), ms."""
        work = sum(max(0, f - echo_ns) for f in self.frames_ns) / len(self.frames_ns)
        honest = min(self.again_ns, int(CAP_FACTOR * copy_ns) + CAP_NS)
        slack = SLACK_FRACTION * honest + SLACK_NS
        excess = max(0.0, self.image_ns - honest - slack)
        return work / 1e6, excess / 1e6

    def total_ms(self, echo_ns: int, copy_ns: int) -> float:
        """The run's per-frame Total, as the course reports it."""
        return sum(self.split_ms(echo_ns, copy_ns))

    def describe(self, echo_ns: int, copy_ns: int) -> str:
        work, excess = self.split_ms(echo_ns, copy_ns)
        frames = ", ".join(f"{f / 1e6:.4f}" for f in self.frames_ns)
        return (f"{work:.4f} + get_image() excess {excess:.4f} (frame round trips {frames}; get_image "
                f"{self.image_ns / 1e6:.3f} then {self.again_ns / 1e6:.3f})")
