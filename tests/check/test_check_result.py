"""`render check --json FILE` and `--plot FILE.png` (no GPU needed: the CPU renderers), and the
check's one short no-GPU line."""
import itertools
import json
import math

import numpy as np
import pytest
from helpers import FAST, WRAPPED, check, plugin, table_rows

from circle_render.check.plot import bands
from circle_render.check.result import scene_record
from circle_render.check.scene_check import SceneResult
from circle_render.check.tf import TfChoice, TfSource
from circle_render.course import RULES, scene_score


def test_the_json_holds_the_table_and_how_each_number_was_made_and_the_plot_draws_it(tmp_path):
    from PIL import Image
    (tmp_path / "ref.json").write_text(json.dumps({"rgb": 1e-6, "pattern": 1e6}))
    p = check(tmp_path, "-r", "cpu", *FAST, "--ref-times", "ref.json", "--json", "out.json", "--plot", "out.png")
    assert p.returncode == 0, p.stderr
    rec = json.loads((tmp_path / "out.json").read_text())
    rows = table_rows(p.stdout)
    assert rec["format"] == "circle-render check result" and rec["format_version"] == 1
    assert rec["renderer"] == {"spec": "cpu", "name": "cpu", "user_class": False}
    assert rec["rules"]["name"] == "cmu" and rec["size"] == 32 and rec["runs"] == 1 and rec["tf_mode"] == "auto"
    assert rec["version"] and rec["date"] and rec["command"].startswith("render check -r cpu")
    assert rec["isolation_mode"] == "trusted" and rec["footer"] in p.stdout
    by_scene = {s["scene"]: s for s in rec["scenes"]}
    assert list(by_scene) == ["rgb", "pattern"]
    for name, s in by_scene.items():
        # the table prints 4 decimals of the time the JSON holds to 6: the same number, rounded once
        assert abs(float(rows[name][1]) - s["t_ms"]) <= 5e-5 + 1e-9
        assert abs(float(rows[name][0]) - s["tf_ms"]) <= 5e-5 + 1e-9
        assert s["score"] == int(rows[name][2]) == scene_score(RULES["cmu"], s["passed"], s["t_ms"], s["tf_ms"])
        assert s["passed"] and s["tf_from"] == "ref-times" and "--ref-times" in s["tf_detail"]
        assert s["tf_stored_ms"] is None and s["tf_live_ms"] is None and s["output_cost_ms"] == 0
        assert s["t_ms"] == s["t_measured_ms"] == min(s["runs_ms"]) and len(s["runs_ms"]) == 1
        assert len(s["seeds"]) == 2 and s["seeds"][0] == 0 and s["points"] == 12
    assert by_scene["rgb"]["score"] == 2 and by_scene["pattern"]["score"] == 12
    assert rec["total"] == 14 and rec["max_total"] == 24 and rec["passed"]

    img = np.asarray(Image.open(tmp_path / "out.png").convert("RGB"))
    assert img.shape[0] > 100 and img.shape[1] > 600
    green = np.all(img == (70, 160, 95), axis=2)           # the all-points band is drawn, one per row
    red = np.all(img == (205, 95, 80), axis=2)             # and the correctness-only band
    assert green.sum() > 1000 and red.sum() > 200
    assert "wrote the result to out.json" in p.stderr and "wrote its plot to out.png" in p.stderr


def test_a_failed_scene_in_the_json(tmp_path):
    path = plugin(tmp_path, WRAPPED)
    p = check(tmp_path, "-r", f"{path}:Wrong", *FAST, "--baseline", "cpu", "--json", "r.json", "--plot", "r.png")
    assert p.returncode == 1
    rec = json.loads((tmp_path / "r.json").read_text())
    s = rec["scenes"][0]
    assert not s["passed"] and "mismatches (more than 5)" in s["reason"] and s["score"] == 0
    assert s["mismatches"] > 5 and s["tf_ms"] is None and not rec["passed"] and rec["total"] == 0
    assert rec["renderer"]["user_class"] and rec["isolation_mode"] in ("nobody", "landlock", "none")
    assert (tmp_path / "r.png").stat().st_size > 0


@pytest.mark.parametrize("args,message", [
    (["--json", "out.txt"], "unknown --json suffix '.txt'"),
    (["--plot", "out.jpg"], "unknown --plot suffix '.jpg'"),
    (["--json", "missing/out.json"], "folder 'missing' does not exist"),
    (["--plot", "missing/out.png"], "folder 'missing' does not exist"),
])
def test_a_result_that_could_not_be_written_is_refused_before_any_scene(tmp_path, args, message):
    p = check(tmp_path, "-r", "cpu", *FAST, *args)
    assert p.returncode == 2 and message in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "logs").exists()


def test_json_and_plot_are_for_the_renderer_check(tmp_path):
    p = check(tmp_path, "scan", "--json", "x.json")
    assert p.returncode == 2 and "--json and --plot go with render check of a renderer" in p.stderr


@pytest.mark.parametrize("rules", ["cmu", "cs149"])
def test_the_plots_bands_score_as_the_course_does(rules):
    r = RULES[rules]
    spans = bands(r.perf_points)
    assert spans[0][:2] == (0.0, 1.2) and spans[-1][1] == math.inf
    assert all(a < b for a, b, _ in spans) and all(b == a2 for (_, b, _), (a2, _, _) in itertools.pairwise(spans))
    edges = {a for a, _, _ in spans} | {b for _, b, _ in spans}
    for ratio in np.geomspace(0.05, 50, 2001):
        if any(math.isclose(ratio, e, rel_tol=1e-6) for e in edges):
            continue                                    # on an edge: the formula's own rounding decides
        points = next(p for a, b, p in spans if a < ratio < b)
        assert r.correctness_points + points == scene_score(r, True, float(ratio), 1.0), ratio


def test_one_run_under_tf_live_records_both_tfs():
    """What course_fidelity.py scores both tables from: the stored Tf and the calibrated live one,
    each with the -f cost the check adds to T."""
    source = TfSource(reference={"rgb": 0.05}, output_cost={"rgb": 0.03}, ratios={"rgb": 0.8})
    source.chosen["rgb"] = TfChoice("calibrated", live_ms=0.04, ratio=0.8)
    res = SceneResult("rgb", passed=True, t=0.11, tf=0.08, live=True, score=11, seeds=[0, 7], t_measured=0.08,
                      output_cost=0.03, runs_ms=[0.08, 0.09])
    rec = scene_record(res, source, RULES["cmu"])
    assert rec["tf_stored_ms"] == pytest.approx(0.08) and rec["tf_live_ms"] == pytest.approx(0.08)
    assert rec["tf_live_renderer_ms"] == 0.04 and rec["tf_live_ratio"] == 0.8 and rec["tf_from"] == "calibrated"
    assert rec["t_ms"] == 0.11 and rec["t_measured_ms"] == 0.08 and rec["output_cost_ms"] == 0.03


def test_without_a_gpu_the_check_says_so_in_one_short_line_and_not_with_q(tmp_path):
    from circle_render.gpu import gpu_available
    if gpu_available():
        pytest.skip("a GPU is present")
    p = check(tmp_path, "-r", "cpu", "-s", "16", "--runs", "1", "--scenes", "rgb")
    said = [line for line in p.stderr.splitlines() if "GPU" in line]
    assert p.returncode == 0 and len(said) == 1 and len(said[0]) <= 100, said
    assert said[0].startswith("check: no usable GPU (") and said[0].endswith("; using the cpu-fast renderer")
    quiet = check(tmp_path, "-r", "cpu", "-s", "16", "--runs", "1", "--scenes", "rgb", "-q")
    assert quiet.returncode == 0 and "GPU" not in quiet.stderr
