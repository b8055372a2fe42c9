"""Scene files (.par, .circles): round trips, every malformed-input message, property tests."""
import re

import numpy as np
import pytest
from helpers import render
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from circle_render.cpu.animation import advance
from circle_render.cpu.reference import reference_image
from circle_render.io.scene_files import MAX_ABS, SceneFileError, load_scene, save_scene, scene_text
from circle_render.scenes import make_scene
from circle_render.scenes.scene import FLAT, SNOW

GOOD_PAR = "2\n0.5 0.5 0.1 0 0 0 0.2\n0.25 0.75 0.9 0 0 0 0.05\n"
GOOD_CIRCLES = "circle-render scene 1\nshading flat\ncount 2\n0.5 0.5 0.5 0.2 1 0 0\n0.3 0.3 0.3 0.1 0 0 1\n"
GOOD_CIRCLES_2 = ("circle-render scene 2\nshading flat\nbackground 0 0 0 0\nantialias yes\n"
                  "columns x y z radius r g b alpha edge_r edge_g edge_b edge_alpha edge_width\ncount 2\n"
                  "0.5 0.5 0.5 0.2 1 0 0 0.7 0 0 0 1 0.01\n0.3 0.3 0.3 0.1 0 0 1 0.2 1 1 1 0.5 0\n")


@pytest.mark.parametrize("scene,suffix", [("rgb", ".circles"), ("pattern", ".circles"),
                                          ("fireworks", ".circles"), ("snowsingle", ".par"),
                                          ("snowsingle", ".circles"), ("snow", ".circles")])
def test_saved_scene_reloads_to_the_same_circles_and_image(tmp_path, scene, suffix):
    original = make_scene(scene, seed=3)
    s = original.copy()
    advance(s)                                    # as drawn in frame 0
    loaded = load_scene(save_scene(s, tmp_path / f"x{suffix}"))
    assert loaded.n == s.n and loaded.shading == s.shading and loaded.animation is None
    assert np.array_equal(loaded.position, s.position) and np.array_equal(loaded.radius, s.radius)
    if suffix == ".circles":
        assert np.array_equal(loaded.color, s.color)
    assert np.array_equal(reference_image(loaded, 64, 64), reference_image(original, 64, 64))


def test_par_is_the_course_format_six_decimals(tmp_path):
    # a scene off the six-decimal grid comes back rounded to it, and draws within the course's check
    s = make_scene("snow", seed=3)
    for _ in range(300):
        advance(s)
    loaded = load_scene(save_scene(s, tmp_path / "x.par"))
    assert (tmp_path / "x.par").read_text().splitlines()[1].count("   ") == 2
    half = 5e-7 + 2.5e-7                  # half the sixth decimal, plus float32 rounding near 2
    assert np.abs(loaded.position - s.position).max() <= half
    assert np.abs(loaded.radius - s.radius).max() <= half
    from circle_render.course import compare
    s.animation = None
    assert compare(reference_image(s, 128, 128), reference_image(loaded, 128, 128)).passed


def test_par_renders_with_snow_shading_and_clear(tmp_path):
    f = tmp_path / "two.par"
    f.write_text(GOOD_PAR)
    s = load_scene(f)
    assert (s.shading, s.n, s.name) == (SNOW, 2, "two")
    assert s.radius.tolist() == pytest.approx([0.2, 0.05])
    img = reference_image(s, 32, 32)
    assert img[0, 0, 0] == pytest.approx(0.4 + 0.45 * 32 / 32, abs=1e-6)   # snow clear, bottom row


def test_comments_and_blank_lines_are_allowed(tmp_path):
    f = tmp_path / "c.circles"
    f.write_text("# my scene\n\n" + GOOD_CIRCLES.replace("count 2\n", "count 2  # two\n\n# x y z\n")
                 + "\n\n")
    s = load_scene(f)
    assert (s.n, s.shading) == (2, FLAT) and s.color[1].tolist() == [0, 0, 1]


BAD = [  # (file name, content, line, message start)
    ("e.par", "", 1, "empty file"),
    ("w.par", "   \n\n", 1, "empty file"),
    ("c.par", "two\n1 2 3 4 5 6 7\n", 1, "expected the circle count"),
    ("z.par", "0\n", 1, "the circle count must be at least 1"),
    ("only.par", "3\n", 2, "truncated: the count says 3 circles, the file has 0"),
    ("t.par", "3\n0.5 0.5 0 0 0 0 0.1\n", 3, "truncated: the count says 3 circles, the file has 1"),
    ("m.par", GOOD_PAR + "0.1 0.1 0 0 0 0 0.1\n", 4, "more circle lines than the count (2) says"),
    ("f.par", "2\n0.5 0.5 0 0 0 0 0.1\n0.5 0.5 0 0 0 0.1\n", 3, "expected 7 fields"),
    ("n.par", "1\n0.5 abc 0 0 0 0 0.1\n", 2, "y is not a number: 'abc'"),
    ("nan.par", "2\n0.5 0.5 0 0 0 0 0.1\n0.5 0.5 nan 0 0 0 0.1\n", 3, "z must be finite"),
    ("inf.par", "1\n0.5 0.5 0 0 0 0 inf\n", 2, "radius must be finite"),
    ("r0.par", "1\n0.5 0.5 0 0 0 0 0\n", 2, "radius must be above 0"),
    ("rn.circles", GOOD_CIRCLES.replace("0.1 0 0 1", "-0.1 0 0 1"), 5, "radius must be above 0"),
    ("big.par", "1\n1e9 0.5 0 0 0 0 0.1\n", 2, "x = 1e9 is out of range"),
    # beyond float32 (inf once converted) / rounding to 0 in float32 / too small to shade safely
    ("f32.par", "1\n0.5 0.5 0 0 0 0 1e39\n", 2, "radius = 1e39 is out of range"),
    ("under.par", "1\n0.5 0.5 0 0 0 0 1e-50\n", 2, "radius = 1e-50 is below the smallest radius, 1e-09"),
    ("tiny.par", "1\n0.5003 0.5003 0.5 0 0 0 1e-30\n", 2, "radius = 1e-30 is below the smallest radius"),
    ("tiny.circles", GOOD_CIRCLES.replace("flat", "snow").replace("0.2 1 0 0", "1e-20 1 0 0"), 4,
     "radius = 1e-20 is below the smallest radius"),
    ("vel.par", "1\n0.5 0.5 0 -3e38 0 0 0.1\n", 2, "vx = -3e38 is out of range"),
    ("g.par", "1\n0.5 0.5 \x00\x01\x02", 2, "not a text scene file (byte 0x00"),
    ("u.par", "1\n0.5 0.5 0 0 0 0 0.1 \u00e9\n", 2, "not a text scene file (byte 0xc3"),
    ("lead.par", "\n1\n0.5 0.5 0 0 0 0 0.1\n", 1, "a .par file starts with the circle count"),
    ("magic.circles", GOOD_CIRCLES.replace("scene 1", "scene 9"), 1, "expected 'circle-render scene 1'"),
    ("sh.circles", GOOD_CIRCLES.replace("flat", "glow"), 2, "unknown shading 'glow'; accepted: flat, snow"),
    ("hdr.circles", "circle-render scene 1\nshading flat\n", 3, "truncated: the header has no count line"),
    ("cnt.circles", GOOD_CIRCLES.replace("count 2", "count 3"), 6, "truncated: the count says 3"),
]


@pytest.mark.parametrize("name,content,line,message", BAD, ids=[b[0] for b in BAD])
def test_malformed_file_names_the_line(tmp_path, name, content, line, message):
    f = tmp_path / name
    f.write_bytes(content.encode("utf-8"))
    with pytest.raises(SceneFileError) as e:
        load_scene(f)
    assert str(e.value).startswith(f"{f}:{line}: {message}"), str(e.value)


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(SceneFileError, match=r"x\.par: no such file$"):
        load_scene(tmp_path / "x.par")
    with pytest.raises(SceneFileError, match="is a folder"):
        load_scene(tmp_path)


@pytest.mark.parametrize("name,content,line,message", BAD[::4] + BAD[4:5], ids=[b[0] for b in BAD[::4] + BAD[4:5]])
def test_cli_malformed_file_is_one_line_exit_2(tmp_path, name, content, line, message):
    f = tmp_path / name
    f.write_bytes(content.encode("utf-8"))
    p = render(str(f), "-r", "cpu", "-s", "16", "-o", str(tmp_path / "o.png"))
    assert p.returncode == 2
    assert p.stderr.splitlines() == [p.stderr.strip()] and "Traceback" not in p.stderr
    assert p.stderr.startswith(f"render: error: {f}:{line}: {message}")
    assert not (tmp_path / "o.png").exists()


def test_cli_save_scene_then_render_file_gives_the_same_png(tmp_path):
    a, b, saved = tmp_path / "a.png", tmp_path / "b.png", tmp_path / "h.circles"
    p = render("hypnosis", "-r", "cpu", "-s", "64", "-b", "2:3", "-o", str(a), "--save-scene", str(saved))
    assert p.returncode == 0, p.stderr
    assert render(str(saved), "-r", "cpu", "-s", "64", "-o", str(b)).returncode == 0
    assert a.read_bytes() == b.read_bytes()


@pytest.mark.parametrize("args,message", [
    (["rgb", "--save-scene", "x.txt"], "unknown scene file suffix '.txt'"),
    (["rgb", "--save-scene", "x.par"], "a .par file always renders with the snow shading"),
    (["rgb", "--save-scene", "nofolder/x.circles"], "folder 'nofolder' does not exist"),
    (["nosuchscene"], "unknown scene 'nosuchscene'; accepted: rgb, rgby"),
])
def test_cli_save_scene_errors(tmp_path, args, message):
    p = render(*args, "-r", "cpu", "-s", "16", cwd=tmp_path)
    assert p.returncode == 2 and message in p.stderr and len(p.stderr.splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- property tests

def _assert_loads_or_one_line_error(path):
    try:
        s = load_scene(path)
    except SceneFileError as e:
        assert re.fullmatch(re.escape(str(path)) + r":\d+: [^\n]+", str(e)), str(e)
        return
    assert s.n >= 1
    for a in (s.position, s.radius, s.color, s.velocity):
        assert np.isfinite(a).all() and (np.abs(a) <= MAX_ABS).all()
    assert (s.radius > 0).all()
    if s.drawing is not None:                    # version 2: alphas in [0, 1], widths >= 0
        d = s.drawing
        assert ((d.rgba[:, 3] >= 0) & (d.rgba[:, 3] <= 1)).all()
        if d.edge_rgba is not None:
            assert ((d.edge_rgba[:, 3] >= 0) & (d.edge_rgba[:, 3] <= 1)).all() and (d.edge_width >= 0).all()
        assert d.background is None or 0 <= d.background[3] <= 1


FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@FUZZ
@given(data=st.binary(max_size=300))
def test_random_bytes_load_or_fail_in_one_line(tmp_path, data):
    f = tmp_path / "r.par"
    f.write_bytes(data)
    _assert_loads_or_one_line_error(f)


TOKENS = ["", " ", "\n", "\t", "#", "0", "1", "-1", "0.5", "1e9", "nan", "-inf", "x", "\x00",
          "\xff", "count", "shading", "flat", "snow", "circle-render scene 1", "1e-50", "\r\n", "3.4e38",
          "circle-render scene 2", "background", "antialias", "columns", "alpha", "edge_width", "yes", "2", "-0.5"]


@FUZZ
@given(base=st.sampled_from([(".par", GOOD_PAR), (".circles", GOOD_CIRCLES), (".circles", GOOD_CIRCLES_2)]),
       edits=st.lists(st.tuples(st.integers(0, 200), st.integers(0, 3), st.sampled_from(TOKENS)),
                      max_size=6))
def test_mutated_files_load_or_fail_in_one_line(tmp_path, base, edits):
    suffix, text = base
    for pos, cut, token in edits:               # replace text[pos:pos+cut] by token
        pos = min(pos, len(text))
        text = text[:pos] + token + text[pos + cut:]
    f = tmp_path / f"m{suffix}"
    f.write_bytes(text.encode("latin-1"))
    _assert_loads_or_one_line_error(f)


def test_scene_text_refuses_unknown_suffix():
    with pytest.raises(ValueError, match=r"accepted: \.par, \.circles"):
        scene_text(make_scene("rgb"), ".csv")
