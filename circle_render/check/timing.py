"""The course's time of a renderer, from what the checker measured on its own clock.

The course's checker times ``render -r cuda -b 0:4 SCENE -s 1024 -f logs/output``: per frame,
clear + advance + render, each with a device synchronize inside the timed region; the frame's
picture written to a file after it, untimed; the per-frame average over frames 0..3; the
minimum of 3 runs. ``render check`` does the same through its worker, each frame one round
trip timed by the checker (session.py), and then, as ``-f`` does, copies the frame's picture
out (``get_image()``, twice) before the next frame starts. Per frame:

    total = (frame round trip - echo) + excess
    excess = max(0, first get_image() - min(second get_image(), cap) - slack)

- echo: the channel's own round trip, measured by trusted code before the renderer's code was
  loaded (a renderer can gain at most this much, a few microseconds, by answering faster);
- first get_image(): right after the frame, so work a renderer put off until its image was
  asked for (or that it left running when it answered) is in it; the second call, with nothing
  left to do, is the same copy again: the difference counts against the frame, past ``slack``
  (the copy's own noise: SLACK_FRACTION of it plus SLACK_NS);
- cap: the second call is taken as at most CAP_FACTOR times the honest copy measured by trusted
  code (plus CAP_NS), so a renderer that slows its second call down hides no more than that.
"""
from __future__ import annotations

from dataclasses import dataclass

SLACK_FRACTION = 0.10
SLACK_NS = 50_000
CAP_FACTOR = 1.5
CAP_NS = 200_000
FRAMES = (0, 4)          # the course's -b 0:4


@dataclass(frozen=True)
class FrameRecord:
    """One timed frame's round trips (ns): the frame, then get_image() twice."""
    frame_ns: int
    image_ns: int
    again_ns: int

    def split_ms(self, echo_ns: int, copy_ns: int) -> tuple[float, float]:
        """(the frame's time, the excess of its first get_image()), ms."""
        work = max(0, self.frame_ns - echo_ns)
        honest = min(self.again_ns, int(CAP_FACTOR * copy_ns) + CAP_NS)
        slack = SLACK_FRACTION * honest + SLACK_NS
        excess = max(0.0, self.image_ns - honest - slack)
        return work / 1e6, excess / 1e6

    def total_ms(self, echo_ns: int, copy_ns: int) -> float:
        return sum(self.split_ms(echo_ns, copy_ns))


def run_ms(frames: list[FrameRecord], echo_ns: int, copy_ns: int) -> float:
    """One run's per-frame Total: the average over its frames, as the course reports it."""
    return sum(f.total_ms(echo_ns, copy_ns) for f in frames) / len(frames)


def describe_run(frames: list[FrameRecord], echo_ns: int, copy_ns: int) -> str:
    """The run's frames for the log: frame ms + excess ms (round trips in brackets)."""
    parts = []
    for f in frames:
        work, excess = f.split_ms(echo_ns, copy_ns)
        parts.append(f"{work:.4f}+{excess:.4f} [frame {f.frame_ns / 1e6:.4f}, get_image {f.image_ns / 1e6:.3f} "
                     f"then {f.again_ns / 1e6:.3f}]")
    return "; ".join(parts)
