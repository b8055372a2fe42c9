"""The render command end to end, in a subprocess: real exit codes and real stderr."""
import os

import numpy as np
import pytest
from helpers import render

from circle_render.golden.make import golden_path
from circle_render.io.images import read_image
from circle_render.scenes import SCENE_NAMES


def test_png_output_equals_golden(tmp_path):
    out = tmp_path / "x.png"
    p = render("rgb", "-r", "cpu", "-s", "256", "-o", str(out))
    assert p.returncode == 0, p.stderr
    assert np.array_equal(read_image(out), read_image(golden_path("rgb")))
    assert not [f for f in tmp_path.iterdir() if f.name != "x.png"]   # no temp files left


def test_ppm_output(tmp_path):
    out = tmp_path / "x.ppm"
    assert render("pattern", "-r", "cpu", "-s", "256", "-o", str(out)).returncode == 0
    assert out.read_bytes().startswith(b"P6\n256 256\n255\n")
    assert np.array_equal(read_image(out), read_image(golden_path("pattern")))


def test_several_frames_and_bench_lines(tmp_path):
    p = render("hypnosis", "-r", "cpu", "-s", "64", "-b", "2:5", "-o", str(tmp_path / "h.png"))
    assert p.returncode == 0, p.stderr
    assert sorted(f.name for f in tmp_path.iterdir()) == ["h_0002.png", "h_0003.png", "h_0004.png"]
    labels = [line.split(":")[0] for line in p.stdout.splitlines()]
    assert labels == ["Clear", "Advance", "Render", "Total"]
    assert "frames 2:5, mean per frame; start-up left out (an untimed warm-up frame" in p.stderr


def test_gif_is_one_animated_file(tmp_path):
    from PIL import Image
    out = tmp_path / "b.gif"
    assert render("bouncingballs", "-r", "cpu", "-s", "32", "-b", "0:6", "-o", str(out)).returncode == 0
    with Image.open(out) as im:
        assert im.n_frames == 6


def test_list_names_every_scene():
    p = render("list")
    assert p.returncode == 0
    assert [line.split()[0] for line in p.stdout.splitlines()] == list(SCENE_NAMES)


def test_auto_without_gpu_says_so_once_in_one_short_line(tmp_path):
    from circle_render.gpu import gpu_available
    if gpu_available():
        pytest.skip("a GPU is present")
    p = render("rgb", "-s", "16", "-o", str(tmp_path / "a.png"), "-b", "0:2")
    assert p.returncode == 0
    said = [line for line in p.stderr.splitlines() if "GPU" in line]
    assert len(said) == 1 and len(said[0]) <= 90, said          # once, short: the reason in a few words
    assert said[0].startswith("render: no usable GPU (") and said[0].endswith("; using the cpu-fast renderer")


@pytest.mark.parametrize("args", [["rgb", "--save-scene", "s.circles"], ["rgb", "-s", "8", "-q"],
                                  ["list"], ["--help"], ["rgb", "--help"]])
def test_no_gpu_notice_where_nothing_is_drawn_or_with_q(tmp_path, args):
    p = render(*args, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "GPU" not in p.stderr


def test_shell_completion_of_scene_names():
    p = render(env={"_RENDER_COMPLETE": "bash_complete", "COMP_WORDS": "render ran", "COMP_CWORD": "1"})
    names = [line.split(",")[1] for line in p.stdout.splitlines() if line.startswith("plain,")]
    assert names == ["rand10k", "rand100k", "rand1M"]


@pytest.mark.parametrize("args,needle", [
    (["nosuchscene"], "unknown scene 'nosuchscene'; accepted: rgb"),
    (["rgb", "-s", "0"], "1<=x<=16384"),
    (["rgb", "-s", "100000"], "1<=x<=16384"),
    (["rgb", "-b", "4:2"], "0 <= START < END"),
    (["rgb", "-b", "4"], "expected START:END"),
    (["rgb", "-b", "a:b"], "expected START:END"),
    (["rgb", "-o", "x.jpg"], "accepted: .png, .ppm, .gif"),
    (["rgb", "-o", "/nonexistent-dir/x.png"], "does not exist"),
    (["rgb", "-r", "metal"], "unknown renderer 'metal'; accepted: auto, cpu"),
    (["rgb", "-S", "-3"], "--seed"),
    (["rgb", "--bogus"], "No such option"),
])
def test_bad_input_one_line_exit_2(args, needle, tmp_path):
    p = render(*args, cwd=tmp_path)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in p.stderr
    assert list(tmp_path.iterdir()) == []


def test_unwritable_folder_exit_2(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("runs as root, who may write into a read-only folder: run as a normal user")
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o500)
    p = render("rgb", "-r", "cpu", "-o", str(ro / "x.png"))
    assert p.returncode == 2 and "not writable" in p.stderr


def test_failed_write_leaves_no_partial_file(tmp_path, monkeypatch):
    from circle_render.io import images as image_io

    def broken_png(pixels, f):
        f.write(b"half a png")
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(image_io, "_write_png", broken_png)
    with pytest.raises(OSError):
        image_io.write_image(tmp_path / "x.png", np.zeros((4, 4, 3), np.uint8))
    assert list(tmp_path.iterdir()) == []


def test_cuda_without_gpu_is_a_clear_error():
    from circle_render.gpu import gpu_available
    if gpu_available():
        pytest.skip("a GPU is present")
    p = render("rgb", "-r", "cuda", "-s", "16")
    assert p.returncode == 2 and "needs a CUDA GPU" in p.stderr and len(p.stderr.strip().splitlines()) == 1
