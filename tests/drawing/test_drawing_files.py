""".circles version 2 (the drawing options in scene files) and ``render FILE.circles``: round
trips to the same circles and picture, every malformed line as FILE:LINE, the command line's
RGBA PNG and refusals (docs/drawing.md, "Scene files")."""
import numpy as np
import pytest
from helpers import render
from PIL import Image

from circle_render.cpu.reference import reference_image
from circle_render.cpu.shading import to_bytes, to_rgba_bytes
from circle_render.drawing import Drawing
from circle_render.io.scene_files import SceneFileError, SceneSaveError, load_scene, save_scene, scene_text
from circle_render.scenes import Scene, make_scene

HEAD = "circle-render scene 2\nshading flat\nbackground 0 0 0 0\nantialias yes\n"
COLUMNS = "columns x y z radius r g b alpha edge_r edge_g edge_b edge_alpha edge_width\n"
ROWS = ("0.4 0.5 0.75 0.3 1 0 0 0.8 0 0 0 1 0.01\n"
        "0.5 0.5 0.5 0.3 0 1 0 0.5 0 0 0 0.5 0.02\n"
        "0.6 0.5 0.25 0.3 0 0 1 0.3 1 1 1 1 0\n")
GOOD = HEAD + COLUMNS + "count 3\n" + ROWS


def random_drawn(n=60, seed=0, **options):
    rng = np.random.default_rng(seed)
    s = Scene("drawn", np.c_[rng.uniform(0, 1, (n, 2)), rng.uniform(0, 1, n)], rng.uniform(0.01, 0.2, n),
              rng.uniform(0, 1, (n, 3)))
    rgba = np.ascontiguousarray(np.c_[s.color, rng.uniform(0, 1, n)], dtype=np.float32)
    edge = np.ascontiguousarray(rng.uniform(0, 1, (n, 4)), dtype=np.float32)
    width = np.ascontiguousarray(rng.uniform(0, 0.02, n), dtype=np.float32)
    s.drawing = Drawing(rgba, edge, width, **options)
    return s


@pytest.mark.parametrize("options", [{"background": (0, 0, 0, 0), "antialias": True}, {"antialias": False},
                                     {"background": (0.2, 0.3, 0.4, 0.6), "antialias": True}])
def test_a_drawn_scene_saves_and_reloads_to_the_same_circles_and_picture(tmp_path, options):
    s = random_drawn(**options)
    loaded = load_scene(save_scene(s, tmp_path / "d.circles"))
    for a, b in ((loaded.position, s.position), (loaded.radius, s.radius), (loaded.drawing.rgba, s.drawing.rgba),
                 (loaded.drawing.edge_rgba, s.drawing.edge_rgba), (loaded.drawing.edge_width, s.drawing.edge_width)):
        assert np.array_equal(a, b)
    assert loaded.drawing.background == s.drawing.background and loaded.drawing.antialias == s.drawing.antialias
    assert np.array_equal(reference_image(loaded, 48, 48, steps=0), reference_image(s, 48, 48, steps=0))


def test_snow_with_a_background_round_trips_without_an_alpha_column(tmp_path):
    s = make_scene("snowsingle")
    s.drawing = Drawing(np.ascontiguousarray(np.c_[s.color, np.full(s.n, 0.5)], dtype=np.float32),
                        background=(0, 0, 0.2, 1), antialias=True)
    text = scene_text(s, ".circles")
    assert "columns x y z radius r g b\n" in text
    loaded = load_scene(save_scene(s, tmp_path / "snow.circles"))
    assert loaded.shading == "snow" and np.array_equal(reference_image(loaded, 32, 32, steps=0),
                                                       reference_image(s, 32, 32, steps=0))


def test_version_1_files_and_undrawn_scenes_are_as_before(tmp_path):
    s = make_scene("rgb")
    assert scene_text(s, ".circles").startswith("circle-render scene 1\nshading flat\ncount 3\n")
    f = tmp_path / "plain.circles"
    f.write_text("circle-render scene 2\nshading flat\ncolumns x y z radius r g b alpha\ncount 1\n"
                 "0.5 0.5 0 0.2 1 0 0 0.5\n")
    assert load_scene(f).drawing is None           # the course draws the same picture


def test_optional_header_lines_and_their_order(tmp_path):
    f = tmp_path / "o.circles"
    f.write_text("# mine\ncircle-render scene 2\n\ncolumns x y z radius r g b alpha\nshading flat  # flat\n"
                 "count 1\n0.5 0.5 0 0.2 1 0 0 0.7\n")
    s = load_scene(f)
    assert s.drawing.background is None and not s.drawing.antialias and s.drawing.rgba[0, 3] == np.float32(0.7)


BAD = [  # (content, line, message start)
    (GOOD.replace("scene 2", "scene 3"), 1, "expected 'circle-render scene 1' or 'circle-render scene 2'"),
    (GOOD.replace("1 0 0 0.8 0 0 0 1", "1 0 0 1.8 0 0 0 1"), 7, "alpha must be in [0, 1], got 1.8"),
    (GOOD.replace("0 0 0 0.5 0.02", "0 0 0 1.5 0.02"), 8, "edge_alpha must be in [0, 1], got 1.5"),
    (GOOD.replace("0.5 0.02", "0.5 -0.02"), 8, "edge_width must be >= 0, got -0.02"),
    (GOOD.replace("1 1 1 1 0\n", "1 1 1 1\n"), 9, "expected 13 fields"),
    (GOOD.replace("background 0 0 0 0", "background 0 0"), 3, "background must be 3 or 4 numbers"),
    (GOOD.replace("background 0 0 0 0", "background 0 0 0 2"), 3, "background alpha must be in [0, 1], got 2.0"),
    (GOOD.replace("background 0 0 0 0", "background 0 x 0"), 3, "background must be 3 or 4 numbers (r g b [alpha])"),
    (GOOD.replace("antialias yes", "antialias maybe"), 4, "antialias must be yes or no, got 'maybe'"),
    (GOOD.replace("edge_width", "edge_w"), 5, "columns must be one of: x y z radius r g b;"),
    (GOOD.replace("shading flat\n", "shading flat\nshading snow\n"), 3, "the header has two shading lines"),
    (GOOD.replace("shading flat\n", ""), 5, "the header has no shading line before count"),
    (GOOD.replace(COLUMNS, ""), 5, "the header has no columns line before count"),
    (GOOD.replace("shading flat", "shading snow"), 6, "snow shading computes its own alpha: drop the alpha column"),
    (GOOD.replace("antialias yes", "glow 1"), 4, "expected a header line (shading, background, antialias"),
    (HEAD + COLUMNS, 6, "truncated: the header has no count line"),
    (GOOD.replace("count 3", "count 4"), 10, "truncated: the count says 4 circles, the file has 3"),
]


@pytest.mark.parametrize("content,line,message", BAD, ids=[str(i) for i in range(len(BAD))])
def test_malformed_version_2_files_name_the_line(tmp_path, content, line, message):
    f = tmp_path / "bad.circles"
    f.write_text(content)
    with pytest.raises(SceneFileError) as e:
        load_scene(f)
    assert str(e.value).startswith(f"{f}:{line}: {message}"), str(e.value)


def test_a_drawn_scene_is_not_saved_as_par():
    with pytest.raises(SceneSaveError, match=r"a \.par file carries no drawing options"):
        scene_text(random_drawn(), ".par")


# ---------------------------------------------------------------- the command line

def test_render_file_draws_rgba_and_save_scene_writes_it_back_to_the_same_png(tmp_path):
    f, a, b, saved = tmp_path / "a.circles", tmp_path / "a.png", tmp_path / "b.png", tmp_path / "s.circles"
    f.write_text(GOOD)
    p = render(str(f), "-r", "cpu", "-s", "40", "-o", str(a), "--save-scene", str(saved))
    assert p.returncode == 0, p.stderr
    png = np.asarray(Image.open(a))
    assert png.shape == (40, 40, 4)
    assert np.array_equal(png, to_rgba_bytes(reference_image(load_scene(f), 40, 40, steps=0)))
    assert png[0, 0].tolist() == [0, 0, 0, 0] and png[20, 20, 3] > 200
    assert render(str(saved), "-r", "cpu", "-s", "40", "-o", str(b)).returncode == 0
    assert a.read_bytes() == b.read_bytes()


def test_an_opaque_drawing_writes_rgb_as_before(tmp_path):
    f, out = tmp_path / "o.circles", tmp_path / "o.ppm"
    f.write_text(GOOD.replace("background 0 0 0 0", "background 0.1 0.1 0.1"))
    assert render(str(f), "-r", "cpu", "-s", "16", "-o", str(out)).returncode == 0
    img = np.asarray(Image.open(out))
    assert np.array_equal(img, to_bytes(reference_image(load_scene(f), 16, 16, steps=0)))


def test_auto_draws_a_drawing_with_a_renderer_that_can(tmp_path):
    f, out = tmp_path / "a.circles", tmp_path / "a.png"
    f.write_text(GOOD)
    p = render(str(f), "-s", "24", "-o", str(out))
    assert p.returncode == 0, p.stderr
    assert np.array_equal(np.asarray(Image.open(out)), to_rgba_bytes(reference_image(load_scene(f), 24, 24, steps=0)))


@pytest.mark.parametrize("args,message", [
    (["-r", "cuda-starter", "-o", "x.png"], "renderer 'cuda-starter' does not draw the drawing options"),
    (["-r", "cpu", "-o", "x.ppm"], "this scene's background is not opaque and a .ppm file keeps no alpha channel"),
    (["-r", "cpu", "-o", "x.gif"], "a .gif file keeps no alpha channel"),
    (["-r", "cpu", "-i"], "the viewer (-i) does not draw the drawing options"),
    (["-r", "cpu", "--save-scene", "x.par"], "a .par file carries no drawing options"),
])
def test_what_a_drawing_cannot_do_is_one_line_and_exit_2(tmp_path, args, message):
    f = tmp_path / "a.circles"
    f.write_text(GOOD)
    p = render(str(f), "-s", "16", *args, cwd=tmp_path)
    assert p.returncode == 2 and message in p.stderr and len(p.stderr.splitlines()) == 1, p.stderr
    assert sorted(x.name for x in tmp_path.iterdir()) == ["a.circles"]


def test_a_malformed_version_2_file_is_file_line_and_exit_2(tmp_path):
    f = tmp_path / "bad.circles"
    f.write_text(BAD[1][0])
    p = render(str(f), "-r", "cpu", "-s", "16", "-o", str(tmp_path / "o.png"))
    assert p.returncode == 2 and p.stderr.startswith(f"render: error: {f}:7: alpha must be in [0, 1]")
    assert len(p.stderr.splitlines()) == 1 and not (tmp_path / "o.png").exists()
