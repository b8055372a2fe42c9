"""What tests of several areas share: the checkout's root, `render` in a child process or in this
one, the `render check` helpers, and small fakes (a terminal, a clock). Fixtures live in the
conftest.py files; this module holds the plain functions and classes they and the tests import
(tests/ is on sys.path: pytest puts the folder of the top conftest.py there)."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from circle_render import cli, progress

ROOT = Path(__file__).resolve().parent.parent        # the checkout (tests/ is one level down)


# ---------------------------------------------------------------- the command line

def render(*args, cwd=None, env=None):
    """``render ARGS`` in a child process of this tree: real exit codes and real stderr."""
    e = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "circle_render", *args], capture_output=True,
                          text=True, cwd=cwd, env=e, timeout=300)


def run_main(args, capsys):
    """Run ``render ARGS`` in this process (so a test can break things); (exit code, stderr)."""
    with pytest.raises(SystemExit) as e:
        cli.main(args)
    return e.value.code, capsys.readouterr().err


def run_cli(args):
    """``render ARGS`` in this process through click's test isolation, with no display:
    (exit code, stdout, stderr)."""
    with CliRunner().isolation(env={"DISPLAY": None, "WAYLAND_DISPLAY": None}) as (out, err, _):
        try:
            cli.main(args)
            code = 0
        except SystemExit as e:
            code = e.code
        finally:
            sys.stdout.flush()
            progress.set_quiet(False)
    return code, out.getvalue().decode(), err.getvalue().decode()


def one_line(err: str) -> str:
    """The one line an error must be (no traceback)."""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


class Terminal:
    """A stderr that says it is a terminal."""

    def __init__(self):
        self.text = ""

    def write(self, s):
        self.text += s

    def flush(self):
        pass

    def isatty(self):
        return True


# ---------------------------------------------------------------- render check

FAST = ["-s", "32", "--runs", "1", "--scenes", "rgb,pattern"]     # a check in seconds on a CPU


def check(tmp_path, *args):
    """``render check ARGS`` in tmp_path, with a reference cache of its own there."""
    return render("check", *args, cwd=tmp_path, env={"CIRCLE_RENDER_CACHE": str(tmp_path / "cache")})


def table_rows(stdout):
    """The score table's rows: {scene: [cells 2..4]}."""
    return {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:5]]
            for line in stdout.splitlines() if line.startswith("| ") and "Scene Name" not in line}


def plugin(tmp_path, body, name="mine.py"):
    """A renderer module of the test's own, written to tmp_path/name."""
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


WRAPPED = """
    import numpy as np
    from circle_render.cpu.reference import CpuRenderer

    class Good(CpuRenderer):
        name = "good"

    class Raises(CpuRenderer):
        def render(self):
            raise RuntimeError("kernel exploded")

    class WrongShape(CpuRenderer):
        def get_image(self):
            return super().get_image()[:, :, :3]

    class WrongDtype(CpuRenderer):
        def get_image(self):
            return super().get_image().astype(np.float64)

    class NaNs(CpuRenderer):
        def get_image(self):
            img = super().get_image()
            img[3, 4, 1] = np.nan
            return img

    class Wrong(CpuRenderer):
        def get_image(self):
            return 1 - super().get_image()

    class NoRender:
        def load(self, scene, w, h): pass
"""


# ---------------------------------------------------------------- timing

class FakeClock:
    """perf_counter for the timer: time moves only when a step, a sync or a before says so."""

    def __init__(self):
        self.now, self.log = 0.0, []

    def __call__(self) -> float:
        return self.now

    def spend(self, what: str, ms: float):
        self.log.append(what)
        self.now += ms / 1e3
