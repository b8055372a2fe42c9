"""-o: what is written is read back and compared. Pictures exactly (streamed in strips, from a
float view, from the GPU's 8-bit); videos decoded (PyAV) frame by frame against the PNG of the
same frame within the codec tolerance stated below; GIF frame times; names up to NAME_MAX;
read-only, linked and special outputs; faults (bad options, a missing encoder, a full disk,
signals) end in one line and leave whole files only."""
import errno
import os
import signal
import subprocess
import sys
import time
from fractions import Fraction

import numpy as np
import pytest
from helpers import ROOT, Terminal, one_line, run_main

from circle_render.cpu.shading import to_bytes
from circle_render.io import images as image_io
from circle_render.io.images import read_image, write_image
from circle_render.io.pixels import FramePixels
from circle_render.io.video import read_video

try:
    import av
except ImportError:
    if os.environ.get("CIRCLE_RENDER_REQUIRE_VIDEO"):         # CI installs it: nothing may skip there
        raise
    av = None
needs_av = pytest.mark.skipif(av is None, reason="video needs PyAV: pip install 'circle-render[video]'")

# The codec tolerance (4:2:0 video against the exact PNG of the same frame, default CRF, 96x96):
# snow, the animated scene, within 1 level on average and PSNR >= 40 dB in every frame; rgb's
# saturated discs within 4 levels on average and PSNR >= 27 dB (4:2:0 halves the colour
# resolution, so a saturated edge blurs by a pixel: that is where its differences are, and at
# 96x96 edges are a large share of the picture); flat colours within 3 levels (below).
TOLERANCE = {"snow": (1.0, 40.0), "rgb": (4.0, 27.0)}


def child_env() -> dict:
    """The environment of a `render` child: this tree first on PYTHONPATH (kept: PyAV may be there)."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = np.mean((a.astype(float) - b.astype(float)) ** 2)
    return 99.0 if mse == 0 else 10 * np.log10(255 ** 2 / mse)


# --- pictures ------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,compiled", [((1024, 1024), True), ((1023, 1025), False), ((2048, 600), True)])
def test_public_to_bytes_is_the_reference(shape, compiled, monkeypatch):
    """circle_render.to_bytes gives cpu/shading.py to_bytes's bytes (values outside [0, 1], NaN,
    infinities, views), compiled from COMPILED_FROM pixels on (the reference is not called)."""
    import circle_render
    from circle_render.cpu import shading
    from circle_render.io import pixels
    rng = np.random.default_rng(3)
    img = rng.random((*shape, 4), dtype=np.float32) * 1.4 - 0.2
    img.flat[::97], img.flat[5::101], img.flat[7::103] = np.nan, np.inf, -np.inf
    want = to_bytes(img)
    calls = []
    monkeypatch.setattr(shading, "to_bytes", lambda a: calls.append(1) or want)
    got = circle_render.to_bytes(img)
    assert got.dtype == np.uint8 and got.shape == (*shape, 3) and np.array_equal(got, want)
    assert (not calls) == compiled and pixels.COMPILED_FROM == 1 << 20
    if compiled:                     # a flipped view compiled; a float64 picture to the reference
        assert np.array_equal(circle_render.to_bytes(img[::-1]), want[::-1]) and not calls
        pixels.to_bytes(img.astype(np.float64))
        assert calls


@pytest.mark.parametrize("suffix", [".png", ".ppm"])
@pytest.mark.parametrize("shape", [(1, 1), (37, 53), (300, 7)])
def test_streamed_pictures_are_exactly_to_bytes(tmp_path, suffix, shape, monkeypatch):
    """Strips of a few rows (forced here), odd sizes, values outside [0, 1] and NaN: the file
    holds to_bytes(image) exactly, from a float view and from the GPU's RGBA (row 0 at the bottom)."""
    monkeypatch.setattr("circle_render.io.pixels.STRIP_BYTES", 16 * 53 * 5)      # 5-row strips
    rng = np.random.default_rng(7)
    img = (rng.random((*shape, 4), dtype=np.float32) * 1.4 - 0.2)
    img.flat[::97] = np.nan
    with np.errstate(invalid="ignore"):
        want = to_bytes(img)
    write_image(tmp_path / f"a{suffix}", FramePixels(img))
    assert np.array_equal(read_image(tmp_path / f"a{suffix}"), want)
    rgba8 = np.concatenate([want[::-1], np.full((*shape, 1), 255, np.uint8)], axis=2)
    write_image(tmp_path / f"b{suffix}", FramePixels(rgba8=rgba8))
    assert np.array_equal(read_image(tmp_path / f"b{suffix}"), want)
    assert sorted(f.name for f in tmp_path.iterdir()) == [f"a{suffix}", f"b{suffix}"]


def test_a_picture_costs_no_second_float_image(tmp_path):
    """Writing from the renderer's float image allocates strips, not a whole copy (tracemalloc
    sees NumPy's allocations): 2048x2048 is a 64 MB float image and a 12 MB 8-bit one."""
    import tracemalloc
    img = np.random.default_rng(1).random((2048, 2048, 4), dtype=np.float32)
    FramePixels(img[:2]).rgb()                    # compiled before measuring
    tracemalloc.start()
    try:
        write_image(tmp_path / "a.png", FramePixels(img))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * 2**20, peak                # strips, and the compressed bytes of one chunk
    assert np.array_equal(read_image(tmp_path / "a.png"), to_bytes(img))


def test_png_sequence_frames_equal_single_frames(tmp_path):
    """A sequence is written on a pool of threads: each frame equals --frame N of the same run."""
    code = subprocess.run([sys.executable, "-m", "circle_render", "snow", "-r", "cpu-fast", "-s", "48", "-b",
                           "0:6", "-o", "s.png", "-q"], cwd=tmp_path, env=child_env(),
                          capture_output=True, text=True, check=False)
    assert code.returncode == 0, code.stderr
    p = subprocess.run([sys.executable, "-m", "circle_render", "snow", "-r", "cpu-fast", "-s", "48", "--frame", "4",
                        "-o", "f4.png"], cwd=tmp_path, env=child_env(),
                       capture_output=True, text=True, check=False)
    assert p.returncode == 0 and p.stdout == "", p.stdout          # --frame: no timing lines
    assert p.stderr.splitlines()[-1] == "render: wrote f4.png"
    assert np.array_equal(read_image(tmp_path / "f4.png"), read_image(tmp_path / "s_0004.png"))
    assert sorted(f.name for f in tmp_path.iterdir()) == ["f4.png", *[f"s_{k:04d}.png" for k in range(6)]]


def test_frame_and_bench_are_one_or_the_other(tmp_path, capsys):
    code, err = run_main(["rgb", "-s", "8", "--frame", "2", "-b", "0:3"], capsys)
    assert code == 2 and "not both" in one_line(err)


# --- names, links, read-only files ------------------------------------------------------------

def test_every_name_the_file_system_takes_can_be_written(tmp_path, capsys):
    """255 bytes (the usual NAME_MAX), in ASCII and in 2- and 3-byte UTF-8 characters: the
    temporary beside it is cut to fit, the file gets the name as given."""
    most = os.pathconf(tmp_path, "PC_NAME_MAX")
    for stem in ("a" * (most - 4), "é" * ((most - 4) // 2), "€" * ((most - 4) // 3)):
        name = stem + ".png"
        assert len(os.fsencode(name)) <= most
        code, err = run_main(["rgb", "-r", "cpu", "-s", "8", "-o", str(tmp_path / name)], capsys)
        assert code == 0, err
        assert [f.name for f in tmp_path.iterdir()] == [name]
        (tmp_path / name).unlink()
    long = "a" * (most - 4) + ".txt"          # text files (logs, records, scene files) alike
    image_io.write_text(tmp_path / long, "x\n")
    assert [f.name for f in tmp_path.iterdir()] == [long]


def test_a_name_too_long_is_refused_before_drawing(tmp_path, capsys):
    most = os.pathconf(tmp_path, "PC_NAME_MAX")
    name = "a" * (most - 6) + ".png"          # fits, but STEM_0000.png would not
    code, err = run_main(["rgb", "-r", "cpu", "-s", "8", "-b", "0:2", "-o", str(tmp_path / name)], capsys)
    assert code == 2 and f"bytes long; the file system of {str(tmp_path)!r} takes at most {most}" in one_line(err)
    assert list(tmp_path.iterdir()) == []


def test_a_read_only_output_is_refused_and_a_link_is_replaced(tmp_path, capsys):
    ro = tmp_path / "ro.png"
    ro.write_bytes(b"keep")
    ro.chmod(0o444)
    code, err = run_main(["rgb", "-r", "cpu", "-s", "8", "-o", str(ro)], capsys)
    assert code == 2 and "the file is read-only" in one_line(err)
    assert ro.read_bytes() == b"keep"
    target = tmp_path / "target.png"
    target.write_bytes(b"elsewhere")
    link = tmp_path / "link.png"
    link.symlink_to(target)
    code, err = run_main(["rgb", "-r", "cpu", "-s", "8", "-o", str(link)], capsys)
    assert code == 0, err
    assert not link.is_symlink() and read_image(link).shape == (8, 8, 3)
    assert target.read_bytes() == b"elsewhere"             # what the link pointed to: untouched
    os.mkfifo(tmp_path / "pipe.png")
    code, err = run_main(["rgb", "-r", "cpu", "-s", "8", "-o", str(tmp_path / "pipe.png")], capsys)
    assert code == 2 and "is not a regular file" in one_line(err)


def test_a_read_only_frame_of_a_sequence_is_refused_before_drawing(tmp_path, capsys):
    (tmp_path / "s_0001.png").write_bytes(b"keep")
    (tmp_path / "s_0001.png").chmod(0o444)
    code, err = run_main(["rgb", "-r", "cpu", "-s", "8", "-b", "0:3", "-o", str(tmp_path / "s.png")], capsys)
    assert code == 2 and "s_0001.png': the file is read-only" in one_line(err)
    assert sorted(f.name for f in tmp_path.iterdir()) == ["s_0001.png"]


# --- GIF ----------------------------------------------------------------------------------------

def gif_durations(path) -> list[int]:
    from PIL import Image
    out = []
    with Image.open(path) as im:
        for k in range(im.n_frames):
            im.seek(k)
            out.append(im.info["duration"])
    return out


@pytest.mark.parametrize("fps", [30, 24, 50, 7.5])
def test_gif_frame_times_follow_fps(tmp_path, capsys, fps):
    """Frame k starts at round(100 k / fps) hundredths: the whole lasts frames / fps seconds."""
    out = tmp_path / "a.gif"
    code, err = run_main(["hypnosis", "-r", "cpu-fast", "-s", "24", "-b", "0:12", "-o", str(out), "--fps",
                          str(fps), "-q"], capsys)
    assert code == 0, err
    durations = gif_durations(out)
    assert sum(durations) == 10 * round(100 * 12 / fps)
    assert min(durations) >= 20


# --- video --------------------------------------------------------------------------------------

def render_both(tmp_path, scene, size, frames, video, *extra):
    env = child_env()
    for out in ("f.png", video):
        p = subprocess.run([sys.executable, "-m", "circle_render", scene, "-r", "cpu-fast", "-s", str(size),
                            "-b", f"0:{frames}", "-o", out, "-q", *(extra if out == video else ())],
                           cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
        assert p.returncode == 0, p.stderr
    return [read_image(tmp_path / f"f_{k:04d}.png") for k in range(frames)], read_video(tmp_path / video)


@pytest.mark.parametrize("video,codec", [("a.mp4", "h264"), ("a.webm", "vp9"), ("b.webm", "av1"), ("b.mp4", "av1")])
@pytest.mark.parametrize("scene", ["snow", "rgb"])
@needs_av
def test_video_decodes_to_the_pngs_within_the_codec_tolerance(tmp_path, video, codec, scene):
    pngs, decoded = render_both(tmp_path, scene, 96, 8, video, "--codec", codec)
    assert len(decoded) == 8
    mean_most, psnr_least = TOLERANCE[scene]
    for k, (want, got) in enumerate(zip(pngs, decoded)):
        assert got.shape == want.shape == (96, 96, 3)
        diff = np.abs(got.astype(int) - want.astype(int)).mean()
        assert diff <= mean_most and psnr(got, want) >= psnr_least, (k, diff, psnr(got, want))


@needs_av
def test_video_stream_says_its_rate_colours_and_codec(tmp_path, capsys):
    out = tmp_path / "a.mp4"
    code, err = run_main(["snow", "-r", "cpu-fast", "-s", "64", "-b", "0:5", "-o", str(out), "--fps", "29.97"], capsys)
    assert code == 0 and f"render: wrote {out} (5 frames)" in err.splitlines(), err
    with av.open(str(out)) as c:
        s = c.streams.video[0]
        cc = s.codec_context
        assert s.average_rate == Fraction(30000, 1001)
        assert cc.name == "h264" and cc.pix_fmt == "yuv420p"
        assert (cc.color_primaries, cc.color_trc, cc.colorspace, cc.color_range) == (1, 13, 1, 1)


@needs_av
def test_flat_colours_survive_the_matrix_and_range(tmp_path):
    """BT.709 limited range out and back: flat fields of saturated and grey colours within 3."""
    from circle_render.io.video import write_video
    colours = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 255), (0, 0, 0), (128, 64, 200)]
    frames = [np.full((32, 48, 3), c, np.uint8) for c in colours]
    assert write_video(tmp_path / "c.mp4", frames, crf=10) == len(colours)
    for want, got in zip(frames, read_video(tmp_path / "c.mp4")):
        assert np.abs(got.astype(int) - want.astype(int)).max() <= 3


@needs_av
def test_odd_sizes_are_padded_with_a_notice(tmp_path, capsys):
    out = tmp_path / "odd.mp4"
    code, err = run_main(["snow", "-r", "cpu-fast", "-s", "33", "-b", "0:3", "-o", str(out)], capsys)
    assert code == 0
    assert "33x33 padded to 34x34" in err
    decoded = read_video(out)
    assert len(decoded) == 3 and decoded[0].shape == (34, 34, 3)


@needs_av
def test_crf_changes_the_size(tmp_path, capsys):
    sizes = []
    for crf in ("5", "40"):
        out = tmp_path / f"c{crf}.mp4"
        assert run_main(["rand10k", "-r", "cpu-fast", "-s", "128", "-b", "0:2", "-o", str(out), "--crf", crf, "-q"],
                        capsys)[0] == 0
        sizes.append(out.stat().st_size)
    assert sizes[0] > 2 * sizes[1]


@needs_av
@pytest.mark.parametrize("args,needle", [
    (["-o", "a.mkv"], "unknown output suffix '.mkv'"),
    (["-o", "a.mp4", "--codec", "vp9"], "--codec vp9 does not go in .mp4; accepted there: h264"),
    (["-o", "a.mp4", "--codec", "xvid"], "'xvid' is not one of"),
    (["-o", "a.mp4", "--fps", "0"], "--fps must be a number of frames a second above 0"),
    (["-o", "a.mp4", "--fps", "nan"], "--fps must be"),
    (["-o", "a.mp4", "--fps", "inf"], "--fps must be"),
    (["-o", "a.mp4", "--fps", "-3"], "--fps must be"),
    (["-o", "a.mp4", "--fps", "fast"], "'fast' is not a valid float"),
    (["-o", "a.gif", "--fps", "60"], "too fast for a GIF"),
    (["-o", "a.png", "--fps", "10"], "--fps is for animations"),
    (["-o", "a.gif", "--crf", "10"], "--crf is for video"),
    (["-o", "a.mp4", "--crf", "52"], "--crf 52 is out of range for h264: 0..51"),
    (["-o", "a.webm", "--crf", "-1"], "--crf -1 is out of range for vp9: 0..63"),
    (["--fps", "10"], "--fps goes with -o FILE"),
])
def test_bad_video_options_are_one_line_before_drawing(tmp_path, monkeypatch, capsys, args, needle):
    monkeypatch.chdir(tmp_path)
    code, err = run_main(["snow", "-r", "cpu-fast", "-s", "16", "-b", "0:3", *args], capsys)
    assert code == 2 and needle in one_line(err), err
    assert list(tmp_path.iterdir()) == []


@needs_av
def test_missing_encoder_names_the_fix(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    from circle_render.io import video
    monkeypatch.setitem(video.CODECS, "h264", video.Codec("h264", ("libnothing264",), (0, 51, 20), {}))
    code, err = run_main(["snow", "-s", "16", "-o", "a.mp4"], capsys)
    assert code == 2 and "has no h264 encoder (libnothing264)" in one_line(err)
    assert list(tmp_path.iterdir()) == []


def test_missing_pyav_names_the_extra(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "av", None)                 # as if PyAV were not installed
    code, err = run_main(["snow", "-s", "16", "-o", "a.webm"], capsys)
    assert code == 2 and "pip install 'circle-render[video]'" in one_line(err)
    assert list(tmp_path.iterdir()) == []


@needs_av
def test_a_failing_encoder_leaves_no_half_video(tmp_path, monkeypatch, capsys):
    """A full disk part way (the muxer's write fails on the 4th frame): one line naming the
    user's file, and no file at all, an earlier one of that name intact."""
    out = tmp_path / "a.mp4"
    out.write_bytes(b"precious")
    real_mux = av.container.OutputContainer.mux
    calls = {"n": 0}

    class FakeContainer:
        def __init__(self, real):
            self.real = real

        def __getattr__(self, name):
            return getattr(self.real, name)

        def mux(self, packets):
            calls["n"] += 1
            if calls["n"] >= 4:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return real_mux(self.real, packets)
    real_open = av.open
    monkeypatch.setattr(av, "open", lambda *a, **k: FakeContainer(real_open(*a, **k)))
    code, err = run_main(["snow", "-r", "cpu-fast", "-s", "32", "-b", "0:40", "-o", str(out)], capsys)
    assert code == 2 and one_line(err) == f"render: error: cannot write {str(out)!r}: No space left on device"
    assert [f.name for f in tmp_path.iterdir()] == ["a.mp4"] and out.read_bytes() == b"precious"


@pytest.fixture
def small_disk(tmp_path):
    """A 512 KB tmpfs (root only; skipped elsewhere)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(disk)],
                                           capture_output=True, check=False).returncode:
        pytest.skip("mounting a small tmpfs needs root")
    try:
        yield disk
    finally:
        subprocess.run(["umount", str(disk)], capture_output=True, check=False)


@pytest.mark.parametrize("name", [pytest.param("a.mp4", marks=needs_av), "a.gif", "a.png"])
def test_a_real_full_disk_mid_animation(small_disk, name):
    """The disk fills part way through: one line saying so, no half file, and for a sequence
    the whole frames before it."""
    env = child_env()
    lossless = ["--crf", "0"] if name.endswith(".mp4") else []           # big frames: the disk fills soon
    p = subprocess.run([sys.executable, "-m", "circle_render", "snow", "-r", "cpu-fast", "-s", "512", "-b",
                        "0:400", "-o", name, "-q", *lossless], cwd=small_disk, env=env, capture_output=True,
                       text=True, check=False)
    assert p.returncode == 2, p.stderr
    line = one_line(p.stderr)
    assert "No space left on device" in line, line
    left = sorted(f.name for f in small_disk.iterdir())
    assert not [f for f in left if f.endswith(".part") or (small_disk / f).stat().st_size == 0]
    if name == "a.png":
        assert left == [f"a_{k:04d}.png" for k in range(len(left))] and f"written before it: {len(left)} of 400" in line
    else:
        assert left == []


def start(args, cwd):
    def defaults():
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
    return subprocess.Popen([sys.executable, "-m", "circle_render", *args], cwd=cwd,
                            env=child_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, preexec_fn=defaults)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
@pytest.mark.parametrize("name", [pytest.param("a.mp4", marks=needs_av), pytest.param("a.webm", marks=needs_av),
                                  "a.gif"])
def test_an_interrupted_animation_is_a_playable_file_of_whole_frames(tmp_path, sig, name):
    p = start(["snow", "-r", "cpu-fast", "-s", "64", "-b", "0:100000", "-o", name], tmp_path)
    deadline = time.monotonic() + 120
    while not list(tmp_path.iterdir()) and time.monotonic() < deadline:   # the temporary: frames are coming
        time.sleep(0.05)
    time.sleep(0.5)
    p.send_signal(sig)
    try:
        err = p.communicate(timeout=60)[1].decode()     # a hang fails the test, not the whole run
    except subprocess.TimeoutExpired:
        p.kill()
        pytest.fail(f"render did not end within 60 s of signal {sig}")
    assert p.returncode == 128 + sig, err
    line = one_line(err)
    assert [f.name for f in tmp_path.iterdir()] == [name], line
    n = int(line.split(f"render: interrupted after writing {name} (")[1].split(" of 100000 frames)")[0])
    assert n >= 1
    if name.endswith(".gif"):
        assert len(gif_durations(tmp_path / name)) <= n       # repeats are shown longer, not stored
    else:
        assert len(read_video(tmp_path / name)) == n


# --- what a run shows ---------------------------------------------------------------------------

def test_the_frames_bar_shows_rate_and_time_left(monkeypatch):
    from circle_render import progress
    now = [100.0]
    monkeypatch.setattr(progress.time, "perf_counter", lambda: now[0])
    term = Terminal()
    bar = progress.Progress("rendering snow", 600, stream=term, unit="frames", rate=True)
    for done in range(1, 61):
        now[0] += 0.05                                 # 20 frames a second
        bar.update(done)
    last = term.text.split("\r")[-1]                  # redrawn at most 5 times a second
    done = int(last.split("(")[1].split("/")[0])
    assert 55 <= done <= 60 and f"({done}/600 frames), 20.0 frames/s, 0:{(600 - done) // 20:02d} left" in last, last
    bar.close()
    assert term.text.endswith("\n") and "rendering snow done in" in term.text


def test_the_first_compile_is_announced_once(capsys, monkeypatch):
    """On a terminal, for cpu-fast's code (circle_render.cpu.*), once; nothing for other code."""
    import numba

    from circle_render import progress
    progress.set_quiet(False)
    monkeypatch.setattr(progress, "on_terminal", lambda stream: True)
    monkeypatch.setitem(progress._compile_notice, "said", False)
    progress.announce_compiles()
    progress.announce_compiles()                      # installed once

    def other(x):
        return x - 1

    def first(x):
        return x + 1

    def second(x):
        return x * 2
    first.__module__ = second.__module__ = "circle_render.cpu.made_up"
    numba.njit(other)(1)
    assert "compiling" not in capsys.readouterr().err
    numba.njit(first)(1)
    numba.njit(second)(2)
    err = capsys.readouterr().err
    assert err.count("render: compiling the CPU renderer (cpu-fast)") == 1, err


# --- the GPU: frames converted to 8-bit where they were drawn ---------------------------------

@pytest.mark.gpu
def test_cuda_frames_are_converted_on_the_gpu_exactly(tmp_path):
    from circle_render import registry
    from circle_render.io.pixels import frame_pixels
    from circle_render.scenes import make_scene
    r = registry.create("cuda")
    r.load(make_scene("snow"), 97, 97)
    for _ in range(3):
        r.clear()
        r.advance()
        r.render()
    pixels = frame_pixels(r)
    assert pixels.rgba8 is not None and pixels.image is None      # bytes crossed, not floats
    want = to_bytes(r.get_image())
    assert np.array_equal(pixels.rgb(), want)
    write_image(tmp_path / "a.png", pixels)
    assert np.array_equal(read_image(tmp_path / "a.png"), want)


@pytest.mark.gpu
@needs_av
@pytest.mark.parametrize("video", ["a.mp4", "a.webm"])
def test_cuda_video_decodes_to_its_pngs(tmp_path, video):
    env = child_env()
    for out in ("f.png", video):
        p = subprocess.run([sys.executable, "-m", "circle_render", "snow", "-r", "cuda", "-s", "96", "-b", "0:8",
                            "-o", out, "-q"], cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
        assert p.returncode == 0, p.stderr
    decoded = read_video(tmp_path / video)
    assert len(decoded) == 8
    for k, got in enumerate(decoded):
        want = read_image(tmp_path / f"f_{k:04d}.png")
        assert np.abs(got.astype(int) - want.astype(int)).mean() <= TOLERANCE["snow"][0]
        assert psnr(got, want) >= TOLERANCE["snow"][1]


def test_an_interrupt_python_had_to_swallow_is_sent_again(monkeypatch):
    """Raised in a __del__ (or a weakref or ctypes callback, as numba's run at any moment),
    KeyboardInterrupt is only printed by Python; the hook sends the signal again."""
    from circle_render import interrupts
    monkeypatch.setattr(sys, "unraisablehook", sys.unraisablehook)
    got = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: got.append(signum))
    try:
        interrupts.install_numba_safe(signals=())

        class Dropped:
            def __del__(self):
                from circle_render.errors import Interrupted
                raise Interrupted(signal.SIGTERM)
        Dropped()
        deadline = time.monotonic() + 5
        while not got and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert got == [signal.SIGTERM]
