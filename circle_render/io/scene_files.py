"""Scene files: the course's ``.par`` format and the project's ``.circles`` format, in and out.

``.par`` (the course's, used for its snowsingle scene): line 1 is the circle count, then one
line per circle ``x y z vx vy vz radius``. It carries no colours: it renders with the snow
shading and the snow clear colour, as the course does.

``.circles`` (this project's): three header lines, then one line per circle
``x y z radius r g b``::

    circle-render scene 1
    shading flat            # flat (colour, alpha 0.5) or snow (the course's snow shading)
    count 3
    0.4 0.5 0.75 0.3 1 0 0
    ...

Version 2 (docs/drawing.md, "Scene files") adds the drawing options: keyed header lines in any
order, ``count`` last::

    circle-render scene 2
    shading flat
    background 0 0 0 0          # optional: r g b [alpha]; without it the shading's own clear
    antialias yes               # optional: yes or no (no)
    columns x y z radius r g b alpha edge_r edge_g edge_b edge_alpha edge_width
    count 3
    ...

In all, fields are separated by blanks, ``#`` starts a comment, blank lines are skipped (in
``.par`` only after line 1). Every value must be finite with magnitude at most ``MAX_ABS``,
and every radius at least ``MIN_RADIUS`` (circle_render/limits.py says why). A scene loaded
from a file is one still frame (no animation).

Loading is fast (NumPy's C parser) and strict: anything wrong raises ``SceneFileError`` with
the message ``FILE:LINE: what is wrong``; the slow line-by-line pass that finds that line
runs only when the fast pass has found a problem.
"""
from __future__ import annotations

import io
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from circle_render.constants import FLAT_ALPHA
from circle_render.drawing.paint import Drawing
from circle_render.drawing.values import Color, field_problem, one_color
from circle_render.errors import UserError
from circle_render.limits import MAX_ABS, MIN_RADIUS, value_problem
from circle_render.scenes.scene import FLAT, SNOW, Scene

PAR, CIRCLES = ".par", ".circles"
SUFFIXES = (PAR, CIRCLES)
MAGIC = "circle-render scene 1"
MAGIC_2 = "circle-render scene 2"          # with the drawing options
SHADINGS = (FLAT, SNOW)
PAR_FIELDS = ("x", "y", "z", "vx", "vy", "vz", "radius")
CIRCLES_FIELDS = ("x", "y", "z", "radius", "r", "g", "b")
ALPHA_FIELDS = ("alpha",)
EDGE_FIELDS = ("edge_r", "edge_g", "edge_b", "edge_alpha", "edge_width")
COLUMNS_2 = tuple(CIRCLES_FIELDS + a + e for e in ((), EDGE_FIELDS) for a in ((), ALPHA_FIELDS))
YES_NO = {"yes": True, "no": False}


class SceneFileError(UserError):
    """A scene file that cannot be loaded; ``str(e)`` is ``FILE:LINE: what is wrong`` (``FILE: ...``
    when no line is to blame, e.g. a missing file)."""

    def __init__(self, path: object, line: int, message: str):
        super().__init__(f"{path}:{line}: {message}" if line else f"{path}: {message}")
        self.path, self.line, self.message = str(path), line, message


def is_scene_file_name(text: str) -> bool:
    """Does a command-line word name a file rather than a course scene?"""
    return Path(text).suffix.lower() in SUFFIXES or "/" in text or Path(text).is_file()


# ---------------------------------------------------------------- reading

def _read_text(path: Path) -> str:
    try:
        if path.exists() and not path.is_dir() and not path.is_file():
            # a device (/dev/zero would never end), a pipe (would wait for a writer), a socket
            raise SceneFileError(path, 0, "is not a regular file; scene files are plain text files")
        data = path.read_bytes()
    except IsADirectoryError:
        raise SceneFileError(path, 0, "is a folder, not a scene file") from None
    except FileNotFoundError:
        raise SceneFileError(path, 0, "no such file") from None
    except OSError as e:
        raise SceneFileError(path, 0, f"cannot read it ({e.strerror or e})") from None
    bad = data.find(b"\0")
    try:
        text = data.decode("ascii") if bad < 0 else None
    except UnicodeDecodeError as e:
        bad = e.start
        text = None
    if text is None:
        line = data.count(b"\n", 0, bad) + 1
        raise SceneFileError(path, line, f"not a text scene file (byte 0x{data[bad]:02x} at offset {bad}; "
                                         "scene files are plain ASCII)")
    if not text.strip():
        raise SceneFileError(path, 1, "empty file")
    return text


def _content(line: str) -> str:
    return line.split("#", 1)[0].strip()


def _first_content(text: str) -> str:
    """The first line of ``text`` that is not blank or a comment, without its comment."""
    pos = 0
    while pos < len(text):
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        body = _content(text[pos:end])
        if body:
            return body
        pos = end + 1
    return ""


def _count(path: object, lineno: int, text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise SceneFileError(path, lineno, f"expected the circle count (a whole number), got {text!r}") from None
    if n < 1:
        raise SceneFileError(path, lineno, f"the circle count must be at least 1, got {n}")
    return n


def _check_row(path: object, lineno: int, fields: list[str], names: tuple[str, ...]) -> list[float]:
    """One circle line, checked: the right number of finite numbers in range, radius > 0."""
    if len(fields) != len(names):
        raise SceneFileError(path, lineno, f"expected {len(names)} fields ({' '.join(names)}), "
                                           f"got {len(fields)}")
    values = []
    for name, text in zip(names, fields):
        try:
            v = float(text)
        except ValueError:
            raise SceneFileError(path, lineno, f"{name} is not a number: {text!r}") from None
        problem = value_problem(name, v, text) or field_problem(name, v, text)
        if problem:
            raise SceneFileError(path, lineno, problem)
        values.append(v)
    return values


def _slow_rows(path: object, text: str, first: int, count: int, names: tuple[str, ...]) -> np.ndarray:
    """Line by line from line ``first`` (1-based): the first problem raises with its line."""
    lines = text.split("\n")
    rows: list[list[float]] = []
    for lineno in range(first, len(lines) + 1):
        body = _content(lines[lineno - 1])
        if not body:
            continue
        if len(rows) == count:
            raise SceneFileError(path, lineno, f"more circle lines than the count ({count}) says")
        rows.append(_check_row(path, lineno, body.split(), names))
    if len(rows) < count:
        end = len(lines) - (lines[-1] == "") + 1      # the line after the last one
        raise SceneFileError(path, end, f"truncated: the count says {count} circles, "
                                        f"the file has {len(rows)}")
    return np.array(rows, dtype=np.float32).reshape(count, len(names))


def _rows(path: object, text: str, first: int, count: int, names: tuple[str, ...]) -> np.ndarray:
    """The circle lines (from line ``first``) as a (count, fields) float32 array, or
    SceneFileError naming the first bad line."""
    radius = names.index("radius")
    try:
        with warnings.catch_warnings():     # "input contained no data": reported below, as FILE:LINE
            warnings.simplefilter("ignore")
            table = np.loadtxt(io.StringIO(text), dtype=np.float32, comments="#", skiprows=first - 1,
                               ndmin=2)
        ok = (table.shape == (count, len(names)) and np.isfinite(table).all()
              and (np.abs(table) <= MAX_ABS).all() and (table[:, radius] >= np.float32(MIN_RADIUS)).all()
              and all((table[:, names.index(f)] >= 0).all() and (table[:, names.index(f)] <= 1).all()
                      for f in ("alpha", "edge_alpha") if f in names)
              and ("edge_width" not in names or (table[:, names.index("edge_width")] >= 0).all()))
    except ValueError:
        ok = False
    if ok:
        return table
    return _slow_rows(path, text, first, count, names)


def _header(path: object, text: str) -> tuple[str, int, int]:
    """The ``.circles`` header: (shading, count, first circle line), checked."""
    wanted, lineno = ["magic", "shading", "count"], 0
    found: dict[str, Any] = {}
    for lineno, line in enumerate(io.StringIO(text), 1):
        body = _content(line)
        if not body:
            continue
        key = wanted.pop(0)
        if key == "magic":
            if " ".join(body.split()) != MAGIC:
                raise SceneFileError(path, lineno, f"expected {MAGIC!r} or {MAGIC_2!r}, got {body[:40]!r}")
        else:
            parts = body.split()
            if len(parts) != 2 or parts[0] != key:
                raise SceneFileError(path, lineno, f"expected '{key} VALUE', got {body[:40]!r}")
            if key == "shading" and parts[1] not in SHADINGS:
                raise SceneFileError(path, lineno, f"unknown shading {parts[1]!r}; "
                                                   f"accepted: {', '.join(SHADINGS)}")
            found[key] = parts[1] if key == "shading" else _count(path, lineno, parts[1])
        if not wanted:
            return found["shading"], found["count"], lineno + 1
    raise SceneFileError(path, lineno + 1, f"truncated: the header has no {wanted[0]} line")


def _header_2(path: Path | str, text: str) -> tuple[str, Color | None, bool, tuple[str, ...], int, int]:
    """The version 2 header: (shading, background, antialias, columns, count, first circle
    line), checked; keyed lines after the magic in any order, each once, ``count`` last."""
    found: dict[str, Any] = {}
    lineno, seen_magic = 0, False
    for lineno, line in enumerate(io.StringIO(text), 1):
        body = _content(line)
        if not body:
            continue
        if not seen_magic:
            seen_magic = True
            continue
        key, *values = body.split()
        if key not in ("shading", "background", "antialias", "columns", "count"):
            raise SceneFileError(path, lineno, f"expected a header line (shading, background, antialias, "
                                               f"columns, count), got {body[:40]!r}")
        if key in found:
            raise SceneFileError(path, lineno, f"the header has two {key} lines")
        found[key] = _header_value(path, lineno, key, values)
        if key == "count":
            missing = [k for k in ("shading", "columns") if k not in found]
            if missing:
                raise SceneFileError(path, lineno, f"the header has no {missing[0]} line before count")
            if found["shading"] == SNOW and "alpha" in found["columns"]:
                raise SceneFileError(path, lineno, "snow shading computes its own alpha: drop the alpha column")
            return (found["shading"], found.get("background"), found.get("antialias", False), found["columns"],
                    found["count"], lineno + 1)
    raise SceneFileError(path, lineno + 1, "truncated: the header has no count line")


def _header_value(path: Path | str, lineno: int, key: str, values: list[str]) -> Any:
    """One version 2 header line's value, checked."""
    text = " ".join(values)
    if key == "shading":
        if text not in SHADINGS:
            raise SceneFileError(path, lineno, f"unknown shading {text!r}; accepted: {', '.join(SHADINGS)}")
        return text
    if key == "antialias":
        if text not in YES_NO:
            raise SceneFileError(path, lineno, f"antialias must be yes or no, got {text!r}")
        return YES_NO[text]
    if key == "columns":
        columns = tuple(values)
        if columns not in COLUMNS_2:
            raise SceneFileError(path, lineno, "columns must be one of: " + "; ".join(" ".join(c) for c in COLUMNS_2))
        return columns
    if key == "count":
        return _count(path, lineno, text)
    try:
        numbers = [float(v) for v in values]
    except ValueError:
        raise SceneFileError(path, lineno, f"background must be 3 or 4 numbers (r g b [alpha]), got {text!r}") from None
    try:
        return one_color("background", numbers)
    except ValueError as e:
        raise SceneFileError(path, lineno, str(e)) from None


def _drawing(table: np.ndarray, columns: tuple[str, ...], shading: str, background: Color | None,
             antialias: bool) -> Drawing | None:
    """The drawing of a version 2 file's circles; None where the course draws the same picture."""
    n = table.shape[0]
    rgba = np.empty((n, 4), dtype=np.float32)
    rgba[:, :3] = table[:, 4:7]
    rgba[:, 3] = table[:, columns.index("alpha")] if "alpha" in columns else FLAT_ALPHA
    edge_rgba = width = None
    if "edge_width" in columns and table[:, columns.index("edge_width")].any():
        first = columns.index("edge_r")
        edge_rgba = np.ascontiguousarray(table[:, first:first + 4])
        width = np.ascontiguousarray(table[:, first + 4])
    drawing = Drawing(rgba, edge_rgba, width, background, antialias)
    return None if drawing.course_equivalent(shading) else drawing


def load_scene(path: str | Path) -> Scene:
    """Load a ``.par`` or ``.circles`` file (told apart by its first line) as a still Scene."""
    path = Path(path)
    return parse_scene(_read_text(path), path.stem or "scene", path)


def parse_scene(text: str, name: str, path: Path | str = "scene") -> Scene:
    """A scene file's text as a still Scene; ``path`` names the file in error messages."""
    first = _first_content(text)
    if " ".join(first.split()) == MAGIC_2:
        shading, background, antialias, columns, count, start = _header_2(path, text)
        t = _rows(path, text, start, count, columns)
        return Scene(name, t[:, 0:3], t[:, 3], t[:, 4:7], shading=shading,
                     drawing=_drawing(t, columns, shading, background, antialias))
    if first.startswith("circle-render"):
        shading, count, start = _header(path, text)
        t = _rows(path, text, start, count, CIRCLES_FIELDS)
        return Scene(name, t[:, 0:3], t[:, 3], t[:, 4:7], shading=shading)
    return parse_par(text, name, path)


def parse_par(text: str, name: str, path: object = "scene") -> Scene:
    """The course's particle file (``.par``) as a still, snow-shaded Scene: each field parsed to
    the nearest float32, as the course reads it."""
    first_line = text.split("\n", 1)[0]
    if not _content(first_line):
        raise SceneFileError(path, 1, "a .par file starts with the circle count on line 1")
    count = _count(path, 1, _content(first_line))
    t = _rows(path, text, 2, count, PAR_FIELDS)
    return Scene(name, t[:, 0:3], t[:, 6], np.ones((count, 3), dtype=np.float32),
                 velocity=t[:, 3:6], shading=SNOW)


# ---------------------------------------------------------------- writing

class SceneSaveError(UserError, ValueError):
    """A scene that cannot be written in the format asked for; the message says why."""


def _format(table: np.ndarray) -> str:
    """Rows of float32 values as text that reads back to the same float32 values."""
    buf = io.StringIO()
    np.savetxt(buf, table.astype(np.float64), fmt="%.9g")   # 9 significant digits round-trip float32
    return buf.getvalue()


def par_text(scene: Scene) -> str:
    """The course's particle file: the count, then per circle ``x y z   vx vy vz   radius`` with
    six decimals (C's "%f", which Python's "%f" matches: both round the exact binary value)."""
    table = np.concatenate([scene.position, scene.velocity, scene.radius[:, None]], axis=1)
    buf = io.StringIO()
    buf.write(f"{scene.n}\n")
    np.savetxt(buf, table.astype(np.float64), fmt="%f %f %f   %f %f %f   %f")
    return buf.getvalue()


def _check_par_radii(scene: Scene) -> None:
    """A .par file keeps six decimals: a radius that would be written as 0.000000 (below
    5e-7) would not load again, so it is refused here, at save time."""
    radius = scene.radius.astype(np.float64)
    small = np.flatnonzero(radius < 1e-6)
    for i in small:
        if float(f"{radius[i]:f}") < MIN_RADIUS:
            raise SceneSaveError(f"circle {int(i)}'s radius {radius[i]:.3g} would be written as "
                                 f"{radius[i]:f} in a .par file (six decimals) and could not be loaded "
                                 "again; save the scene as .circles (exact)")


def scene_text(scene: Scene, suffix: str) -> str:
    """The text of ``scene`` in the format named by ``suffix``: ``.par`` (the course's, six
    decimals a field) or ``.circles`` (this project's, exact for float32)."""
    if suffix == PAR:
        if scene.drawing is not None:
            raise SceneSaveError(f"a .par file carries no drawing options (alpha, background, anti-aliasing, "
                                 f"outlines); save scene {scene.name!r} as .circles")
        if scene.shading != SNOW:
            raise SceneSaveError(f"a .par file always renders with the snow shading; scene "
                                 f"{scene.name!r} uses {scene.shading!r} shading, so save it as .circles")
        _check_par_radii(scene)
        return par_text(scene)
    if suffix == CIRCLES and scene.drawing is not None:
        return circles_2_text(scene)
    if suffix == CIRCLES:
        table = np.concatenate([scene.position, scene.radius[:, None], scene.color], axis=1)
        header = (f"{MAGIC}\nshading {scene.shading}\ncount {scene.n}\n"
                  f"# {' '.join(CIRCLES_FIELDS)}   (scene {scene.name!r}, written by circle-render)\n")
        return header + _format(table)
    raise SceneSaveError(f"unknown scene file suffix {suffix or '(none)'!r}; accepted: {', '.join(SUFFIXES)}")


def circles_2_text(scene: Scene) -> str:
    """A drawn scene as a version 2 ``.circles`` file (every value exact for float32)."""
    d = scene.drawing
    assert d is not None
    parts = [scene.position, scene.radius[:, None], d.rgba[:, :3]]
    columns: tuple[str, ...] = CIRCLES_FIELDS
    if scene.shading != SNOW:
        parts.append(d.rgba[:, 3:])
        columns += ALPHA_FIELDS
    if d.edge_rgba is not None and d.edge_width is not None:
        parts += [d.edge_rgba, d.edge_width[:, None]]
        columns += EDGE_FIELDS
    header = [MAGIC_2, f"shading {scene.shading}"]
    if d.background is not None:
        header.append("background " + " ".join(f"{v:.9g}" for v in d.background))
    header += [f"antialias {'yes' if d.antialias else 'no'}", f"columns {' '.join(columns)}", f"count {scene.n}",
               f"# scene {scene.name!r}, written by circle-render"]
    return "\n".join(header) + "\n" + _format(np.concatenate(parts, axis=1))


def save_scene(scene: Scene, path: str | Path) -> Path:
    """Write ``scene`` to ``path`` (format from its suffix), atomically."""
    from circle_render.io.images import atomic_path
    path = Path(path)
    text = scene_text(scene, path.suffix.lower())
    with atomic_path(path) as tmp:
        tmp.write_text(text)
    return path
