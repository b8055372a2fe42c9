"""Where Tf comes from (no GPU needed: the GPU's name is mocked): the course's stored times only
on the GPU model and at the size they were measured on; elsewhere cuda-tiled timed live and
divided by its ratio to the course's binary; without a GPU the cpu renderer, said plainly."""
import pytest

from circle_render.check import tf as tf_module
from circle_render.check.runner import LoadedRenderer
from circle_render.course import calibration, output_costs, stored_times

H100, RTX3090 = "NVIDIA H100 80GB HBM3", "NVIDIA GeForce RTX 3090"
CMU = ["rgb", "rand10k", "rand100k", "pattern", "snowsingle", "biglittle"]


@pytest.fixture
def on_gpu(monkeypatch):
    """A machine whose GPU is named by the test; renderers are not made (nothing runs)."""
    monkeypatch.setattr(tf_module, "gpu_status", lambda: (True, "ok"))
    monkeypatch.setattr(tf_module, "load_renderer", lambda spec, *args: LoadedRenderer(spec, spec, False))

    def name(gpu):
        monkeypatch.setattr(tf_module, "gpu_name", lambda: gpu)
    return name


def live_ms(ms):
    calls = []

    def time_live(renderer):
        calls.append(renderer.name)
        return ms, ""
    return time_live, calls


@pytest.mark.parametrize("gpu", ["NVIDIA A100-SXM4-40GB", "NVIDIA H100 PCIe", "NVIDIA H100", "Tesla T4",
                                 "NVIDIA H100 80GB HBM3 (MIG 1g.10gb)"])
def test_another_gpu_gets_cuda_tiled_scaled_by_its_ratio(on_gpu, gpu):
    on_gpu(gpu)
    source = tf_module.tf_source(None, None, None, CMU, 1024)
    ratio = calibration().ratios["rand10k"]
    time_live, calls = live_ms(ratio * 2)                        # cuda-tiled live: 2x the binary's
    tf, live, where = source.tf("rand10k", time_live)
    assert tf == pytest.approx(2.0 + output_costs()["rand10k"]) and live and calls == ["cuda-tiled"]
    assert f"divided by its ratio {ratio}" in where
    assert source.footer().startswith("Tf*: cuda-tiled (the course's design) timed live")
    assert f"no stored course times for the {gpu}" in source.footer()


@pytest.mark.parametrize("size", [256, 512, 1000, 2048])
def test_another_size_on_the_h100_is_calibrated(on_gpu, size):
    on_gpu(H100)
    source = tf_module.tf_source(None, None, None, CMU, size)
    assert source.stored == {}
    source.tf("rgb", live_ms(1.0)[0])
    assert f"measured at 1024x1024, not {size}x{size}" in source.footer()


def test_the_h100_at_1024_uses_its_stored_times_without_timing_anything(on_gpu):
    on_gpu(H100.lower())                                          # case does not matter
    source = tf_module.tf_source(None, None, None, CMU, 1024)
    time_live, calls = live_ms(99.0)
    for scene in CMU:
        tf, live, where = source.tf(scene, time_live)
        assert tf == pytest.approx(stored_times(H100, "render_f")[scene]) and not live
        assert where.startswith(source.stored_label) and "plus the course's -f cost" in where
    lines = source.footer().splitlines()
    assert calls == [] and lines[0] == f"Tf: {source.stored_label}" and "1024x1024" in lines[0]
    assert lines[1].startswith("T and Tf include the course's -f cost")
    assert lines[2].startswith("Stored Tf of launch-bound scenes: the course's binary took rgb 0.084-0.112, "
                               "pattern 0.113-0.145 ms (with -f) in different sessions")


def test_heavy_scenes_alone_say_nothing_of_sessions(on_gpu):
    on_gpu(H100)
    source = tf_module.tf_source(None, None, None, ["rand100k", "biglittle"], 1024)
    for scene in ("rand100k", "biglittle"):
        source.tf(scene, live_ms(1.0)[0])
    assert "sessions" not in source.footer() and len(source.footer().splitlines()) == 2


def test_tf_live_keeps_the_stored_times_for_the_record(on_gpu):
    """One --tf live run gives both tables (benchmarks/course_fidelity.py): the stored Tf is
    known, with the same -f cost, though not scored against."""
    on_gpu(H100)
    source = tf_module.tf_source(None, None, "live", CMU, 1024)
    assert source.stored == {} and source.stored_tf("rgb") == pytest.approx(stored_times(H100, "render_f")["rgb"])
    tf, live, _ = source.tf("rgb", live_ms(0.05)[0])
    ratio = calibration().ratios["rgb"]
    assert live and tf == pytest.approx(0.05 / ratio + output_costs()["rgb"])
    assert source.chosen["rgb"] == tf_module.TfChoice("calibrated", 0.05, ratio)
    assert "sessions" not in source.footer()                 # no stored Tf was scored against
    other = tf_module.tf_source(None, None, "live", CMU, 512)
    assert other.stored_tf("rgb") is None                    # stored at 1024 only


def test_tf_live_hides_the_stored_times(on_gpu):
    on_gpu(H100)
    source = tf_module.tf_source(None, None, "live", CMU, 1024)
    time_live, calls = live_ms(1.0)
    assert source.tf("rgb", time_live)[1] and calls == ["cuda-tiled"] and "--tf live" in source.footer()


def test_a_table_lacking_a_scene_mixes_stored_and_calibrated(on_gpu):
    on_gpu(RTX3090)                                               # its snowsingle is another scene
    source = tf_module.tf_source(None, None, None, CMU, 1024)
    time_live, calls = live_ms(1.0)
    assert source.tf("rgb", time_live)[0] == pytest.approx(0.0769 + output_costs()["rgb"]) and calls == []
    assert source.tf("snowsingle", time_live)[0] == pytest.approx(1 / calibration().ratios["snowsingle"]
                                                                  + output_costs()["snowsingle"])
    lines = source.footer().splitlines()
    assert lines[0].startswith("Tf: the course's reference binary") and "lack snowsingle" in lines[1]


def test_without_a_gpu_tf_is_the_cpu_renderer_and_it_says_so(monkeypatch):
    monkeypatch.setattr(tf_module, "gpu_status", lambda: (False, "no CUDA GPU is visible"))
    source = tf_module.tf_source(None, None, None, CMU, 64)
    assert source.live.name == "cpu-fast" and source.notice.startswith("no usable GPU (")
    assert len(source.notice) < 100 and "\n" not in source.notice           # one short line (issue 41)
    source.tf("rgb", live_ms(3.0)[0])
    assert source.footer() == "Tf*: the cpu-fast renderer timed live in this run (no GPU): not the course's times"


def test_every_scene_has_a_ratio_with_its_method():
    from circle_render.scenes import SCENE_NAMES
    cal = calibration()
    assert set(cal.ratios) == set(SCENE_NAMES) and all(0.3 < r < 2 for r in cal.ratios.values())
    assert cal.renderer == "cuda-tiled" and "ratio = cuda-tiled Total / course binary Total" in cal.method
    assert stored_times("NVIDIA H100 PCIe") is None and stored_times(H100, size=512) is None
    assert stored_times(H100, "scan", size=512) is not None       # scan times have no image size


def test_the_courses_output_cost_is_stored_for_every_scene():
    """render_f (the binary timed with -f) beside render (without): their difference, the -f
    cost, is what the course's facts say it is (0.04-0.06 ms on the small scenes, at most)."""
    from circle_render.scenes import SCENE_NAMES
    costs = output_costs()
    assert set(costs) == set(SCENE_NAMES)
    assert all(0 <= c <= 0.06 for c in costs.values()) and costs["rgb"] == pytest.approx(0.0291)


def test_no_output_cost_where_tf_is_not_the_courses(monkeypatch, tmp_path):
    (tmp_path / "ref.json").write_text('{"rgb": 0.05}')
    assert tf_module.tf_source(str(tmp_path / "ref.json"), None, None, ["rgb"], 1024).output_cost == {}
    monkeypatch.setattr(tf_module, "gpu_status", lambda: (False, "no CUDA GPU is visible"))
    assert tf_module.tf_source(None, None, None, ["rgb"], 64).output_cost == {}
