"""`render check` end to end on the CPU: the table, reference-time sources, plugins, logs."""
import json

import pytest
from helpers import FAST, ROOT, WRAPPED, check, plugin, render, table_rows


def test_cpu_check_prints_the_course_table_and_caches_references(tmp_path):
    p = check(tmp_path, "-r", "cpu", *FAST)
    assert p.returncode == 0, p.stderr
    rows = table_rows(p.stdout)
    assert set(rows) == {"rgb", "pattern", ""}
    scores = [int(rows[s][2]) for s in ("rgb", "pattern")]            # cpu against cpu-fast, live:
    assert all(2 <= v <= 12 for v in scores) and rows[""][1] == f"{sum(scores)}/24"   # timing noise
    from circle_render.gpu import gpu_available
    assert ("Tf*: cuda-tiled (the course's design) timed live" if gpu_available() else   # 32 != 1024
            "Tf*: the cpu-fast renderer timed live in this run (no GPU)") in p.stdout
    assert "check: [1/2] rgb: reference image, seed 0" in p.stderr and "run 1/1" in p.stderr
    cached = list((tmp_path / "cache" / "reference").glob("rgb-32-0-*.npy"))
    assert len(cached) == 1 and cached[0].with_suffix(".mac").is_file()
    again = check(tmp_path, "-r", "cpu", *FAST)
    assert "reference image, seed 0" not in again.stderr                # served from the cache
    assert "reference image, seed " in again.stderr                     # a new random seed: not
    log = (tmp_path / "logs" / "rgb.log").read_text()
    assert "correctness: passed" in log and "every run's per-frame Total" in log


def test_ref_times_file(tmp_path):
    (tmp_path / "ref.json").write_text(json.dumps({"rgb": 1e-6, "pattern": 1e6}))
    p = check(tmp_path, "-r", "cpu", *FAST, "--ref-times", "ref.json")
    assert p.returncode == 0, p.stderr
    rows = table_rows(p.stdout)
    assert rows["rgb"] == ["0.0000", rows["rgb"][1], "2"]               # > 10x slower: 2 points
    assert rows["pattern"][2] == "12"                                   # far faster: all 12
    assert "Tf: from ref.json (--ref-times)" in p.stdout


def test_example_renderer_from_readme_passes(tmp_path):
    example = ROOT / "examples" / "my_renderer.py"
    assert example.read_text() in (ROOT / "docs" / "check.md").read_text()   # docs/check.md shows all of it
    p = check(tmp_path, "-r", f"{example}:MyRenderer", "-s", "32", "--runs", "1",
              "--scenes", "rgb,pattern,snowsingle,hypnosis", "--baseline", "cpu")
    assert p.returncode == 0, p.stderr + p.stdout
    assert all(r[1] and "(F)" not in r[1] for r in table_rows(p.stdout).values())


@pytest.mark.parametrize("cls,reason", [
    ("Raises", "RuntimeError: kernel exploded"),
    ("WrongShape", "returned shape (32, 32, 3), expected (32, 32, 4)"),
    ("WrongDtype", "returned dtype float64, expected float32"),
    ("NaNs", "1 non-finite values (first at pixel (4, 3) channel g)"),
    ("Wrong", "mismatches (more than 5)"),
])
def test_failing_plugin_is_marked_F_and_the_table_still_prints(tmp_path, cls, reason):
    path = plugin(tmp_path, WRAPPED)
    p = check(tmp_path, "-r", f"{path}:{cls}", *FAST, "--baseline", "cpu")
    assert p.returncode == 1
    rows = table_rows(p.stdout)
    assert rows["rgb"][1].endswith("(F)") and rows["rgb"][2] == "0" and rows[""][1] == "0/24"
    assert reason in (tmp_path / "logs" / "rgb.log").read_text()
    assert (tmp_path / "logs" / "rgb-mismatches.png").exists() == (cls == "Wrong")


def test_good_plugin_by_module_name(tmp_path):
    plugin(tmp_path, WRAPPED, "my_pkg_renderer.py")
    p = render("check", "-r", "my_pkg_renderer:Good", *FAST, "--baseline", "cpu", cwd=tmp_path,
               env={"CIRCLE_RENDER_CACHE": str(tmp_path / "cache"), "PYTHONPATH": f"{ROOT}:{tmp_path}"})
    assert p.returncode == 0, p.stderr
    assert "renderer good" in p.stderr


@pytest.mark.parametrize("spec,message", [
    ("nofile.py:X", "no such file 'nofile.py'"),
    ("no_such_module_xyz:X", "importing 'no_such_module_xyz' raised ModuleNotFoundError"),
    ("{plugin}:Missing", "has no 'Missing'"),
    ("{plugin}:NoRender", "it lacks clear, advance, render, get_image"),
    ("{broken}:X", "raised SyntaxError"),
    ("metal", "unknown renderer 'metal'"),
])
def test_plugin_that_cannot_load_is_one_line_exit_2(tmp_path, spec, message):
    path = plugin(tmp_path, WRAPPED)
    broken = plugin(tmp_path, "def (:\n", "broken.py")
    p = check(tmp_path, "-r", spec.format(plugin=path, broken=broken), *FAST)
    assert p.returncode == 2 and message in p.stderr and len(p.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("args,message", [
    (["--ref-times", "ref.json", "--baseline", "cpu"], "not --ref-times and --baseline"),
    (["--baseline", "cpu", "--tf", "live"], "not --baseline and --tf"),
    (["--scene-timeout", "0"], "--scene-timeout"),
    (["--ref-times", "missing.json"], "cannot read --ref-times 'missing.json'"),
    (["--ref-times", "bad.json"], "is not valid JSON"),
    (["--ref-times", "partial.json"], "has no time for scene 'pattern'"),
    (["--scenes", "rgb,nope"], "unknown scene 'nope'"),
    (["--rules", "mit"], "'cmu', 'cs149'"),
])
def test_bad_check_options(tmp_path, args, message):
    (tmp_path / "ref.json").write_text("{}")
    (tmp_path / "bad.json").write_text("{")
    (tmp_path / "partial.json").write_text('{"rgb": 1}')
    p = check(tmp_path, "-r", "cpu", *FAST, *args)
    assert p.returncode == 2 and message in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_scan_check_needs_a_gpu(tmp_path):
    from circle_render.gpu import gpu_available
    if gpu_available():
        pytest.skip("a GPU is present")
    p = check(tmp_path, "scan")
    assert p.returncode == 2 and "needs a CUDA GPU" in p.stderr


@pytest.mark.parametrize("text,message", [
    ('{"rgb": Infinity, "pattern": 1}', "Infinity is not a number of milliseconds"),
    ('{"rgb": NaN, "pattern": 1}', "NaN is not a number of milliseconds"),
    ('{"rgb": 1e400, "pattern": 1}', "1e400 is out of range"),
    ('{"rgb": true, "pattern": 1}', "the time of 'rgb' must be a finite number of ms above 0, got true"),
    ('{"rgb": 0, "pattern": 1}', "the time of 'rgb' must be a finite number of ms above 0, got 0.0"),
    ('{"rgb": -1, "pattern": 1}', "must be a finite number of ms above 0, got -1.0"),
    ('{"rgb": "0.05", "pattern": 1}', "must be a finite number of ms above 0, got \"0.05\""),
    ('{"rgb": ' + "9" * 400 + ', "pattern": 1}', "has 400 characters"),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ("\xff\xfe", "cannot read --ref-times"),
], ids=["inf", "nan", "1e400", "true", "zero", "negative", "string", "400 digits", "deep", "not utf-8"])
def test_ref_times_holds_finite_positive_milliseconds_only(tmp_path, text, message):
    (tmp_path / "r.json").write_bytes(text.encode("latin-1"))
    p = check(tmp_path, "-r", "cpu", *FAST, "--ref-times", "r.json")
    assert p.returncode == 2 and message in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_ref_times_that_never_ends_is_refused(tmp_path):
    p = check(tmp_path, "-r", "cpu", *FAST, "--ref-times", "/dev/zero")
    assert p.returncode == 2 and "it holds more than 1 MiB" in p.stderr


@pytest.mark.parametrize("value", ["inf", "nan", "1e400"])
def test_scene_timeout_is_finite(tmp_path, value):
    p = check(tmp_path, "-r", "cpu", *FAST, "--scene-timeout", value)
    assert p.returncode == 2 and "--scene-timeout must be a finite number of seconds" in p.stderr


def test_a_log_folder_that_cannot_be_written_is_refused_before_any_scene(tmp_path):
    import os
    if os.geteuid() == 0:
        logs = "/proc/circle-render-logs"                    # root writes anywhere but here
    else:
        (tmp_path / "ro").mkdir(mode=0o500)
        logs = str(tmp_path / "ro")
    p = check(tmp_path, "-r", "cpu", *FAST, "--logs", logs)
    assert p.returncode == 2 and f"cannot write in the log folder {logs!r}" in p.stderr
    assert "[1/2]" not in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_log_files_are_replaced_whole_a_link_is_not_followed(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    (tmp_path / "outside.txt").write_text("keep me\n")
    (logs / "rgb.log").symlink_to(tmp_path / "outside.txt")
    (logs / "pattern.log").write_text("old\n")
    (logs / "pattern.log").chmod(0o444)
    p = check(tmp_path, "-r", "cpu", *FAST)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "outside.txt").read_text() == "keep me\n"
    for name in ("rgb.log", "pattern.log"):
        f = logs / name
        assert f.is_file() and not f.is_symlink() and f.read_text().startswith(f"scene {name[:-4]}")


def test_a_par_file_never_rounds_a_radius_to_zero(tmp_path):
    (tmp_path / "tiny.circles").write_text("circle-render scene 1\nshading snow\ncount 2\n"
                                           "0.5 0.5 0.5 0.1 1 1 1\n0.5 0.5 0.5 4e-7 1 1 1\n")
    p = render("tiny.circles", "-r", "cpu", "-s", "8", "--save-scene", "t.par", cwd=tmp_path)
    assert p.returncode == 2 and "circle 1's radius 4e-07 would be written as 0.000000" in p.stderr
    assert not (tmp_path / "t.par").exists()
    p = render("tiny.circles", "-r", "cpu", "-s", "8", "--save-scene", "t.circles", cwd=tmp_path)
    assert p.returncode == 0 and render("t.circles", "-r", "cpu", "-s", "8", cwd=tmp_path).returncode == 0
