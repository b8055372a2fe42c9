"""Where each scene's reference time Tf comes from in ``render check``.

In order: a ``--ref-times`` file; a ``--baseline`` renderer timed live; the course's stored
times, only on the GPU model they were measured on and at the size they were measured at
(1024); elsewhere the course's design (``cuda-tiled``) timed live and divided by its measured
ratio to the course's binary (``calibration`` in golden/ref_times.json), so a grade means the
same on any GPU, as the course's checker (which times its reference binary live) intends.
Without a GPU the cpu-fast renderer is timed live, and the footer says plainly that such
scores are not the course's.

Every Tf is on T's footing: a live one is timed by the same worker path as T; where Tf is the
course's (stored, or calibrated), the course's ``-f`` cost (a picture written to a file after
each frame, which the course's checker times) is added to T and to Tf alike
(course.output_costs(), check/timing.py says why).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from circle_render.check.plugins import load_renderer
from circle_render.check.runner import LoadedRenderer
from circle_render.check.sandbox import Isolation
from circle_render.course import (
    MEASURED_SIZE,
    OUTPUT_COST_GPU,
    calibration,
    output_costs,
    read_times_file,
    session_spread,
    stored_times,
)
from circle_render.errors import UserError
from circle_render.gpu import gpu_name, gpu_status, no_gpu_notice
from circle_render.scenes import SCENES

TF_MODES = ("auto", "live")


@dataclass(frozen=True)
class TfChoice:
    """How one scene's Tf was made, for the JSON result (check/result.py)."""
    kind: str                           # stored (the course's), ref-times, calibrated, live (unscaled)
    live_ms: float | None = None        # the live renderer's own time, before its ratio and the -f cost
    ratio: float | None = None          # the live time's ratio to the course's binary (calibrated)


@dataclass
class TfSource:
    """Tf for the scenes of one check, and the footer lines that say where each came from."""
    stored: dict = field(default_factory=dict)        # scene -> ms, used as is
    stored_label: str = ""
    live: LoadedRenderer | None = None                # timed live
    ratios: dict | None = None                        # live time / ratio (calibrated) if set
    live_label: str = ""
    notice: str = ""                                  # said once at the start, if set
    used: set = field(default_factory=set)            # "stored" / "live", for the footer
    output_cost: dict = field(default_factory=dict)   # scene -> the course's -f cost (ms), added to T and Tf
    stored_kind: str = "stored"                       # "ref-times" for a user's file
    reference: dict = field(default_factory=dict)     # scene -> the course's stored time here, used or not
    chosen: dict = field(default_factory=dict)        # scene -> TfChoice, as tf() made it
    sessions: dict = field(default_factory=dict)      # scene -> (fastest, slowest) course Total across sessions

    def stored_tf(self, scene: str) -> float | None:
        """The Tf the course's stored time gives ``scene`` on this GPU and size (with the -f cost),
        whether or not this check uses it (``--tf live`` does not); None where none is stored."""
        t = self.reference.get(scene)
        return None if t is None else t + self.output_cost.get(scene, 0.0)

    @property
    def live_name(self) -> str:
        return self.live.name if self.live is not None else ""

    def tf(self, scene: str, time_live: Callable) -> tuple[float | None, bool, str]:
        """(Tf in ms or None if the live renderer failed, measured live?, where it came from,
        for the scene's log); ``time_live(renderer)`` -> (ms or None, why it failed)."""
        extra = self.output_cost.get(scene, 0.0)
        plus = f", plus the course's -f cost {extra:.4f} ms" if extra else ""
        if scene in self.stored:
            self.used.add("stored")
            self.chosen[scene] = TfChoice(self.stored_kind)
            return self.stored[scene] + extra, False, self.stored_label + plus
        self.used.add("live")
        t, failure = time_live(self.live)
        if self.ratios is None:
            self.chosen[scene] = TfChoice("live", t)
            if t is None:
                return None, True, f"{self.live_name} failed: {failure}"
            return t, True, f"{self.live_name} timed live: {t:.4f} ms"
        r = self.ratios[scene]
        self.chosen[scene] = TfChoice("calibrated", t, r)
        if t is None:
            return None, True, f"{self.live_name} failed: {failure}"
        return t / r + extra, True, (f"{self.live_name} timed live: {t:.4f} ms, divided by its ratio {r} "
                                     f"to the course's binary{plus}")

    def footer(self) -> str:
        lines = []
        if "stored" in self.used:
            lines.append(f"Tf: {self.stored_label}")
        if "live" in self.used:
            lines.append(f"Tf*: {self.live_label}")
        if self.output_cost and self.used:
            lines.append("T and Tf include the course's -f cost, as its checker times both with a picture "
                         "written after each frame: per scene, the binary's Total with -f less without, "
                         f"on the {OUTPUT_COST_GPU} ({min(self.output_cost.values()):.3f}-"
                         f"{max(self.output_cost.values()):.3f} ms)")
        varied = [s for s, c in self.chosen.items() if c.kind == "stored" and s in self.sessions]
        if varied:
            spans = ", ".join(f"{s} {self.sessions[s][0]:.3f}-{self.sessions[s][1]:.3f}" for s in varied)
            lines.append(f"Stored Tf of launch-bound scenes: the course's binary took {spans} ms (with -f) in "
                         "different sessions on this GPU, and the stored time is one of them; the course's "
                         "checker times its binary live, so in a slower session it can give these scenes a "
                         "point more")
        return "\n".join(lines)


def tf_source(ref_times: str | None, baseline: str | None, mode: str | None, scenes: list[str],
              size: int, isolation: Isolation | None = None) -> TfSource:
    """The Tf source for ``render check`` (its --ref-times, --baseline and --tf options);
    ``isolation`` confines a --baseline that is a user's class."""
    given = [n for n, v in (("--ref-times", ref_times), ("--baseline", baseline), ("--tf", mode)) if v]
    if len(given) > 1:
        raise UserError(f"give one of --ref-times, --baseline and --tf, not {' and '.join(given)}")
    if ref_times:
        stored = read_times_file(ref_times, SCENES)
        missing = [s for s in scenes if s not in stored]
        if missing:
            raise UserError(f"--ref-times {ref_times!r} has no time for scene {missing[0]!r}")
        return TfSource(stored=stored, stored_label=f"from {ref_times} (--ref-times)", stored_kind="ref-times")
    if baseline:
        live = load_renderer(baseline, isolation)
        return TfSource(live=live, live_label=f"the {live.name} renderer timed live in this run "
                                              "(--baseline), not scaled")
    usable, why_not = gpu_status()
    if not usable:
        notice = no_gpu_notice("cpu-fast") or f"no usable GPU ({why_not})"
        return TfSource(live=load_renderer("cpu-fast"), notice=notice,
                        live_label="the cpu-fast renderer timed live in this run (no GPU): not the course's times")
    gpu = gpu_name()
    table = {s: t for s, t in (stored_times(gpu, "render", size) or {}).items() if s in scenes}
    cal = calibration()
    source = TfSource(stored={} if mode == "live" else table, reference=table, ratios=cal.ratios,
                      output_cost=output_costs(), sessions=session_spread(gpu),
                      stored_label=f"the course's reference binary, stored times for the {gpu} at "
                                   f"{MEASURED_SIZE}x{MEASURED_SIZE}")
    lacking = [s for s in scenes if s not in source.stored]
    if lacking:
        if mode == "live":
            why = "--tf live"
        elif stored_times(gpu) is None:
            why = f"no stored course times for the {gpu}"
        elif size != MEASURED_SIZE:
            why = f"the stored times were measured at {MEASURED_SIZE}x{MEASURED_SIZE}, not {size}x{size}"
        else:
            why = f"the {gpu}'s stored times lack {', '.join(lacking)}"
        source.live = load_renderer(cal.renderer)
        source.live_label = (f"{cal.renderer} (the course's design) timed live in this run, divided "
                             f"per scene by its ratio to the course's binary on the {cal.gpu} "
                             f"(circle_render/golden/ref_times.json), because {why}")
    return source
