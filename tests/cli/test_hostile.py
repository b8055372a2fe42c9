"""Hostile input, generated: the command line and the array API keep their promises for any
input (hypothesis). The command line: exit code 0, 1 or 2, an error is one line on stderr and
never a traceback, no temporary file is left, an existing output is intact after a failure.
The array API: a picture or a ValueError of one line, never another exception, and a picture
that is right (each pixel's alpha counts the circles that cover its centre). Signals, run in
real processes, are in test_bad_input.py."""
import math
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from helpers import Terminal, run_cli
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import circle_render
from circle_render import cli, progress
from circle_render.gpu import gpu_available
from circle_render.registry import RendererUnavailable

# bounded for CI; HOSTILE_EXAMPLES=2000 hunts longer
FAST = settings(max_examples=int(os.environ.get("HOSTILE_EXAMPLES", "60")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow])
PRECIOUS = b"precious: must survive a failed run\n"
NOTICES = ("render: no usable GPU",)          # lines a successful or failed run may add


def assert_promises(code, err, folder: Path, precious: list[Path]):
    assert code in (0, 1, 2), (code, err)
    assert "Traceback" not in err, err
    errors = [line for line in err.splitlines() if line.startswith("render: error:")]
    others = [line for line in err.splitlines() if line and not line.startswith(("render: error:", *NOTICES))
              and not line.startswith("render: rendered")]
    if code == 2:
        assert len(errors) == 1 and not others, err
    else:
        assert not errors, err
    left = [f.name for f in folder.iterdir() if f.name.startswith(".") or f.suffix == ".part"]
    assert not left, left                            # no temporary file
    if code != 0:
        for p in precious:
            assert p.read_bytes() == PRECIOUS, p     # an existing output intact after a failure


# ---------------------------------------------------------------- scene files and options

NUMBER_TEXT = st.one_of(
    st.sampled_from(["0.5", "0.25", "0", "-0", "1", "1e-9", "1e-10", "1e-30", "1e-50", "1e4", "10000.001",
                     "-1e4", "1e39", "-1e39", "3.4e38", "nan", "inf", "-inf", "NaN", "0x10", "1_0", "",
                     "abc", "1e", "+.5", "5.", "1,5", "\u0661", "99999999999999999999999"]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.floats(min_value=-2e4, max_value=2e4).map(lambda v: f"{v:.9g}"),
    st.floats(min_value=1e-12, max_value=1.0).map(lambda v: f"{v:.3g}"),
)


@st.composite
def scene_file(draw):
    """(suffix, text): a .circles or .par file, mostly well formed, with hostile values."""
    kind = draw(st.sampled_from([".circles", ".par"]))
    n = draw(st.integers(0, 4))
    fields = 7
    rows = []
    for _ in range(n):
        width = draw(st.sampled_from([fields] * 6 + [fields - 1, fields + 1]))
        rows.append(" ".join(draw(st.lists(NUMBER_TEXT, min_size=width, max_size=width))))
    count = draw(st.one_of(st.just(str(n)), st.sampled_from(["0", "-1", "two", "1e3", str(n + 1), "99999999999"])))
    if kind == ".circles":
        shading = draw(st.sampled_from(["flat", "snow", "glow", ""]))
        head = draw(st.sampled_from(["circle-render scene 1", "circle-render scene 2", ""]))
        lines = [head, f"shading {shading}", f"count {count}", *rows]
    else:
        lines = [count, *rows]
    if draw(st.booleans()):
        lines.insert(draw(st.integers(0, len(lines))), draw(st.text(max_size=20)))
    return kind, "\n".join(lines) + draw(st.sampled_from(["\n", "", "\r\n"]))


SCENE_WORDS = st.sampled_from(["rgb", "rgby", "pattern", "hypnosis", "bouncingballs", "fireworks",
                               "nosuchscene", "FILE", "FILE", "FILE", "missing.circles", "folder.par"])
OPTIONS = {
    "-r": st.sampled_from(["cpu", "auto", "cuda", "cuda-tiled", "metal", ""]),
    "-s": st.sampled_from(["1", "2", "7", "16", "0", "-1", "16385", "1e3", "abc", "99999999999999999999"]),
    "-S": st.sampled_from(["0", "1", "4294967295", "4294967296", "-3", "x"]),
    "-b": st.sampled_from(["0:1", "1:3", "0:2", "3:1", "0:0", "-1:2", "a:b", "1", "0:2:3", ":", " 1:2"]),
    "-o": st.sampled_from(["out.png", "out.ppm", "out.gif", "out.jpg", "out", "missing/out.png", ".png",
                           "out.PNG", "folder.par"]),
    "--save-scene": st.sampled_from(["s.circles", "s.par", "s.txt", "missing/s.circles"]),
    "--frames": st.sampled_from(["1", "0", "x"]),
    "--screenshot": st.sampled_from(["shot.png", "shot.jpg"]),
}
FLAGS = ["-c", "-i", "-q"]


@st.composite
def command_line(draw):
    scene = draw(SCENE_WORDS)
    opts = draw(st.dictionaries(st.sampled_from(sorted(OPTIONS)), st.just(None), max_size=4))
    args = [scene]
    for name in opts:
        args += [name, draw(OPTIONS[name])]
    args += draw(st.lists(st.sampled_from(FLAGS), max_size=2, unique=True))
    return args, draw(scene_file())


@FAST
@given(command_line())
def test_the_command_line_keeps_its_promises_for_any_input(case):
    args, (suffix, text) = case
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        (d / "folder.par").mkdir()
        scene = d / f"scene{suffix}"
        scene.write_bytes(text.encode("utf-8", "surrogatepass"))
        precious = []
        for name in ("out.png", "out.ppm", "out.gif", "s.circles", "s.par"):
            (d / name).write_bytes(PRECIOUS)
            precious.append(d / name)
        paths = (".png", ".ppm", ".gif", ".jpg", ".PNG", ".circles", ".par", ".txt")
        args = [str(scene) if a == "FILE" else str(d / a) if a.endswith(paths) or a == "out" else a
                for a in args]
        code, _, err = run_cli(args)
        event(f"exit {code}")
        assert_promises(code, err, d, precious)
        if code == 0 and "-o" in args and "-b" not in args:
            out = Path(args[args.index("-o") + 1])
            assert out.read_bytes() != PRECIOUS                      # written, and whole
        assert scene.read_bytes() == text.encode("utf-8", "surrogatepass")   # the input untouched


# ---------------------------------------------------------------- the array API

DTYPES = [np.float64, np.float32, np.float16, np.int32, np.int64, np.uint8, np.bool_, np.complex128, object]
VALUES = st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                   st.floats(min_value=-2e4, max_value=2e4),
                   st.floats(min_value=0, max_value=1),
                   st.sampled_from([0.0, -0.0, 1e-50, 1e-30, 1e-11, 1e-9, 1e4, 1e4 + 1e-3, 1e20, 1e39, 3.5e38]))


@st.composite
def hostile_array(draw, n, columns):
    """An array meant to be (n,) or (n, columns), often of the wrong shape, dtype or values; or
    something that is not an array at all."""
    choice = draw(st.integers(0, 24))          # 0..4 hostile, the rest well formed
    if choice == 0:
        return draw(st.sampled_from([None, {}, {"a": 1}, "abc", b"xy", 3, 2.5, [[1, 2], [3]], {1, 2}]))
    shape = (n,) if columns is None else (n, columns)
    if choice == 1:
        shape = draw(st.sampled_from([(), (n + 1,), (n, 4), (n, 1), (n, 2, 1), (0,), (n,)]))
    dtype = draw(st.sampled_from(DTYPES)) if choice == 2 else np.float64
    values = draw(st.lists(VALUES if choice < 5 else st.floats(0.01, 1), min_size=math.prod(shape),
                           max_size=math.prod(shape)))
    a = np.array(values, dtype=np.float64).reshape(shape)
    if dtype is object:
        return a.astype(object)
    with np.errstate(all="ignore"):
        return a.astype(dtype)


SIDES = st.one_of(st.integers(1, 24), st.integers(1, 24), st.integers(1, 24),
                  st.sampled_from([0, -1, 16385, True, 8.0, "8", None, np.int64(9)]))


@FAST
@given(st.integers(0, 4).flatmap(lambda n: st.tuples(
    hostile_array(n, 2) | hostile_array(n, 3), hostile_array(n, None), hostile_array(n, 3), SIDES, SIDES,
    st.sampled_from(["cpu"] * 6 + ["auto", "gpu", None]), st.sampled_from(["flat", "snow"] * 4 + ["glow", 1]))))
def test_the_array_api_gives_a_picture_or_one_value_error(case):
    positions, radii, colors, width, height, renderer, shading = case
    try:
        img = circle_render.render(positions, radii, colors, width, height, renderer, shading=shading)
    except RendererUnavailable:
        return
    except ValueError as e:
        assert str(e) and "\n" not in str(e)
        event("ValueError")
        return
    event("a picture")
    assert img.shape == (height, width, 4) and img.dtype == np.float32 and np.isfinite(img).all()


ONE = ([[0.5, 0.5]], [0.1], [[1, 0, 0]])


@pytest.mark.parametrize("change,message", [
    ({"radii": [1e20]}, r"radii = 1e\+20 is out of range \(\|value\| <= 10000\) \(at radii\[0\]\)"),
    ({"radii": [1e39]}, "radii = 1e\\+39 is out of range"),           # inf in float32
    ({"radii": [1e-50]}, "radii = 1e-50 is below the smallest radius"),   # 0 in float32
    ({"radii": [1e-11], "shading": "snow"}, "radii = 1e-11 is below the smallest radius"),
    ({"positions": [[0.5, 2e4]]}, r"positions = 20000.0 is out of range .* \(at positions\[0, 1\]\)"),
    ({"positions": {"x": 0.5}}, r"positions must be an array of numbers of shape \(n, 2\) or \(n, 3\), got dict"),
    ({"colors": [[1, 0, 0j]]}, "colors must hold real numbers .* complex values are not truncated"),
    ({"colors": [[True, False, True]]}, "colors must hold real numbers .* got dtype bool"),
    ({"radii": [[0.1]]}, r"radii must have shape \(1,\), one per position, got \(1, 1\)"),
    ({"colors": [1, 0, 0]}, r"colors must have shape \(1, 3\) or \(1, 4\), r g b \[alpha\] per circle, got \(3,\)"),
    ({"width": True}, "width must be a whole number in 1..16384, got True"),
    ({"height": 8.0}, "height must be a whole number in 1..16384, got 8.0"),
])
def test_the_array_api_refuses_each_hostile_class_in_one_line(change, message):
    args = dict(zip(("positions", "radii", "colors"), ONE), width=8, height=8, renderer="cpu")
    args.update(change)
    with pytest.raises(ValueError, match=message):
        circle_render.render(**args)


@pytest.mark.parametrize("shading", ["flat", "snow"])
def test_zero_circles_is_the_cleared_picture_and_tiny_circles_draw_their_centres(shading):
    from circle_render.cpu.shading import clear_image
    blank = circle_render.render([], [], [], 16, 8, "cpu", shading=shading)
    assert np.array_equal(blank, clear_image(16, 8, shading))
    on_centre = circle_render.render([[3.5 / 16, 5.5 / 8]], [1e-9], [[1, 0, 0]], 16, 8, "cpu", shading=shading)
    assert np.argwhere((on_centre != blank).any(-1)).tolist() == [[5, 3]]
    off_centre = circle_render.render([[3.5 / 16 + 1e-6, 5.5 / 8]], [1e-9], [[1, 0, 0]], 16, 8, "cpu", shading=shading)
    assert np.array_equal(off_centre, blank)


def covers_between(positions, radii, width, height):
    """Per pixel, the fewest and the most circles that may cover its centre: a centre clearly
    inside a circle counts in both, one on its edge (within float32 rounding) only in the most.
    Round circles on any picture: both axes in units of S = max(width, height) pixels, the unit
    square stretched over the picture, radii in x units (docs/drawing.md)."""
    side = max(width, height)
    scale = np.array([width / side, height / side])
    p = (np.asarray(positions, dtype=np.float64) * scale).astype(np.float32).astype(np.float64)
    r = (np.asarray(radii, dtype=np.float64) * scale[0]).astype(np.float32).astype(np.float64)
    from circle_render.cpu.shading import pixel_centres  # (1/size) * (i + 0.5) in float32
    cx, cy = pixel_centres(side)[:width].astype(np.float64), pixel_centres(side)[:height].astype(np.float64)
    dx = p[:, 0, None, None] - cx[None, None, :]
    dy = p[:, 1, None, None] - cy[None, :, None]
    d = np.sqrt(dx * dx + dy * dy)
    slack = 1e-3 * r[:, None, None] + 1e-6 * (1 + np.abs(dx) + np.abs(dy))
    return (d < r[:, None, None] - slack).sum(0), (d <= r[:, None, None] + slack).sum(0)


CIRCLE = st.tuples(st.floats(-3, 4), st.floats(-3, 4), st.one_of(st.floats(1e-9, 0.05), st.floats(0.05, 2),
                                                                   st.sampled_from([1e-9, 3.0, 1e4])))


@FAST
@given(st.lists(CIRCLE, max_size=5), st.integers(1, 24), st.integers(1, 24),
       st.sampled_from([(0.0, 0.0), (1e4 - 4, 0.0), (0.0, -1e4 + 4)]))
def test_the_array_api_draws_exactly_the_covered_pixels(circles, width, height, shift):
    """Flat shading over a transparent background: a pixel's alpha is 1 - 0.5^k for the k
    circles covering its centre, whatever the sizes (tiny, covering everything, far away);
    with the default opaque background it is 1, and r, g, b count the circles the same way."""
    pos = np.array([(x + shift[0] * (r > 100), y + shift[1] * (r > 100)) for x, y, r in circles]).reshape(-1, 2)
    rad = np.array([r for _, _, r in circles])
    if (np.float32(rad * width / max(width, height)) < np.float32(1e-9)).any():   # radii are in x units
        with pytest.raises(ValueError, match=r"below the smallest radius.* in picture units"):
            circle_render.render(pos, rad, np.ones((len(circles), 3)), width, height, "cpu")
        return
    img = circle_render.render(pos, rad, np.ones((len(circles), 3)), width, height, "cpu", background="transparent")
    low, high = covers_between(pos, rad, width, height)
    count = -np.log2(1 - img[..., 3].astype(np.float64))          # exact: 1 - 0.5^k is a float32
    assert (low <= count).all() and (count <= high).all()
    white = circle_render.render(pos, rad, np.zeros((len(circles), 3)), width, height, "cpu")
    assert (white[..., 3] == 1).all()
    count = -np.log2(white[..., 0].astype(np.float64))              # black over white: 0.5^k
    assert (low <= count).all() and (count <= high).all()


@pytest.mark.gpu
@pytest.mark.parametrize("renderer", ["cuda", "cuda-tiled"])
@pytest.mark.parametrize("shading", ["flat", "snow"])
def test_the_gpu_renderers_agree_at_the_limits(renderer, shading):
    """The smallest radius (on a pixel centre, and just off it), circles covering everything,
    far away ones: the GPU renderers draw what the reference draws."""
    if not gpu_available():
        pytest.skip("no GPU")
    pos = [[3.5 / 16, 5.5 / 16, 0.5], [3.5 / 16 + 1e-6, 9.5 / 16, 0.5], [5e3, -5e3, 0.3], [-9e3, 9e3, 0.4],
           [0.5, 0.5, 0.2]]
    rad = [1e-9, 1e-9, 1e4, 1e4 - 1, 1e-9]
    col = [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [0, 1, 1]]
    want = circle_render.render(pos, rad, col, 16, 16, "cpu", shading=shading)
    got = circle_render.render(pos, rad, col, 16, 16, renderer, shading=shading)
    assert np.abs(got - want).max() < 1e-3


# ---------------------------------------------------------------- GIF streaming

def test_gif_output_memory_does_not_grow_with_frames():
    import tracemalloc

    def peak(frames):
        with tempfile.TemporaryDirectory() as d:
            tracemalloc.start()
            code, _, err = run_cli(["bouncingballs", "-r", "cpu", "-s", "96", "-b", f"0:{frames}", "-q",
                                    "-o", str(Path(d) / "b.gif")])
            used = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            assert code == 0, err
            from PIL import Image
            with Image.open(Path(d) / "b.gif") as im:          # a repeated frame is shown longer
                shown = 0
                for k in range(im.n_frames):
                    im.seek(k)
                    shown += im.info["duration"]
                assert shown == 10 * round(100 * frames / 30)   # frame k starts at round(100 k / 30) cs
        return used
    peak(2)                                        # imports and first-use caches, not counted
    one_frame = 96 * 96 * 3
    assert peak(60) - peak(4) < 4 * one_frame      # holding the 56 extra frames would be 56 of them


# ---------------------------------------------------------------- progress conventions

def test_the_bar_only_on_a_terminal_and_never_with_quiet(monkeypatch):
    import io
    for stream, quiet, shown in ((Terminal(), False, True), (io.StringIO(), False, False), (Terminal(), True, False)):
        progress.set_quiet(quiet)
        bar = progress.Progress("rendering x", 10, stream=stream)
        bar.start -= 5; bar.last -= 5                     # as if it had run for a while
        bar.update(4)
        bar.close()
        text = stream.text if isinstance(stream, Terminal) else stream.getvalue()
        assert ("\r" in text) == shown and ("40%" in text) == shown
    progress.set_quiet(False)


def test_an_error_never_lands_on_the_bars_line(monkeypatch):
    term = Terminal()

    def render_then_fail(self):
        bar = progress.Progress("rendering x", 10)
        bar.start -= 5; bar.last -= 5
        bar.update(3)
        raise MemoryError("Unable to allocate 9 GiB")
    monkeypatch.setattr("circle_render.cpu.reference.CpuRenderer.render", render_then_fail)
    monkeypatch.setattr(sys, "stderr", term)
    with pytest.raises(SystemExit) as e:
        cli.main(["rgb", "-r", "cpu", "-s", "8"])
    assert e.value.code == 2
    lines = term.text.split("\n")
    assert "30%" in lines[-3] and lines[-2].startswith("render: error: host memory ran out")


def test_redirected_stderr_gets_no_bar_and_quiet_gets_nothing(tmp_path):
    from helpers import render
    p = render("rand10k", "-r", "cpu", "-s", "1024", cwd=tmp_path)     # over a second: a bar on a terminal
    assert p.returncode == 0 and "\r" not in p.stderr and "[" not in p.stderr, p.stderr
    p = render("rgb", "-r", "cpu", "-s", "16", "-q", cwd=tmp_path)
    assert p.returncode == 0 and p.stderr == ""


def test_check_quiet_prints_only_the_table(tmp_path):
    code, out, err = run_cli(["check", "-r", "cpu", "--scenes", "rgb", "-s", "16", "--runs", "1", "-q",
                              "--logs", str(tmp_path / "logs")])
    assert code == 0 and err == "" and "rgb" in out
    code, out, err = run_cli(["check", "-r", "cpu", "--scenes", "rgb", "-s", "16", "--runs", "1",
                              "--logs", str(tmp_path / "logs")])
    assert code == 0 and "check: [1/1] rgb" in err and "\r" not in err


def test_check_logs_are_written_atomically(tmp_path, monkeypatch):
    import errno

    def full_disk(self, text, *a, **k):
        with open(self, "w") as f:
            f.write(text[:10])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(Path, "write_text", full_disk)
    logs = tmp_path / "logs"
    code, _, err = run_cli(["check", "-r", "cpu", "--scenes", "rgb", "-s", "16", "--runs", "1", "-q",
                            "--logs", str(logs)])
    log = str(logs / "rgb.log")
    assert code == 2 and err.strip() == f"render: error: cannot write {log!r}: No space left on device"
    assert list(logs.iterdir()) == []                   # no truncated log, no temporary
