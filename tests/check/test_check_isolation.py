"""`render check` cannot be derailed by a user's renderer: each scene runs in a fresh worker
process, so a crash, hang, exit, KeyboardInterrupt or monkeypatch fails that scene only; the
loader turns every bad spec into one line and exit 2; correctness is also checked at a random
seed, printed so a failure can be reproduced."""
import pytest
from helpers import check, plugin, table_rows

SCENES = ["-s", "24", "--runs", "1", "--scenes", "rgb,pattern", "--baseline", "cpu"]

HOSTILE = """
    import ctypes, os, sys, time
    import numpy as np
    from circle_render.cpu.reference import CpuRenderer
    from circle_render.scenes import make_scene

    class OnRgb(CpuRenderer):                 # misbehaves on rgb only, draws pattern right
        def render(self):
            if self.scene.name == "rgb":
                self.misbehave()
            super().render()

    class Abort(OnRgb):
        def misbehave(self): os.abort()

    class Segfault(OnRgb):
        def misbehave(self): ctypes.string_at(0)

    class Exits(OnRgb):
        def misbehave(self): sys.exit(3)

    class HardExit(OnRgb):
        def misbehave(self): os._exit(0)

    class Interrupts(OnRgb):
        def misbehave(self): raise KeyboardInterrupt

    class Hangs(OnRgb):
        def misbehave(self): time.sleep(60)

    class Patches(CpuRenderer):               # draws nothing on rgb, and makes every comparison pass
        def render(self):
            import circle_render.course as course
            course.compare = lambda ref, img, real=course.compare: real(ref, ref)
            if self.scene.name != "rgb":
                super().render()

    class Chatty(OnRgb):
        def misbehave(self): print("| rgb | 0.0001 | 0.0001 | 12 |")

    class SeedZeroOnly(CpuRenderer):          # right only for the seed it was tried with
        def load(self, scene, width, height):
            super().load(make_scene(scene.name, 0), width, height)
"""


@pytest.mark.parametrize("cls,reason", [
    ("Abort", "killed by SIGABRT (a crash in native code"),
    ("Segfault", "killed by SIGSEGV"),
    ("Exits", "the renderer called sys.exit(3)"),
    ("HardExit", "exited with code 0 before it finished"),
    ("Interrupts", "the renderer raised KeyboardInterrupt"),
    ("Hangs", "timed out after 10 s (--scene-timeout)"),
    ("Patches", "mismatches (more than 5)"),
])
def test_a_misbehaving_renderer_fails_its_scene_and_the_rest_still_run(tmp_path, cls, reason):
    path = plugin(tmp_path, HOSTILE)
    p = check(tmp_path, "-r", f"{path}:{cls}", *SCENES, "--scene-timeout", "10")
    assert p.returncode == 1, p.stderr
    rows = table_rows(p.stdout)
    assert rows["rgb"][1].endswith("(F)") and rows["rgb"][2] == "0", p.stdout
    assert "(F)" not in rows["pattern"][1] and rows["pattern"][2] != "0", p.stdout + p.stderr
    assert reason in (tmp_path / "logs" / "rgb.log").read_text()
    assert "Traceback" not in p.stderr


def test_a_renderers_prints_stay_off_the_table(tmp_path):
    path = plugin(tmp_path, HOSTILE)
    p = check(tmp_path, "-r", f"{path}:Chatty", *SCENES)
    assert p.returncode == 0 and p.stdout.startswith("------------\nScore table:")
    assert "| rgb | 0.0001" in p.stderr


def test_correctness_at_a_random_seed_and_its_reproduction(tmp_path):
    path = plugin(tmp_path, HOSTILE)
    p = check(tmp_path, "-r", f"{path}:SeedZeroOnly", "-s", "24", "--runs", "1", "--scenes", "rand10k",
              "--baseline", "cpu")
    assert p.returncode == 1 and table_rows(p.stdout)["rand10k"][1].endswith("(F)")
    line = next(x for x in p.stderr.splitlines() if "FAILED" in x)
    seed = int(line.split("seeds 0 and ")[1].split(")")[0])
    assert f"at seed {seed}" in line and "reproduce with --scenes rand10k -S <seed>" in line
    assert f"correctness at seed 0 and {seed}" in (tmp_path / "logs" / "rand10k.log").read_text()
    again = check(tmp_path, "-r", f"{path}:SeedZeroOnly", "-s", "24", "--runs", "1", "--scenes",
                  "rand10k", "--baseline", "cpu", "-S", str(seed))
    assert again.returncode == 1 and "seed" not in table_rows(again.stdout)["rand10k"][1]
    fixed = check(tmp_path, "-r", f"{path}:SeedZeroOnly", "-s", "24", "--runs", "1", "--scenes",
                  "rand10k", "--baseline", "cpu", "-S", "0")
    assert fixed.returncode == 0


LOADER = {
    "passwd.txt": "root:x:0:0:root:/root:/bin/bash\n",
    "interrupts.py": "raise KeyboardInterrupt\n",
    "exits.py": "import sys\nsys.exit(0)\n",
    "aborts.py": "import os\nos.abort()\n",
    "values.py": "X = 3\nclass NoMethods:\n    pass\n",
    "patches.py": "import circle_render.course as c\nc.compare = None\n",
}


@pytest.mark.parametrize("spec,message", [
    ("/etc/passwd:X", "'/etc/passwd' is not a Python file (.py)"),
    ("passwd.txt:X", "'passwd.txt' is not a Python file (.py)"),
    (".:X", "expected a built-in name"),
    ("missing.py:X", "no such file 'missing.py'"),
    ("interrupts.py:X", "importing it raised KeyboardInterrupt"),
    ("exits.py:X", "importing 'exits.py' called sys.exit"),
    ("aborts.py:X", "importing it failed: the renderer's process was killed by SIGABRT"),
    ("values.py:Missing", "'values.py' has no 'Missing'"),
    ("values.py:X", "'X' is 'int' data, not a class"),
    ("values.py:NoMethods", "it lacks load, clear, advance, render, get_image"),
    ("values.py:", "expected a built-in name, module:Class or path/to/file.py:Class"),
    (":X", "expected a built-in name"),
    ("no such:X", "expected a built-in name"),
    ("values.py:1X", "expected a built-in name"),
])
@pytest.mark.parametrize("option", ["-r", "--baseline"])
def test_a_renderer_that_cannot_load_is_one_line_exit_2(tmp_path, spec, message, option):
    for name, text in LOADER.items():
        (tmp_path / name).write_text(text)
    args = ["-r", "cpu", "--baseline", spec] if option == "--baseline" else ["-r", spec]
    p = check(tmp_path, *args, "-s", "16", "--runs", "1", "--scenes", "rgb")
    assert p.returncode == 2, p.stderr
    assert message in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_a_plugin_patching_the_checker_at_import_cannot_reach_it(tmp_path):
    (tmp_path / "patches.py").write_text(LOADER["patches.py"] + HOSTILE.replace("\n    ", "\n"))
    p = check(tmp_path, "-r", "patches.py:Patches", *SCENES)
    assert p.returncode == 1 and table_rows(p.stdout)["rgb"][1].endswith("(F)")


def test_ctrl_c_is_the_users_and_stops_the_check(tmp_path):
    import os
    import signal
    import subprocess
    import sys

    from helpers import ROOT
    path = plugin(tmp_path, HOSTILE)
    p = subprocess.Popen([sys.executable, "-m", "circle_render", "check", "-r", f"{path}:Hangs", *SCENES],
                         cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT), "CIRCLE_RENDER_CACHE": str(tmp_path / "c")},
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    for line in p.stderr:                                   # wait until the worker is drawing rgb
        if "rgb: correctness" in line:
            break
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130 and "interrupted" in err and "Traceback" not in err
