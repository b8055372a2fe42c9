"""A bar chart (PNG) of a ``render bench`` record: per-frame Total per scene on a log scale,
beside the course's binary where the record has its times, with the ratio (or the time) at the
end of each row. Drawn with Pillow (a dependency), so it works wherever the package is installed.

    render bench ... -o rec.json        also writes rec.png (or --plot FILE.png)
    python -m benchmarks plot rec.json -o docs/bench.png
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PIL import ImageFont

OURS, COURSE, INK, GRID = (40, 110, 200), (200, 120, 40), (20, 20, 20), (215, 215, 215)


def chart_font() -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    """Pillow's own font at a readable size (Pillow >= 10.1 with FreeType), else its bitmap one."""
    from PIL import ImageFont
    try:
        return ImageFont.load_default(size=13)
    except (TypeError, OSError, ImportError):     # an older Pillow, or no FreeType
        return ImageFont.load_default()


def runs_text(runs: int | None) -> str:
    """How many runs a record's times are the minimum of, in words."""
    return "one run" if runs == 1 else f"min of {runs if runs else '?'} runs"


def describe(record: dict) -> tuple[str, str]:
    """(what ran where, how it was timed), in words, for the chart's title and the table."""
    name = record.get("renderer_name") or record["renderer"]
    device = record.get("device") or record.get("gpu") or record.get("cpu") or "an unnamed machine"
    if record.get("cpu_cores") and not record.get("on_gpu", True):
        device += f" ({record['cpu_cores']} cores)"
    commit = record.get("commit")
    made_by = f"circle-render {record.get('version', '?')}" + (
        f" at {commit[:7]}" if commit and commit != "unknown" else "")
    size = record["size"]
    warmed = any("warmup_ms" in e for e in record["scenes"].values())
    return (f"{name} on {device}, {size}x{size}, {made_by}",
            f"the course's method, frames {record.get('frames', '0:4')}, {runs_text(record.get('runs'))}"
            + (", after a warm-up frame" if warmed else ""))


def title_lines(record: dict) -> tuple[str, str]:
    """The chart's two title lines: what ran where, and what the numbers are."""
    who, how = describe(record)
    return who, f"per-frame Total, ms (log scale): {how}"


def legend(record: dict) -> list[tuple[tuple[int, int, int], str]]:
    """(colour, label) of each kind of bar the chart draws: the record's renderer, and the
    course's binary only where the record has its times."""
    entries = [(OURS, record.get("renderer_name") or record["renderer"])]
    if any(e.get("course_ref_ms") for e in record["scenes"].values()):
        entries.append((COURSE, record.get("course_ref") or f"the course's binary on {record.get('gpu')}"))
    return entries


def plot_record(record: dict, path: str | Path) -> Path:
    """Draw ``record`` (a dict read from a bench record) into the PNG ``path``, atomically."""
    from PIL import Image, ImageDraw

    from circle_render.io.images import atomic_path
    scenes = list(record["scenes"].items())
    has_course = len(legend(record)) > 1
    row = 34 if has_course else 22
    left, width = 120, 560
    top = 72
    img = Image.new("RGB", (left + width + 110, top + row * len(scenes) + 40), "white")
    d = ImageDraw.Draw(img)
    d.font = chart_font()
    times = [t for _, e in scenes for t in (e["total_ms"], e.get("course_ref_ms")) if t and t > 0]
    lo = math.floor(math.log10(min(times))) if times else -2
    hi = max(math.ceil(math.log10(max(times))) if times else 0, lo + 1)

    def x(ms: float) -> float:
        return left + width * (math.log10(max(ms, 10.0 ** lo)) - lo) / (hi - lo)

    first, second = title_lines(record)
    d.text((10, 6), first, fill=INK)
    d.text((10, 22), second, fill=INK)
    lx = 10
    for colour, label in legend(record):
        d.rectangle((lx, 44, lx + 12, 54), fill=colour)
        d.text((lx + 18, 43), label, fill=INK)
        lx += 18 + int(d.textlength(label)) + 30
    bottom = top + row * len(scenes)
    for p in range(lo, hi + 1):
        gx = x(10.0 ** p)
        d.line((gx, top, gx, bottom), fill=GRID)
        d.text((gx - 12, bottom + 4), f"1e{p}", fill=INK)
    for k, (name, e) in enumerate(scenes):
        y = top + k * row
        mid = y + row // 2 - 8                   # text centred on the row
        d.text((10, mid), name, fill=INK)
        d.rectangle((left, y + 4, x(e["total_ms"]), y + 15), fill=OURS)
        if e.get("course_ref_ms"):
            d.rectangle((left, y + 17, x(e["course_ref_ms"]), y + 28), fill=COURSE)
            d.text((left + width + 8, mid), f"{e['ratio']:.3f}x", fill=INK)
        else:
            d.text((left + width + 8, mid), f"{e['total_ms']:.3g} ms", fill=INK)
    path = Path(path)
    with atomic_path(path) as tmp:
        img.save(tmp, format="PNG")
    return path
