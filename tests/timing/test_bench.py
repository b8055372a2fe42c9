"""Start-up left out of the times `render SCENE -b` and `render bench` print (an untimed warm-up
frame on a renderer of its own, timing/frames.py warm_up), `render bench`'s record, table and
plot for CPU and GPU records. The clock is the fake one of test_timer.py: a renderer's first
frame in the process costs 1000 ms, every later phase 1 ms, so only where the warm-up goes
decides what the timed frames show."""
import json

import numpy as np
import pytest
from helpers import ROOT, FakeClock
from PIL import Image

from circle_render import cli
from circle_render.timing import timer
from circle_render.timing.bench import format_table, run_bench
from circle_render.timing.frames import course_time, warm_up
from circle_render.timing.plot import legend, plot_record, title_lines

SPEC = "test_bench:FirstFrameSlow"
CLOCK = FakeClock()


class FirstFrameSlow:
    """A CPU renderer whose first render in the process pays 1000 ms (loading compiled code,
    say); every phase after that costs 1 ms of the fake clock."""
    name = "first-frame-slow"
    started = False
    made = 0

    def __init__(self):
        type(self).made += 1
        self.image = np.ones((8, 8, 4), np.float32)

    def load(self, scene, width, height):
        self.image = np.ones((height, width, 4), np.float32)

    def clear(self):
        CLOCK.spend("clear", 1)

    def advance(self):
        CLOCK.spend("advance", 1)

    def render(self):
        cls = type(self)
        CLOCK.spend("render", 1 if cls.started else 1000)
        cls.started = True

    def get_image(self):
        return self.image


@pytest.fixture
def fresh_process(monkeypatch):
    """The fake clock, and FirstFrameSlow as in a fresh process (nothing started yet)."""
    monkeypatch.setattr(timer.time, "perf_counter", CLOCK)
    FirstFrameSlow.started, FirstFrameSlow.made = False, 0
    return CLOCK


def test_warm_up_is_one_frame_on_a_renderer_of_its_own(fresh_process):
    from circle_render.scenes import make_scene
    seconds = warm_up(FirstFrameSlow, make_scene("rgb"), 8)
    assert seconds == pytest.approx(1.002) and FirstFrameSlow.made == 1
    _, totals = course_time(FirstFrameSlow, make_scene("rgb"), 8, runs=1)
    assert totals == pytest.approx([3]) and FirstFrameSlow.made == 2


def test_course_time_alone_keeps_the_first_frame_in_the_first_run(fresh_process):
    """render check's timing: exactly the frames asked for, the process's start-up included
    (as the course's checker times its binary's frames 0:4)."""
    from circle_render.scenes import make_scene
    _, totals = course_time(FirstFrameSlow, make_scene("rgb"), 8, runs=2)
    assert totals == pytest.approx([(1002 + 3 * 3) / 4, 3])


def test_render_b_leaves_start_up_out_and_says_so(fresh_process, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["rgb", "-r", SPEC, "-s", "8", "-b", "0:1"])
    out, err = capsys.readouterr()
    assert e.value.code == 0, err
    assert out.splitlines() == ["Clear:    1.0000 ms", "Advance:  1.0000 ms", "Render:   1.0000 ms",
                                "Total:    3.0000 ms"]          # the course's four lines only
    assert "start-up left out (an untimed warm-up frame on a renderer of its own ran first, 1002.0 ms)" in err
    with pytest.raises(SystemExit):
        cli.main(["rgb", "-r", SPEC, "-s", "8", "-b", "0:1", "-q"])
    assert capsys.readouterr().err == ""


def test_bench_warms_up_every_scene_and_names_cpu_timing_honestly(fresh_process):
    record = run_bench(SPEC, ["rgb", "rgby"], 8, runs=1)
    for name in ("rgb", "rgby"):
        e = record["scenes"][name]
        assert e["total_ms"] == pytest.approx(3) and e["render_ms"] == pytest.approx(1)
        assert "render_kernel_ms" not in e
    assert record["scenes"]["rgb"]["warmup_ms"] == pytest.approx(1002)
    assert record["on_gpu"] is False and record["device"] == record["cpu"] and record["cpu_cores"] >= 1
    assert "CUDA events around" not in record["method"] and "warm-up" in record["method"]
    table = format_table(record)
    assert "kernel" not in table and "render ms" in table.splitlines()[2]
    assert table.splitlines()[0].startswith(f"first-frame-slow on {record['cpu']} (")
    assert table.splitlines()[1] == "ms per frame: the course's method, frames 0:4, one run, after a warm-up frame"


def test_bench_defaults_to_auto(tmp_path, capsys, monkeypatch):
    from circle_render.gpu import gpu_available
    if gpu_available():
        pytest.skip("a GPU is present: auto is cuda")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as e:
        cli.main(["bench", "--scenes", "rgb", "-s", "8", "--runs", "1", "-o", "r.json"])
    out, err = capsys.readouterr()
    assert e.value.code == 0, err
    assert "bench: no usable GPU (" in err and "using the cpu-fast renderer" in err
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["renderer"] == "cpu-fast" and record["gpu"] is None
    with Image.open(tmp_path / "r.png") as im:                     # the plot beside the record
        assert im.format == "PNG" and im.width > 400
    assert out.splitlines()[0].startswith("cpu-fast on ")


def test_bench_plot_path_is_checked_before_running(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["bench", "-r", SPEC, "-o", str(tmp_path / "r.json"), "--plot", str(tmp_path / "r.jpg")])
    assert e.value.code == 2 and "unknown plot suffix '.jpg'" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


CPU_RECORD = {"gpu": None, "cpu": "Some CPU", "cpu_cores": 2, "device": "Some CPU", "on_gpu": False,
              "renderer": "cpu-fast", "renderer_name": "cpu-fast", "version": "0.2.0", "commit": "unknown",
              "size": 256, "frames": "0:4", "runs": 1,
              "scenes": {"rgb": {"total_ms": 0.12, "render_ms": 0.1, "warmup_ms": 14.0},
                         "rand10k": {"total_ms": 31.9, "render_ms": 31.0, "warmup_ms": 40.0}}}


def test_the_plot_of_a_cpu_record_names_what_it_shows():
    first, second = title_lines(CPU_RECORD)
    assert first == "cpu-fast on Some CPU (2 cores), 256x256, circle-render 0.2.0"
    assert "None" not in first + second and "unknown" not in first + second
    assert "one run, after a warm-up frame" in second
    assert [label for _, label in legend(CPU_RECORD)] == ["cpu-fast"]     # no empty course entry


def test_the_plot_of_a_gpu_record_has_the_course_beside_it(tmp_path):
    path = ROOT / "benchmarks/results/H100-cuda-1024-e7bf63a.json"
    record = json.loads(path.read_text())
    assert title_lines(record)[0] == "cuda on NVIDIA H100 80GB HBM3, 1024x1024, circle-render 0.2.0 at e7bf63a"
    assert [label for _, label in legend(record)] == ["cuda", "the course's binary on NVIDIA H100 80GB HBM3"]
    plot_record(record, tmp_path / "p.png")
    with Image.open(tmp_path / "p.png") as im:
        rgb = np.asarray(im.convert("RGB"))
    rows = len(record["scenes"])
    blue = np.all(rgb == (40, 110, 200), axis=-1).any(axis=1).sum()
    orange = np.all(rgb == (200, 120, 40), axis=-1).any(axis=1).sum()
    assert blue >= rows * 10 and orange >= rows * 10               # a bar of each per scene


@pytest.mark.gpu
def test_bench_on_the_gpu_gives_kernel_times_and_the_course_beside_them(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["bench", "--scenes", "rgb,snowsingle", "-s", "1024", "--runs", "1",
                  "-o", str(tmp_path / "r.json"), "--plot", str(tmp_path / "p.png"), "-q"])
    out, err = capsys.readouterr()
    assert e.value.code == 0 and err == "", err
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["renderer"] == "cuda" and record["on_gpu"] is True and record["device"] == record["gpu"]
    for entry in record["scenes"].values():
        assert entry["render_kernel_ms"] > 0 and 0 < entry["total_ms"] < entry["warmup_ms"]
    assert "kernel ms" in out.splitlines()[2] and "CUDA events around render() alone" in out
    with Image.open(tmp_path / "p.png") as im:
        assert im.format == "PNG"
